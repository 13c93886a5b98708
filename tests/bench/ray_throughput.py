"""Trials per minute of `null` trials on hello: the local executor against Ray with one node and with two.

    python tests/bench/ray_throughput.py [--trials N] [--slots S] [--json OUT]

Every executor runs on this machine's one Docker engine, so the ratios show Ray's own
overhead (shipping, node checks, task scheduling, files sent back and checked), not more
hardware. Each figure is one `bench run hello --agent null --trials N` (null FAILs by
design: the exit status 1 is expected), timed from the command's start to its end,
with the same trials at once in every case: --concurrency S locally; S `docker` units on
the one Ray node; S over the two nodes (S/2 each, rounded up, capped by --concurrency S).
The cluster (tests/ray_cluster.py) is started before and stopped after its runs, and its
start is not counted. A report, not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.ray_cluster import RayCluster  # noqa: E402


def timed_run(results: Path, label: str, trials: int, slots: int, extra: list[str]) -> float:
    """Seconds one `bench run` of ``trials`` null trials of hello takes, start to end."""
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "null", "--trials", str(trials),
               "--concurrency", str(slots), "--label", label, "--results", str(results), *extra]
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    took = time.monotonic() - started
    if done.returncode != 1:  # null fails every trial; anything else is a broken run, not a figure
        raise SystemExit(f"{label}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return took


def on_cluster(results: Path, label: str, trials: int, slots: int, nodes: int) -> float:
    cluster = RayCluster()
    try:
        per_node = -(-slots // nodes)
        for n in range(nodes):
            cluster.start(f"n{n}", docker=per_node)
        return timed_run(results, label, trials, slots, ["--executor", "ray", "--ray-address", cluster.address])
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--slots", type=int, default=2, help="trials at once, the same for every executor")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("BENCH_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-config-"))
    results = Path(tempfile.mkdtemp(prefix="bench-ray-throughput-"))
    seconds = {
        "local": timed_run(results, "local", args.trials, args.slots, []),
        "ray, 1 node": on_cluster(results, "ray1", args.trials, args.slots, 1),
        "ray, 2 nodes": on_cluster(results, "ray2", args.trials, args.slots, 2),
    }
    figures = {name: {"seconds": round(took, 1), "trials_per_minute": round(args.trials * 60 / took, 1),
                      "vs_local": round(seconds["local"] / took, 2)} for name, took in seconds.items()}
    print(f"{args.trials} null trials of hello, {args.slots} at a time, one Docker engine:")
    for name, figure in figures.items():
        print(f"  {name:13} {figure['seconds']:7.1f} s  {figure['trials_per_minute']:6.1f} trials/min  "
              f"x{figure['vs_local']:.2f} of local")
    if args.json:
        args.json.write_text(json.dumps({"trials": args.trials, "slots": args.slots, "figures": figures}, indent=2))


if __name__ == "__main__":
    main()

"""Throughput of `null` trials of `hello` at concurrency 1 and 2, against the raw floor.

For each concurrency K, in the same process and run: N trials through the harness
(`bench.run.execute`, K workers) and N iterations of the raw Docker SDK operations
of one trial (the `Floor` of overhead.py) on K threads. Reports trials per minute
and the ratio harness / floor. A report, not a test: nothing fails on timing.

    python tests/bench/throughput.py [--trials 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import Floor  # noqa: E402  (a sibling script, not a package)

from bench.harness import prepare  # noqa: E402
from bench.paths import Project, find_root  # noqa: E402
from bench.run import RunRequest, execute  # noqa: E402


def floor_rate(floor: Floor, trials: int, workers: int) -> float:
    """Trials per minute of the raw operations on `workers` threads."""
    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda _: floor.once(), range(trials)))
    return trials * 60 / (time.perf_counter() - started)


def harness_rate(project: Project, results: Path, trials: int, workers: int) -> float:
    request = RunRequest(cases=["hello"], agent="null", trials=trials, label=f"k{workers}-{time.time_ns()}",
                         results=results, concurrency=workers, command_line=["throughput.py"])
    started = time.perf_counter()
    outcome = execute(request, project, say=lambda line: None)
    elapsed = time.perf_counter() - started
    verdicts = {r.verdict.value for r in outcome.results}
    if verdicts != {"FAIL"} or len(outcome.results) != trials:
        raise RuntimeError(f"expected {trials} FAIL trials, got {verdicts} x {len(outcome.results)}")
    return trials * 60 / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    project = Project(find_root(Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as tmp:
        floor = Floor(docker.from_env(), project, prepare(Path(tmp) / "wheel").wheel)
        try:
            rows = []
            for workers in (1, 2):
                floor.once()  # warm-up, discarded
                base = floor_rate(floor, args.trials, workers)
                ours = harness_rate(project, Path(tmp) / "results", args.trials, workers)
                rows.append({"concurrency": workers, "floor_per_min": base, "harness_per_min": ours,
                             "ratio_floor_over_harness": base / ours})
        finally:
            floor.cleanup()
    print(f"{args.trials} null trials of hello per concurrency level")
    print(f"{'concurrency':>11} {'floor/min':>10} {'harness/min':>12} {'time ratio':>11}")
    for row in rows:
        print(f"{row['concurrency']:>11} {row['floor_per_min']:>10.1f} {row['harness_per_min']:>12.1f} "
              f"{row['ratio_floor_over_harness']:>10.2f}x")
    speedup = rows[1]["harness_per_min"] / rows[0]["harness_per_min"]
    print(f"harness speed-up from concurrency 2: {speedup:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"trials": args.trials, "rows": rows, "speedup": speedup}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark: every pinned image built cold on an empty Docker engine, then a second build.

    python tests/bench/image_build.py [--cold-downloads]

Starts an engine of its own on an empty data root (scripts/engine, needs root), times
`bench images build` there (every image from its pinned inputs), times a second build
(which must build nothing), and says whether every image came out with the lock's ID.
--cold-downloads also empties the download cache (a new user's first build); without it
the host's cache (files named by SHA-256) is used, as CI does. A report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def timed_build(env: dict[str, str]) -> tuple[float, str, str]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "bench.cli", "images", "build"], env=env, cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench images build failed: {done.stderr[-2000:]}")
    return time.monotonic() - started, done.stdout, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-downloads", action="store_true", help="start from an empty download cache too")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-build-bench-", dir="/var/tmp"))
    started = subprocess.run(["bash", str(ROOT / "scripts" / "engine"), "start", str(home / "engine")],
                             capture_output=True, text=True)
    if started.returncode != 0:
        sys.exit(started.stderr)
    address = started.stdout.strip().split("=", 1)[1]
    env = {**os.environ, "DOCKER_HOST": address, "PYTHONPATH": str(ROOT), "BENCH_ROOT": str(ROOT)}
    if args.cold_downloads:
        env["BENCH_INPUTS_CACHE"] = str(home / "inputs")
    try:
        cold, listing, _ = timed_build(env)
        again, _, log = timed_build(env)
    finally:
        subprocess.run(["bash", str(ROOT / "scripts" / "engine"), "stop", str(home / "engine")], check=False)
        shutil.rmtree(home, ignore_errors=True)
    lock = json.loads((ROOT / "provenance" / "images.lock.json").read_text())["images"]
    states = [line.split()[-1] for line in listing.splitlines() if line.split() and line.split()[0] in lock]
    print(f"cold build of {len(states)} images on an empty engine"
          f"{' and an empty download cache' if args.cold_downloads else ''}: {cold:.1f} s")
    print(f"second build: {again:.2f} s ({'built nothing' if 'building image' not in log else 'BUILT AGAIN'})")
    print(f"against the lock: {', '.join(sorted(set(states)))} ({states.count('locked')}/{len(states)} locked)")


if __name__ == "__main__":
    main()

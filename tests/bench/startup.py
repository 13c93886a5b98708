"""bench's own start-up: from launching `bench run` to its first trial starting, on a quiet machine.

    python tests/bench/startup.py [--runs N] [--json OUT]

Each run is a fresh process, `bench run hello --agent oracle` into a fresh label, as a
user types it; start-up is the first trial's recorded ``started_at`` minus the moment
the process was launched: Python starting, bench's imports, connecting to the engine,
resolving images and the lock, orphan cleanup, the harness wheel, the label's records.
Beside it, the same for a bare `python3 -c pass` and for importing bench's CLI, so
the figure reads against the interpreter's own cost. Target: under 0.5 s. A report,
not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def spawn(args: list[str]) -> float:
    began = time.time()
    subprocess.run(args, check=True, capture_output=True, cwd=ROOT)
    return time.time() - began


def one_run(results: Path, n: int) -> tuple[float, float]:
    """(start-up s, whole run s) of one `bench run hello --agent oracle`."""
    label = f"startup-{n}"
    began = time.time()
    subprocess.run([sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "oracle", "--label", label,
                    "--results", str(results)], check=True, capture_output=True, cwd=ROOT)
    took = time.time() - began
    result = json.loads(next((results / label).rglob("result.json")).read_text())
    started = datetime.fromisoformat(result["started_at"].replace("Z", "+00:00")).timestamp()
    if result["verdict"] != "PASS":
        raise SystemExit(f"hello's oracle gave {result['verdict']}: {result['reason']}")
    return started - began, took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    one_run(Path(tempfile.mkdtemp(prefix="bench-startup-")), 0)  # warm: images, the wheel's build cache
    python = [spawn([sys.executable, "-c", "pass"]) for _ in range(args.runs)]
    imports = [spawn([sys.executable, "-c", "import bench.cli"]) for _ in range(args.runs)]
    results = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    runs = [one_run(results, n + 1) for n in range(args.runs)]
    startup = [s for s, _ in runs]
    for name, values in (("python3 -c pass", python), ("import bench.cli", imports), ("bench run: start-up", startup),
                         ("bench run: whole", [t for _, t in runs])):
        print(f"{name:22} median {statistics.median(values):.3f} s  (min {min(values):.3f}, max {max(values):.3f})")
    print(f"load average {os.getloadavg()[0]:.2f}; target: start-up under 0.5 s")
    if args.json:
        args.json.write_text(json.dumps({"python_s": python, "import_s": imports, "startup_s": startup,
                                         "run_s": [t for _, t in runs]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Signing and verification time for a label of 100 trials, against hashing the same bytes.

    python tests/bench/attest.py [--trials N] [--repeats R] [--json OUT]

One real trial is recorded first (`bench run hello --agent oracle`, on the local
engine, signing key in a temporary BENCH_CONFIG_DIR). The label of N trials is then
synthesized from it: trial-1 copied to trial-1..N with result.json's trial number
rewritten, each manifest rewritten, run.json asking for N trials and summary.json
recomputed, so the label is exactly one a run of N trials would leave and verifies
clean (but for the harness's dirty flag, when the checkout is dirty).

Measured, each the median of R repeats, in this process:
  baseline   SHA-256 of every file of the label (the bytes any check must read at least once)
  sign       bench.attest.sign_label: hash every file, build the statement, Ed25519 over its PAE, write
  integrity  bench.label_check.integrity: the signature, every file against the statement, the label's
             consistency (trial set, identities, summary recomputed, wheel)
  verify     bench.provenance.verify: integrity plus every trial's manifest, case and goldens hashes,
             image IDs on the engine and image sources

Reported as seconds and as ratios to the baseline. The target (DESIGN: verify of 100
trials under 2 s) is printed beside the figure. A report, not a test: it never fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TARGET_VERIFY_S = 2.0


def record_one(results: Path) -> Path:
    """A real oracle trial of hello: the folder every synthesized trial is copied from."""
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "oracle", "--label", "seed",
                    "--results", str(results)], env=env, check=True, capture_output=True, text=True, timeout=600)
    return results / "seed"


def synthesize(seed: Path, label: Path, trials: int) -> None:
    """Copy trial-1 to trial-1..N with its identity rewritten; run.json, manifests and summary to match."""
    from bench.models import RunRecord
    from bench.result_models import TrialResult
    from bench.paths import RunPaths
    from bench.record import write_manifest
    from bench.run import write_summary

    paths = RunPaths(label)
    shutil.copytree(seed / "harness", paths.harness_dir)
    run = RunRecord.model_validate_json((seed / "run.json").read_text())
    paths.run_record.write_text(run.model_copy(update={"label": label.name, "trials": trials})
                                .model_dump_json(indent=2) + "\n")
    source = RunPaths(seed).trial("hello", "default", 1)
    for n in range(1, trials + 1):
        trial = paths.trial("hello", "default", n)
        shutil.copytree(source.dir, trial.dir)
        result = TrialResult.model_validate_json(trial.result.read_text())
        trial.result.write_text(result.model_copy(update={"trial": n, "label": label.name})
                                .model_dump_json(indent=2) + "\n")
        write_manifest(trial)
    write_summary(paths, run.run_ids[0], [])


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(label: Path, repeats: int) -> dict:
    from bench.attest import attestable, sign_label
    from bench.hashing import sha256_file
    from bench.keys import load_or_create, trusted_keys
    from bench.label_check import integrity
    from bench.paths import Project, RunPaths
    from bench.provenance import verify

    paths, key, trusted = RunPaths(label), load_or_create(), trusted_keys()
    files = attestable(paths)
    figures = {
        "files": len(files), "bytes": sum(p.stat().st_size for p in files),
        "baseline_s": median_time(lambda: [sha256_file(p) for p in files], repeats),
        "sign_s": median_time(lambda: sign_label(paths, key, ["bench"], final=True), repeats),
        "integrity_s": median_time(lambda: integrity(paths, trusted), repeats),
        "verify_s": median_time(lambda: verify(label, Project(ROOT), trusted), repeats),
    }
    report = verify(label, Project(ROOT), trusted)
    figures["differences"] = sorted({d.what.split(" (")[0] for d in report.differences})
    figures["signature"] = report.signatures[str(paths.dir)]["status"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("BENCH_CONFIG_DIR", str(Path(tmp) / "config"))  # never the real home's key
        seed = record_one(Path(tmp) / "results")
        label = Path(tmp) / "results" / f"attest-{args.trials}"
        synthesize(seed, label, args.trials)
        figures = {"trials": args.trials, "repeats": args.repeats, **measure(label, args.repeats)}
    base = figures["baseline_s"]
    print(f"label of {args.trials} trials: {figures['files']} files, {figures['bytes'] / 1e6:.1f} MB; "
          f"signature {figures['signature']}; other findings: {figures['differences'] or 'none'}")
    print(f"baseline (sha256 of every file) {base:.3f} s")
    for name in ("sign", "integrity", "verify"):
        seconds = figures[f"{name}_s"]
        print(f"{name:9} {seconds:.3f} s  = {seconds / base:.1f}x baseline")
    print(f"target: verify under {TARGET_VERIFY_S:.0f} s — {'met' if figures['verify_s'] < TARGET_VERIFY_S else 'missed'}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()

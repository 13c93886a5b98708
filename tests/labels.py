"""Seal a synthetic label the way `bench run` leaves one: manifests, run.json, summary.json, signed.

Unit tests build trials through the pydantic models (tests/unit/test_compare.py);
compare and verify refuse a label that is not signed and consistent, so a test label
must be finished exactly as a run finishes it, with the key from BENCH_CONFIG_DIR
(conftest points it at a temporary folder, never the real home).
"""

from __future__ import annotations

from pathlib import Path

from bench.attest import sign_label
from bench.keys import load_or_create
from bench.models import ArmSpec, CaseInputs, Provenance, RunOptions, RunRecord
from bench.result_models import TrialResult
from bench.paths import RunPaths
from bench.record import write_manifest
from bench.run import write_summary

WHEEL_PREFIX = b"wheel "


def wheel_digest(name: str) -> str:
    """The SHA-256 a fake wheel called ``name`` has, so provenance, run.json and the file agree."""
    from bench.hashing import sha256_bytes

    return sha256_bytes(WHEEL_PREFIX + name.encode())


def seal(label: Path, wheel: str = "w1", run_id: str = "r") -> RunPaths:
    """Manifests, harness wheel, run.json and summary.json for the trials under ``label``, then sign it."""
    paths = RunPaths(label)
    cases: dict[str, dict[str, ArmSpec]] = {}
    plugins: dict[str, dict[str, str]] = {}  # case -> arm -> the first trial's packed plugin, as a run records it
    subjects: dict[str, dict[str, str]] = {}  # case -> arm -> the first trial's subject, when the arm declares one
    shared: dict[str, str] = {}  # case -> the subject of its arms without their own
    trials = 0
    for trial in paths.trials():
        result = TrialResult.model_validate_json(trial.result.read_text())
        provenance = Provenance.model_validate_json(trial.provenance.read_text()) if trial.provenance.is_file() else None
        own = provenance.arm_spec.subject if provenance and provenance.arm_spec else None
        cases.setdefault(result.case, {})[result.arm] = ArmSpec(name=result.arm, context=result.arm,
                                                                agent=result.agent, subject=own)
        if provenance and provenance.plugin:
            plugins.setdefault(result.case, {}).setdefault(result.arm, provenance.plugin.tarball_sha256)
        if provenance and provenance.subject:
            where = subjects.setdefault(result.case, {}) if own else shared
            where.setdefault(result.arm if own else result.case, provenance.subject.tarball_sha256)
        trials = max(trials, result.trial)
        write_manifest(trial)
    paths.harness_dir.mkdir(exist_ok=True)
    (paths.harness_dir / "hermetic_bench-0.1.0-py3-none-any.whl").write_bytes(WHEEL_PREFIX + wheel.encode())
    inputs = {case: CaseInputs(visible_hash="sha256:v1", goldens_hash="sha256:g", images={}, arms=list(arms.values()),
                               plugins=plugins.get(case, {}), subjects=subjects.get(case, {}),
                               subject_sha256=shared.get(case))
              for case, arms in cases.items()}
    run = RunRecord(label=paths.label, harness_version="0.1.0", wheel_sha256=wheel_digest(wheel),
                    options=RunOptions(agent="oracle"), arms=[], trials=trials, run_ids=[run_id], cases=inputs)
    paths.run_record.write_text(run.model_dump_json(indent=2) + "\n")
    write_summary(paths, run_id, [])
    sign_label(paths, load_or_create(), [run_id], final=True)
    return paths

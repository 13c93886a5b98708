"""The record phase: result.json, provenance.json, every credential redacted, then manifest.json.

Recording must never lose a trial nor end a run. If writing the full record fails,
``record`` falls back to a minimal, honest one: the verdict becomes ERROR (a result
without its provenance proves nothing and must be rerun), the reason says what broke
and what the verdict would have been, and anything that could not be redacted is
removed rather than kept.
"""

from __future__ import annotations

import shutil

from .assessment import settle
from .hashing import sha256_file
from .models import AgentRecord, ImageRecord, Manifest, Provenance, Verdict, utcnow
from .result_models import TrialResult
from .paths import TrialPaths
from .redact import redact_tree
from . import seat as seats


def record(run, trial, result: TrialResult, images: dict[str, ImageRecord], seat: dict[str, str] | None,
           secrets: dict[str, str]) -> TrialResult:
    """Write the whole record; on any failure, the minimal one. Returns what was written."""
    result = settle(result)  # ok follows the final verdict
    try:
        _full(run, trial, result, images, seat, secrets)
        return result
    except Exception as exc:  # a harness bug while recording: ERROR, never a lost trial
        return _minimal(trial.paths, result, secrets, f"{type(exc).__name__}: {exc}")


def _full(run, trial, result: TrialResult, images: dict[str, ImageRecord], seat: dict[str, str] | None,
          secrets: dict[str, str]) -> None:
    from .lock import reproducibility_level

    paths = trial.paths
    agent: AgentRecord = trial.agent.record()
    if trial.installed is not None:  # what the image carries, with the model the adapter names
        agent = trial.installed.model_copy(update={"model": agent.model})
    paths.result.write_text(result.model_dump_json(indent=2) + "\n")
    provenance = Provenance(
        harness=run.harness.record, case=trial.case_record, arm=trial.arm.name, arm_spec=trial.arm, lane=run.lane,
        images=images, agent=agent.model_copy(update={"model": agent.model or trial.arm.model}), engine=run.engine,
        limits=trial.limits, executor=run.executor, seat=seats.stamp(run.seat, seat), subject=trial.subject,
        plugin=trial.plugin.record if trial.plugin else None,
        skills=[skill.record for skill in trial.skills],
        command_line=run.command_line, timings=result.phases, recorded_at=utcnow(),
        reproducibility=reproducibility_level(images, run.project_root), lock=run.lock,
    )
    paths.provenance.write_text(provenance.model_dump_json(indent=2) + "\n")
    redact_tree(paths.dir, secrets)
    write_manifest(paths)


def _minimal(paths: TrialPaths, result: TrialResult, secrets: dict[str, str], why: str) -> TrialResult:
    was = result.verdict.value
    minimal = settle(result.model_copy(update={
        "verdict": Verdict.ERROR, "finished_at": result.finished_at or utcnow(),
        "reason": f"harness error while recording this trial ({why}); the verdict would have been {was}"}))
    try:
        redact_tree(paths.dir, secrets)
    except Exception:
        _keep_only_result(paths)
    paths.result.write_text(minimal.model_dump_json(indent=2) + "\n")
    try:
        write_manifest(paths)
    except Exception:
        pass  # verify-provenance names the missing manifest; the result itself is on disk
    return minimal


def _keep_only_result(paths: TrialPaths) -> None:
    """Redaction itself failed: keep nothing that might still hold a credential."""
    for path in paths.dir.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path != paths.result:
            path.unlink(missing_ok=True)


def write_manifest(paths: TrialPaths) -> Manifest:
    files = {
        path.relative_to(paths.dir).as_posix(): sha256_file(path)
        for path in sorted(paths.dir.rglob("*"))
        if path.is_file() and path != paths.manifest
    }
    manifest = Manifest(files=files)
    paths.manifest.write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest

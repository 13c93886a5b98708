"""Many trials: resolve everything once, run each trial, clean up exactly, summarize.

Order of work matters for honesty and for the user's time: every case, gate and
agent is validated before anything is built; images and the harness wheel are
resolved once per run; trials of different arms are interleaved so drift hits
every arm alike; and the ``finally`` removes every container carrying this run's
label, whatever happened.
"""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .agents import make_agent
from .cases import Case, load_case
from .compare import summarize_arm
from .engine import connect, engine_versions, remove_orphans, remove_run_containers
from .errors import EngineUnavailable, UsageError
from .harness import prepare
from .images import Images
from .models import CaseRecord, EngineRecord, Limits, Summary, TrialResult, Verdict, utcnow
from .paths import Project, RunPaths
from .trial import RunContext, TrialSpec, run_trial
from .trust import ca_bundle

Say = Callable[[str], None]


@dataclass
class RunRequest:
    cases: list[str]
    agent: str = "oracle"
    agent_cmd: str | None = None
    label: str | None = None
    trials: int = 1
    timeout_s: int | None = None
    results: Path = Path("results")
    ca_bundle: str | None = None
    command_line: list[str] = field(default_factory=lambda: list(sys.argv))


@dataclass
class RunOutcome:
    paths: RunPaths
    summary: Summary
    results: list[TrialResult]
    engine_lost: bool = False


def default_label() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def execute(request: RunRequest, project: Project, say: Say = print) -> RunOutcome:
    """Validate, resolve, run every trial, clean up, write the summary."""
    if request.trials < 1:
        raise UsageError("--trials must be at least 1")
    cases = [load_case(project, name) for name in request.cases]
    agent = make_agent(request.agent, request.agent_cmd)
    client = connect()
    for orphan in remove_orphans(client):
        say(f"removed containers left by interrupted run {orphan}")
    run_id = secrets.token_hex(6)
    paths = RunPaths((request.results / (request.label or default_label())).resolve())
    paths.dir.mkdir(parents=True, exist_ok=True)
    images = Images(client, project, ca_bundle(request.ca_bundle), log=say)
    harness = prepare(paths.harness_dir)
    context = RunContext(client, run_id, paths.label, harness, EngineRecord(*engine_versions(client)), request.command_line)
    results: list[TrialResult] = []
    engine_lost = False
    try:
        resolved = {case.id: _resolve_images(images, case) for case in cases}
        for case, arm, n in schedule(cases, request.trials):
            trial_paths = paths.trial(case.id, arm, n)
            if trial_paths.result.is_file() and _finished(trial_paths.result):
                say(f"{case.id}/{arm}/trial-{n}: already recorded, kept")
                continue
            spec = TrialSpec(case, arm, n, agent, dict(resolved[case.id]), _limits(case, request), trial_paths,
                             CaseRecord(id=case.id, visible_hash=case.visible_hash(), goldens_hash=case.goldens_hash()))
            result = run_trial(context, spec)
            results.append(result)
            say(_line(result))
            if result.verdict is Verdict.ERROR and "engine went away" in result.reason:
                engine_lost = True
                say(f"the Docker engine went away; stopping. Rerun with --label {paths.label} to continue.")
                break
    finally:
        _cleanup(client, run_id, say)
    summary = write_summary(paths, run_id, images.built)
    return RunOutcome(paths, summary, results, engine_lost)


def _resolve_images(images: Images, case: Case) -> dict:
    return {"agent": images.ensure(case.spec.image), "grader": images.ensure(case.grader_image)}


def schedule(cases: list[Case], trials: int) -> list[tuple[Case, str, int]]:
    """Trial n of every case x arm before trial n+1 of any: arms interleave, drift is shared."""
    return [(case, arm, n) for n in range(1, trials + 1) for case in cases for arm in case.spec.arms]


def _limits(case: Case, request: RunRequest) -> Limits:
    if request.timeout_s is None:
        return case.spec.limits
    return case.spec.limits.model_copy(update={"timeout_s": request.timeout_s})


def _finished(result_file: Path) -> bool:
    result = TrialResult.model_validate_json(result_file.read_text())
    return result.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCOMPLETE)


def _line(result: TrialResult) -> str:
    took = sum(result.phases.values())
    reason = f" — {result.reason}" if result.reason else ""
    return f"{result.case}/{result.arm}/trial-{result.trial}: {result.verdict.value} ({took:.1f} s){reason}"


def _cleanup(client, run_id: str, say: Say) -> None:
    try:
        remove_run_containers(client, run_id)
    except Exception:
        say(f"could not remove this run's containers now (engine unreachable); the next run removes them "
            f"(label bench.run={run_id}, owner pid {os.getpid()})")


def write_summary(paths: RunPaths, run_id: str, built: list[str]) -> Summary:
    """Per case x arm statistics over every result in the label (see compare.summarize_arm)."""
    groups: dict[tuple[str, str], list[TrialResult]] = {}
    for trial in paths.trials():
        result = TrialResult.model_validate_json(trial.result.read_text())
        groups.setdefault((result.case, result.arm), []).append(result)
    arms = [summarize_arm(case, arm, results) for (case, arm), results in sorted(groups.items())]
    summary = Summary(label=paths.label, run_id=run_id, created_at=utcnow(), images_built=built, arms=arms)
    paths.summary.write_text(summary.model_dump_json(indent=2) + "\n")
    return summary

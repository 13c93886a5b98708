"""`bench metrics LABEL`: how the agents worked, from the stored transcripts, per case x track x arm.

The checks say whether the work holds; these numbers say how the agent got there, which
is what a change to a subject's docs, diagnostics or skills is meant to move:

* **first-pass compliance** — did the agent's first compliance command after it first
  touched the sources (a Write/Edit-style tool call that was applied) pass? A
  compliance command is a shell command matching one of the case's declared patterns
  (gate.toml ``[metrics] compliance``, bench/metrics_spec.py); runs before the first
  edit check the scaffold, not the agent's work, and are not counted;
* **retries-to-green** — the failing compliance runs before the first passing one
  (0 when the first passed; none when no run passed);
* **teaching-error encounters** — tool results matching any declared teaching-error
  pattern (``[metrics] teaching_errors``), anywhere in the session;
* **per 1k generated lines** — failing compliance runs and teaching errors over the
  lines the agent wrote through edit tools (Claude Code's Write/Edit/MultiEdit/
  NotebookEdit; Codex does not report them, so its rates are blank). First-pass is a
  yes/no per trial and is not normalised.

A group's rates are ratios of its totals (events over lines), not means of per-trial
ratios, so a trial that wrote three lines cannot dominate. Task success is the trial's
own verdict, over PASS + FAIL.

Written to results/<label>/authoring-metrics.json. It is a derived view, like
report.html: not signed and not checked by verify-provenance (bench/attest.py leaves
it out), because it can be recomputed at any time from the signed transcripts; it
records each transcript's SHA-256 and the patterns it used, so anyone can recompute it
and compare. Patterns are read from the project's current goldens; a case whose
goldens hash differs from the one the trial recorded is named in ``notes``.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Callable

from pydantic import Field

from .agents.base import TRANSCRIPT_JSONL
from .cases import TRACK_SEP, Case, load_case
from .errors import CaseError, RecordError, UsageError
from .hashing import sha256_file
from .metrics_spec import TrackMetrics
from .models import SCHEMA_VERSION, Provenance, Record, Verdict, utcnow
from .paths import Project, RunPaths
from .readback import read_record, rerun_fix
from .result_models import TrialResult
from .transcript_actions import Steps, read_steps


class TrialAuthoring(Record):
    """One trial's counts; None where the transcript or the declared patterns cannot say."""

    case: str = Field(description="The case's name (the id without its track).")
    track: str | None
    arm: str
    trial: int
    verdict: Verdict
    transcript_sha256: str | None = Field(description="SHA-256 of the transcript.jsonl read; None: the trial has none.")
    format: str | None = Field(description="claude-code or codex: the events found; None: none of either.")
    generated_lines: int | None = Field(description="Lines written through edit tools; None: the format does not say.")
    touched_sources: bool = Field(description="Whether an edit tool call was applied at all.")
    compliance_runs: int | None = Field(description="Compliance commands after the first edit; None: no pattern declared.")
    first_pass: bool | None = Field(description="The first of them passed; None: there was none.")
    failing_runs: int | None = None
    retries_to_green: int | None = Field(None, description="Failing runs before the first passing one; None: none passed.")
    teaching_errors: int | None = Field(description="Tool results matching a teaching-error pattern; None: none declared.")
    teaching_by_pattern: dict[str, int] = Field(default_factory=dict, description="Pattern -> tool results it matched.")


class GroupAuthoring(Record):
    """One case x track x arm (or, with case None, one track x arm over every case): totals and rates."""

    case: str | None = Field(description="None in the per-track rollup.")
    track: str | None
    arm: str
    trials: int
    transcripts: int = Field(description="Trials with a readable transcript in a known format.")
    task_pass: int
    task_valid: int = Field(description="PASS + FAIL.")
    first_pass: int
    first_pass_of: int = Field(description="Trials whose first-pass is known (a compliance run after an edit).")
    first_pass_rate: float | None
    green: int = Field(description="Trials with a passing compliance run after an edit.")
    retries_to_green_mean: float | None = Field(description="Mean retries-to-green over the trials that got green.")
    failing_runs: int | None
    teaching_errors: int | None
    generated_lines: int | None = Field(description="Over the trials whose format reports lines.")
    failing_runs_per_kloc: float | None
    teaching_errors_per_kloc: float | None
    patterns: TrackMetrics | None = Field(None, description="The patterns used (per case; None in the rollup).")


class AuthoringMetrics(Record):
    """results/<label>/authoring-metrics.json (bench/authoring_metrics.py)."""

    schema_version: int = SCHEMA_VERSION
    label: str
    created_at: datetime
    groups: list[GroupAuthoring] = Field(description="Per case x track x arm.")
    tracks: list[GroupAuthoring] = Field(description="Per track x arm over every case (case None).")
    trials: list[TrialAuthoring]
    notes: list[str] = Field(default_factory=list, description="What limits the numbers (no patterns, changed goldens).")


def trial_counts(result: TrialResult, steps: Steps | None, patterns: TrackMetrics | None,
                 sha: str | None) -> TrialAuthoring:
    """The counts of one trial from its steps and its case's patterns (None: the case is gone)."""
    name, _, track = result.case.partition(TRACK_SEP)
    steps = steps or Steps(None, (), ())
    patterns = patterns if steps.format else None  # no transcript: nothing was seen, which is not "no run"
    compliance = [re.compile(p) for p in patterns.compliance] if patterns and patterns.compliance else None
    teaching = [re.compile(p) for p in patterns.teaching_errors] if patterns and patterns.teaching_errors else None
    edits = [s for s in steps.steps if s.kind == "edit" and s.ok]
    lines = None if steps.format is None or any(s.lines is None for s in edits) else sum(s.lines for s in edits)
    runs = _runs_after_first_edit(steps, compliance) if compliance else None
    green = runs.index(True) if runs and True in runs else None
    by_pattern = {p.pattern: sum(bool(p.search(text)) for text in steps.outputs) for p in teaching or []}
    return TrialAuthoring(
        case=name, track=track or None, arm=result.arm, trial=result.trial, verdict=result.verdict,
        transcript_sha256=sha, format=steps.format, generated_lines=lines, touched_sources=bool(edits),
        compliance_runs=None if runs is None else len(runs), first_pass=runs[0] if runs else None,
        failing_runs=None if runs is None else runs.count(False), retries_to_green=green,
        teaching_errors=None if teaching is None else sum(any(p.search(t) for p in teaching) for t in steps.outputs),
        teaching_by_pattern=by_pattern)


def _runs_after_first_edit(steps: Steps, compliance: list[re.Pattern]) -> list[bool]:
    """Pass/fail of every compliance command after the first applied edit, in order."""
    touched, runs = False, []
    for step in steps.steps:
        if step.kind == "edit" and step.ok:
            touched = True
        elif step.kind == "command" and touched and any(p.search(step.text) for p in compliance):
            runs.append(step.ok)
    return runs


def group(rows: list[TrialAuthoring], case: str | None, track: str | None, arm: str,
          patterns: TrackMetrics | None) -> GroupAuthoring:
    """Totals and rates of some trials; rates are ratios of totals."""
    known = [r for r in rows if r.first_pass is not None]
    greens = [r.retries_to_green for r in rows if r.retries_to_green is not None]
    with_lines = [r for r in rows if r.generated_lines is not None]
    lines = sum(r.generated_lines for r in with_lines) if with_lines else None
    failing = _total([r.failing_runs for r in rows])
    teaching = _total([r.teaching_errors for r in rows])
    return GroupAuthoring(
        case=case, track=track, arm=arm, trials=len(rows), transcripts=sum(r.format is not None for r in rows),
        task_pass=sum(r.verdict is Verdict.PASS for r in rows),
        task_valid=sum(r.verdict in (Verdict.PASS, Verdict.FAIL) for r in rows),
        first_pass=sum(bool(r.first_pass) for r in known), first_pass_of=len(known),
        first_pass_rate=sum(bool(r.first_pass) for r in known) / len(known) if known else None,
        green=len(greens), retries_to_green_mean=sum(greens) / len(greens) if greens else None,
        failing_runs=failing, teaching_errors=teaching, generated_lines=lines,
        failing_runs_per_kloc=_per_kloc(_total([r.failing_runs for r in with_lines]), lines),
        teaching_errors_per_kloc=_per_kloc(_total([r.teaching_errors for r in with_lines]), lines),
        patterns=patterns)


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _per_kloc(count: int | None, lines: int | None) -> float | None:
    return None if count is None or not lines else round(count * 1000 / lines, 3)


def measure(paths: RunPaths, project: Project, note: Callable[[str], None] = lambda line: None) -> AuthoringMetrics:
    """Every trial of the label, counted and grouped; written to authoring-metrics.json and returned."""
    trials = paths.trials()
    if not trials:
        raise UsageError(f"{paths.dir} holds no trial results (<case>/<arm>/trial-<n>/result.json) — pass a label folder")
    patterns: dict[str, TrackMetrics | None] = {}
    notes: list[str] = []
    rows = []
    for trial in trials:
        result = read_record(trial.result, TrialResult, rerun_fix(trial))
        if result.case not in patterns:
            patterns[result.case] = _patterns(project, result.case, trial.provenance, notes)
        transcript = trial.named(TRANSCRIPT_JSONL)
        readable = transcript.is_file() and not transcript.is_symlink()
        rows.append(trial_counts(result, read_steps(transcript) if readable else None, patterns[result.case],
                                 sha256_file(transcript) if readable else None))
    keys = sorted({(r.case, r.track or "", r.arm) for r in rows})
    groups = [group([r for r in rows if (r.case, r.track or "", r.arm) == key], key[0], key[1] or None, key[2],
                    patterns[key[0] + (TRACK_SEP + key[1] if key[1] else "")]) for key in keys]
    tracks = [group([r for r in rows if (r.track or "", r.arm) == key], None, key[0] or None, key[1], None)
              for key in sorted({(r.track or "", r.arm) for r in rows})]
    metrics = AuthoringMetrics(label=paths.label, created_at=utcnow(), groups=groups, tracks=tracks, trials=rows,
                               notes=notes)
    paths.authoring_metrics.write_text(metrics.model_dump_json(indent=2) + "\n")
    for line in notes:
        note(line)
    return metrics


def _patterns(project: Project, case_id: str, provenance: Path, notes: list[str]) -> TrackMetrics | None:
    """The case's patterns for its track from the project's gate.toml, with a note when they cannot be trusted."""
    try:
        case = load_case(project, case_id)
    except CaseError:
        raise  # a case or gate.toml that does not validate is the author's to fix (exit 2), not a note
    except UsageError as exc:  # the case (or its track) is no longer in this project
        notes.append(f"{case_id}: not in this project ({exc}); only lines are counted")
        return None
    check_tracks(case)
    found = case.gate.metrics.for_track(case.track)
    if not found.compliance and not found.teaching_errors:
        notes.append(f"{case_id}: {case.goldens_dir / 'gate.toml'} declares no [metrics] patterns; only lines are "
                     f"counted")
    try:
        recorded = read_record(provenance, Provenance, "").case.goldens_hash
    except (OSError, RecordError):
        recorded = None
    if recorded is not None and recorded != case.goldens_hash():
        notes.append(f"{case_id}: its goldens changed since the run; the patterns are today's gate.toml [metrics]")
    return found


def check_tracks(case: Case) -> None:
    """[metrics.tracks.<t>] must name tracks of case.toml, or its patterns would silently never apply."""
    unknown = sorted(set(case.gate.metrics.tracks) - set(case.spec.tracks))
    if unknown:
        raise CaseError(case.goldens_dir / "gate.toml", "metrics.tracks", f"{unknown} are not tracks of case.toml",
                        f"use one of: {', '.join(case.spec.tracks) or '(the case has no tracks)'}")

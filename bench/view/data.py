"""What the viewer reads from a results folder: labels, their trials, and whether each verifies.

Every number comes from the trials' result.json through bench/summary.py (the same
function summary.json and verify-provenance use), and every label carries its
integrity findings (bench/label_check.py): a page never shows a label's numbers
without saying, in a banner, what about that label failed to verify.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from ..authoring_metrics import AuthoringMetrics
from ..errors import RecordError
from ..label_check import integrity, trial_folders
from ..provenance import _load_provenance, check_manifest
from ..models import Verdict
from ..paths import RunPaths, TrialPaths
from ..readback import read_record, rerun_fix
from ..result_models import TrialResult
from ..stat_models import ArmSummary
from ..summary import summarize_arm


@dataclass
class Trial:
    """One trial folder and its result, with the page path the trial viewer writes it to."""

    paths: TrialPaths
    result: TrialResult

    @property
    def page(self) -> str:
        """Path of the trial page relative to the label's folder in the site."""
        r = self.result
        return f"{r.case}/{r.arm}/trial-{r.trial}.html"

    @property
    def wall_s(self) -> float:
        return round(sum(self.result.phases.values()), 3)


@dataclass
class Label:
    """A label as the viewer shows it: identity, trials, per case x arm statistics, verification."""

    paths: RunPaths
    trials: list[Trial]
    arms: list[ArmSummary]
    signature: str = "unsigned"
    findings: list[tuple[str, str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    authoring: AuthoringMetrics | None = None  # `bench metrics`' derived view, when it was written

    @property
    def name(self) -> str:
        return self.paths.label

    @property
    def verified(self) -> bool:
        return not self.findings and not self.unreadable

    @property
    def date(self) -> datetime | None:
        return min((t.result.started_at for t in self.trials), default=None)

    @property
    def cases(self) -> list[str]:
        return sorted({t.result.case for t in self.trials})

    @property
    def arm_names(self) -> list[str]:
        return sorted({t.result.arm for t in self.trials})

    @property
    def agents(self) -> list[str]:
        return sorted({t.result.agent for t in self.trials})

    @property
    def pass_rate(self) -> tuple[int, int]:
        """(PASS, PASS + FAIL) over every trial of the label."""
        passed = sum(t.result.verdict is Verdict.PASS for t in self.trials)
        return passed, sum(t.result.verdict in (Verdict.PASS, Verdict.FAIL) for t in self.trials)


def is_label(folder: Path) -> bool:
    """A label folder holds run.json or summary.json; anything else under results/ is not shown."""
    return folder.is_dir() and not folder.name.startswith(".") and \
        ((folder / "run.json").is_file() or (folder / "summary.json").is_file())


def find_labels(results: Path) -> list[Path]:
    """Label folders under ``results``, or ``results`` itself when it is one label."""
    if is_label(results):
        return [results]
    return sorted(p for p in results.iterdir() if is_label(p)) if results.is_dir() else []


def load_label(folder: Path, trusted: dict) -> Label:
    """Read every trial (an unreadable one is named, never dropped silently) and verify the label."""
    paths = RunPaths(folder)
    trials, unreadable = [], []
    for trial in paths.trials():
        try:
            trials.append(Trial(trial, read_record(trial.result, TrialResult, rerun_fix(trial))))
        except RecordError as exc:
            unreadable.append(f"{trial.dir.relative_to(folder).as_posix()}/result.json: {exc}")
    groups: dict[tuple[str, str], list[TrialResult]] = {}
    for t in trials:
        groups.setdefault((t.result.case, t.result.arm), []).append(t.result)
    arms = [summarize_arm(case, arm, group) for (case, arm), group in sorted(groups.items())]
    signature, findings = integrity(paths, trusted)
    findings += trial_findings(paths)
    return Label(paths, trials, arms, signature.status, findings, unreadable, _authoring(paths, unreadable))


def trial_findings(paths: RunPaths) -> list[tuple[str, str]]:
    """verify-provenance's per-trial checks that need nothing but the label: each file against its manifest, a
    provenance.json present and readable, a harness that was not dirty. The checks against this machine's
    project and engine (case and goldens hashes today, image IDs) are left to `bench verify-provenance`: the
    viewer also shows labels copied from elsewhere, away from their project."""
    found = []
    for trial in trial_folders(paths):
        where = trial.dir.relative_to(paths.dir).as_posix()
        problems = check_manifest(trial)
        provenance, problem = _load_provenance(trial)
        problems += [problem] if provenance is None else \
            ["harness was dirty (uncommitted changes) when recorded"] if provenance.harness.dirty else []
        found += [(where, what) for what in problems]
    return found


def _authoring(paths: RunPaths, unreadable: list[str]) -> AuthoringMetrics | None:
    """authoring-metrics.json (unsigned, recomputable from the signed transcripts); an unreadable one is named."""
    if not paths.authoring_metrics.is_file():
        return None
    try:
        return read_record(paths.authoring_metrics, AuthoringMetrics, f"rerun `bench metrics {paths.label}`")
    except RecordError as exc:
        unreadable.append(f"authoring-metrics.json: {exc}")
        return None


def shared_cases(a: Label, b: Label) -> bool:
    return bool(set(a.cases) & set(b.cases))


"""What `bench compare` compares, and whether it may: each side's trials loaded, then every drift between them.

A side is a label, or one arm of a label (``LABEL:ARM``), so two arms run
interleaved in one invocation (``--arm base=plugin:A --arm cand=plugin:B``) compare
with each other. Comparability is proven from provenance: for every case both sides
share, the case, fixture and goldens hashes, the grader image's content, the harness,
the seat class, the lane (where it ran and was graded: a check skipped on one lane is
graded on another) and the judge of its judge checks (model and endpoint: a score is the
judge's as much as the agent's) must agree. Within a side, one arm's trials must all
have had the same plugin checkout and the same subject tarball (by SHA-256): an arm
whose checkout changed between its trials measures two things at once.

Subject tarballs may differ between the sides, or between arms, when the difference is
declared: every tarball but at most one (the pin's) came from a source the user named
(an arm's ``subject:`` or --subject). That is the experiment, not drift, so it is
reported apart; the grader image, which for a case without a gate image of its own is
the project image with the subject installed, is then compared by what it was built
from besides the subject. Two different pins are undeclared drift.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from .errors import RecordError, UsageError
from .models import Provenance
from .result_models import TrialResult
from .paths import RunPaths
from .readback import read_record, rerun_fix

MISSING = "(no provenance.json)"


# --- loading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    result: TrialResult
    provenance: Provenance | None


Groups = dict[str, dict[str, list[Trial]]]
"""case -> arm -> trials in trial-number order."""


def resolve_label(name: str | Path, results: Path) -> RunPaths:
    """A label folder given as a path, or as a label name under the results folder."""
    for folder in (Path(name), results / name):
        if folder.is_dir():
            return RunPaths(folder.resolve())
    raise UsageError(
        f"{name}: no such label folder (looked at {Path(name)} and {results / name}) — pass a label "
        f"folder such as results/<label>, or a label name with --results set to the folder holding it"
    )


def load_side(text: str | Path, results: Path) -> tuple[RunPaths, Groups]:
    """One side of a comparison: a label (folder or name), or ``LABEL:ARM`` for one arm of it.

    A folder that exists wins over the ARM reading, so a path holding ':' still names a label.
    """
    label, arm = str(text), None
    if not (Path(label).is_dir() or (results / label).is_dir()) and ":" in label:
        label, arm = label.rsplit(":", 1)
    paths = resolve_label(label, results)
    groups = load_groups(paths)
    if arm is None:
        return paths, groups
    chosen = {case: {arm: arms[arm]} for case, arms in groups.items() if arm in arms}
    if not chosen:
        known = sorted({name for arms in groups.values() for name in arms})
        raise UsageError(f"{paths.dir} has no arm {arm!r}; its arms are {', '.join(known)} (LABEL:ARM picks one)")
    return paths, chosen


def load_groups(paths: RunPaths) -> Groups:
    """Every trial of a label, grouped; a missing or unreadable provenance.json becomes None (drift)."""
    trials = paths.trials()
    if not trials:
        raise UsageError(
            f"{paths.dir} holds no trial results (<case>/<arm>/trial-<n>/result.json) — "
            f"pass a label folder, not the results root or a single trial"
        )
    groups: Groups = {}
    for trial in trials:
        try:
            result = read_record(trial.result, TrialResult, rerun_fix(trial))
        except RecordError:
            continue  # unverified() names it, and the comparison is refused unless --allow-unsigned
        try:
            provenance = read_record(trial.provenance, Provenance, "")
        except (OSError, RecordError):
            provenance = None
        groups.setdefault(result.case, {}).setdefault(result.arm, []).append(Trial(result, provenance))
    for arms in groups.values():
        for trials_of_arm in arms.values():
            trials_of_arm.sort(key=lambda t: t.result.trial)
    return groups


# --- comparability ---------------------------------------------------------------------


class Drift(BaseModel):
    """One fact that differs between the sides (or within one), with every value seen."""

    where: str
    field: str
    baseline: list[str]
    candidate: list[str]

    def __str__(self) -> str:
        return f"{self.where}: {self.field} differs — baseline {', '.join(self.baseline)}; " \
               f"candidate {', '.join(self.candidate)}"


Getter = Callable[[Provenance], str]


def grader_content(provenance: Provenance) -> str:
    """The grader image as comparability sees it: by content digest, by ID only where none was recorded.

    Two machines build the same content under different image IDs (Dockerfile builds
    stamp times), and that grades alike; comparing IDs refused every cross-machine
    comparison (issue 12). Content that differs is drift, named by image and digest.
    """
    image = provenance.images.get("grader")
    if image is None:
        return "(none recorded)"
    return f"{image.name} {image.content_digest}" if image.content_digest else f"{image.name} id {image.id}"


CASE_FACTS: dict[str, Getter] = {
    "visible_hash": lambda p: p.case.visible_hash,
    "fixture_hash": lambda p: p.case.fixture_hash or "(no fixture)",
    "goldens_hash": lambda p: p.case.goldens_hash,
    "grader image content": grader_content,
    "seat class": lambda p: p.seat.get("class", "(none recorded)"),
    "lane": lambda p: p.lane,
}
HARNESS_FACTS: dict[str, Getter] = {
    "harness version": lambda p: p.harness.version,
    "harness wheel_sha256": lambda p: p.harness.wheel_sha256,
}


def grader_beside_subject(provenance: Provenance) -> str:
    """The grader image as it is when the subjects differ by declaration: a project image by what it was built
    from besides the subject (its ID differs with the subject, and that is the experiment), any other by content."""
    image = provenance.images.get("grader")
    if image is not None and image.built_on:
        return f"{image.name} built on {image.built_on}"
    return grader_content(provenance)


def subject_tarball(provenance: Provenance) -> str:
    return provenance.subject.tarball_sha256 if provenance.subject else "(no subject)"


def find_drift(base: Groups, cand: Groups, cases: list[str]) -> tuple[list[Drift], list[Drift]]:
    """(drift, declared): every comparability difference over the shared cases — per case, then the harness
    once, then any arm whose trials mixed plugin checkouts or subjects — and the subject differences the
    arms declared, which are the experiment."""
    drift, declared = [], []
    for case in cases:
        b, c = _flat(base, [case]), _flat(cand, [case])
        has_subject = any(t.provenance and t.provenance.subject for t in b + c)
        subjects = _differences(case, {"subject tarball": subject_tarball}, b, c) if has_subject else []
        asked = bool(subjects) and _declared(b + c)
        (declared if asked else drift).extend(subjects)
        facts = {**CASE_FACTS, "grader image content": grader_beside_subject} if asked else CASE_FACTS
        drift += _differences(case, facts, b, c)
        drift += _judge_drift(case, b, c)
    drift += _differences("harness", HARNESS_FACTS, _flat(base, cases), _flat(cand, cases))
    for side, groups in (("baseline", base), ("candidate", cand)):
        drift += _mixed(side, groups, cases, "plugin checkout", _plugin_tarball)
        drift += _mixed(side, groups, cases, "subject tarball", subject_tarball)
    return drift, declared


def _declared(trials: list[Trial]) -> bool:
    """Subjects differ as the user asked: one pin, and every tarball but at most one (the pin's) from a named source."""
    if not all(t.provenance and t.provenance.subject for t in trials):
        return False
    subjects = [t.provenance.subject for t in trials]
    pinned = {s.tarball_sha256 for s in subjects if s.source == "registry"}
    return len({s.name for s in subjects}) == 1 and len(pinned) <= 1


def _flat(groups: Groups, cases: list[str]) -> list[Trial]:
    return [trial for case in cases for trials in groups[case].values() for trial in trials]


def _differences(where: str, getters: dict[str, Getter], base: list[Trial], cand: list[Trial]) -> list[Drift]:
    """A fact drifts when the sides' values differ, a side mixes values, or provenance is missing."""
    drift = []
    for name, get in getters.items():
        seen = [sorted({get(t.provenance) if t.provenance else MISSING for t in side}) for side in (base, cand)]
        if seen[0] != seen[1] or any(len(values) > 1 or MISSING in values for values in seen):
            drift.append(Drift(where=where, field=name, baseline=seen[0], candidate=seen[1]))
    return drift


def _judge_drift(case: str, base: list[Trial], cand: list[Trial]) -> list[Drift]:
    """The judges that scored a case's judge checks (read from the results): the same on both sides, or drift."""
    seen = [sorted({f"{c.name}: {c.judge['model']} via {c.judge['endpoint']}" for t in side for c in t.result.checks
                    if c.judge}) for side in (base, cand)]
    return [Drift(where=case, field="judge", baseline=seen[0], candidate=seen[1])] if seen[0] != seen[1] else []


def _plugin_tarball(provenance: Provenance) -> str:
    return provenance.plugin.tarball_sha256 if provenance.plugin else "(no plugin)"


def _mixed(side: str, groups: Groups, cases: list[str], what: str, get: Getter) -> list[Drift]:
    """An arm whose trials got different checkouts or subjects (by packed SHA-256) measures two things at once."""
    drift = []
    for case in cases:
        for arm, trials in sorted(groups[case].items()):
            seen = sorted({get(t.provenance) for t in trials if t.provenance})  # a missing one is drift already
            if len(seen) > 1:
                mixed, other = (seen, ["(not mixed)"]) if side == "baseline" else (["(not mixed)"], seen)
                drift.append(Drift(where=f"{case}/{arm}", field=f"{what} within the {side}'s arm",
                                   baseline=mixed, candidate=other))
    return drift

"""Whole-label integrity: the label is checked as one body of evidence, not trial by trial.

A per-trial manifest cannot see a trial that was deleted, duplicated, swapped or
carried in from another label, nor a summary.json or harness wheel edited beside the
trials. So a label is checked against what it says about itself: its signed
attestation (bench/attest.py) lists every file; run.json names its cases, arms,
trials and run ids, so the set of trial folders and what each result.json says about
itself (label, run id, case, arm, agent, trial number) must agree with it, and each
provenance.json its case, arm, wheel, plugin checkout and subject tarball; each result.json's
expectation statuses, assessment_status and ok what its assessment.json gives; summary.json
must equal the one recomputed from the trials; the wheel must hash as recorded; and
each image's tag must still be the one images/ derives today.

Every finding is (where, what): a path relative to the label ("." for the label
itself) and one line saying what differs.
"""

from __future__ import annotations

from pathlib import Path

from .assessment import disagreements
from .attest import Signature, check_signature, compare_files, signer_mismatch
from .errors import BenchError, RecordError
from .hashing import sha256_file
from .images import Images
from .models import ImageRecord, Provenance, RunRecord
from .result_models import TrialResult
from .paths import RunPaths, TrialPaths
from .readback import read_record
from .stat_models import Summary
from .summary import summarize_arm

Finding = tuple[str, str]
FIX = "rerun the label to get evidence again"


def integrity(paths: RunPaths, trusted: dict) -> tuple[Signature, list[Finding]]:
    """The signature, every file against the signed statement, and the label's consistency with itself."""
    signature = check_signature(paths, trusted)
    found = [] if signature.status == "trusted" else [(".", signature.line)]
    found += signer_mismatch(paths, signature) + compare_files(paths, signature)
    return signature, found + consistency(paths)


def trial_folders(paths: RunPaths) -> list[TrialPaths]:
    """Every <case>/<arm>/trial-<n> folder, whatever it holds (a trial without its manifest is still a trial)."""
    return [TrialPaths(p) for p in sorted(paths.dir.glob("*/*/trial-*")) if p.is_dir()]


def consistency(paths: RunPaths) -> list[Finding]:
    if not paths.run_record.is_file():
        return [("run.json", "missing: nothing says which trials belong to this label")]
    try:
        run = read_record(paths.run_record, RunRecord, FIX)
    except RecordError as exc:
        return [("run.json", f"unreadable: {exc}")]
    found = [] if run.label == paths.label else \
        [(".", f"label folder is named {paths.label!r} but run.json says {run.label!r} (renamed or copied)")]
    found += _trial_set(paths, run)
    results = {}
    for trial in trial_folders(paths):
        result, problems = _identity(paths, run, trial)
        found += problems
        if result is not None:
            results[trial.dir] = result
            found += [(f"{_rel(paths, trial.dir)}/{name}", what) for name, what in disagreements(trial, result)]
    return found + _summary(paths, run, list(results.values())) + _wheel(paths, run)


def _rel(paths: RunPaths, path: Path) -> str:
    return path.relative_to(paths.dir).as_posix()


def _trial_set(paths: RunPaths, run: RunRecord) -> list[Finding]:
    """Trial folders against run.json: every case x arm x 1..trials, nothing else."""
    expected = {f"{case}/{arm.name}/trial-{n}" for case, inputs in run.cases.items() for arm in inputs.arms
                for n in range(1, run.trials + 1)}
    present = {_rel(paths, t.dir) for t in trial_folders(paths)}
    found = [(name, f"expected by run.json but not recorded (deleted, or the run stopped before it: "
                    f"`bench run ... --label {run.label}` runs it)") for name in sorted(expected - present)]
    found += [(name, f"not a trial of this label (run.json asks for trials 1..{run.trials} of its cases' arms): "
                     f"added or copied in") for name in sorted(present - expected)]
    return found


def _identity(paths: RunPaths, run: RunRecord, trial: TrialPaths) -> tuple[TrialResult | None, list[Finding]]:
    """What result.json and provenance.json say about themselves, against the folder and run.json."""
    where = _rel(paths, trial.dir)
    if not trial.result.is_file():
        return None, [(f"{where}/result.json", "missing")]
    try:
        result = read_record(trial.result, TrialResult, FIX)
    except RecordError as exc:
        return None, [(f"{where}/result.json", f"unreadable: {exc}")]
    case, arm, folder = where.split("/")
    arm_spec = next((a for a in run.cases[case].arms if a.name == arm), None) if case in run.cases else None
    claims = {"label": (result.label, paths.label), "case": (result.case, case), "arm": (result.arm, arm),
              "trial": (f"trial-{result.trial}", folder),
              "agent": (result.agent, arm_spec.agent if arm_spec else result.agent)}
    found = [(f"{where}/result.json", f"{name} {said!r} disagrees with {expected!r} (its folder or run.json): "
                                      f"moved, copied or edited") for name, (said, expected) in claims.items()
             if said != expected]
    if result.run_id not in run.run_ids:
        found.append((f"{where}/result.json", f"run_id {result.run_id!r} is none of run.json's runs {run.run_ids}: "
                                              f"carried in from another run"))
    return result, found + _provenance_identity(where, run, trial, case, arm)


def _provenance_identity(where: str, run: RunRecord, trial: TrialPaths, case: str, arm: str) -> list[Finding]:
    try:
        provenance = read_record(trial.provenance, Provenance, FIX)
    except (OSError, RecordError):
        return []  # verify names a missing or unreadable provenance.json per trial
    inputs = run.cases.get(case)
    plugin = inputs.plugins.get(arm) if inputs else None
    subject = inputs.subjects.get(arm, inputs.subject_sha256) if inputs else None
    claims = {"case.id": (provenance.case.id, case), "arm": (provenance.arm, arm),
              "harness.wheel_sha256": (provenance.harness.wheel_sha256, run.wheel_sha256),
              "plugin.tarball_sha256": (provenance.plugin.tarball_sha256 if provenance.plugin else None, plugin),
              "subject.tarball_sha256": (provenance.subject.tarball_sha256 if provenance.subject else None, subject)}
    return [(f"{where}/provenance.json", f"{name} {said!r} disagrees with {expected!r} (its folder or run.json)")
            for name, (said, expected) in claims.items() if said != expected]


def _summary(paths: RunPaths, run: RunRecord, results: list[TrialResult]) -> list[Finding]:
    """summary.json must be exactly what the trials give, since the report draws from it."""
    if not paths.summary.is_file():
        return [("summary.json", "missing (the run did not finish; resuming the label writes it)")]
    try:
        summary = read_record(paths.summary, Summary, FIX)
    except RecordError as exc:
        return [("summary.json", f"unreadable: {exc}")]
    groups: dict[tuple[str, str], list[TrialResult]] = {}
    for result in results:  # in folder order, as write_summary reads them
        groups.setdefault((result.case, result.arm), []).append(result)
    again = [summarize_arm(case, arm, group).model_dump(mode="json") for (case, arm), group in sorted(groups.items())]
    recorded = [arm.model_dump(mode="json") for arm in summary.arms]
    found = [] if summary.label == paths.label else [("summary.json", f"label {summary.label!r} is not {paths.label!r}")]
    if recorded != again:
        where = next((f"{a['case']}/{a['arm']}" for a, b in zip(recorded, again) if a != b), "the list of case x arm")
        found.append(("summary.json", f"differs from the summary recomputed from the trials' result.json "
                                      f"(first at {where}): edited after the run"))
    return found


def _wheel(paths: RunPaths, run: RunRecord) -> list[Finding]:
    wheels = sorted(paths.harness_dir.glob("*")) if paths.harness_dir.is_dir() else []
    if not wheels:
        return [("harness", "no harness wheel: the grading code cannot be identified")]
    return [(_rel(paths, wheel), f"SHA-256 {digest} is not run.json's wheel_sha256 {run.wheel_sha256}")
            for wheel in wheels if (digest := sha256_file(wheel)) != run.wheel_sha256]


# --- image sources --------------------------------------------------------------------


class _Unresolved(BenchError):
    pass


class SourceTags(Images):
    """Image tags as images/ derives them today, resolving parents on the engine and building nothing."""

    def ensure(self, name: str, force: bool = False) -> ImageRecord:
        tag = self.tag(name)
        image = self.find(tag)
        if image is None:
            raise _Unresolved(f"its parent {name}'s source changed too (no image {tag} built from it yet)")
        return ImageRecord(name=name, tag=tag, id=image.id)


def image_source_drift(tags: SourceTags, image: ImageRecord) -> str | None:
    """Whether images/<name> (or a parent) changed since the recorded tag was built from it."""
    if not (tags.project.image_dir(image.name) / "image.toml").is_file() or \
            not image.tag.startswith(f"bench/{image.name}:"):
        return None  # a subject's project image or an agent layer: identified by its own recorded inputs
    try:
        now = tags.tag(image.name)
    except _Unresolved as exc:
        return f"images/{image.name} source changed since {image.tag} was built: {exc}"
    if now != image.tag:
        return f"images/{image.name} source changed since {image.tag} was built (it now gives {now})"
    return None

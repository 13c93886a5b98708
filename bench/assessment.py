"""Operator assessments: semantic expectations a person scores beside the verdict, never in it.

A gate's checks decide what a machine can observe. Whether the work materially
demonstrates an idea, or avoids a bad one, takes a person (seed 002, tubeless), so a
gate may list ``expectations`` (bench/gatespec.py), every trial records them
``unscored`` (``unscored``), and `bench assess` attaches an operator's scoring later:

* it changes nothing the agent produced: workspace, transcript, checks and verdict stay
  byte for byte; only result.json's expectations, assessment_status and ok follow the
  new assessment.json, which says who scored and when;
* entries name expectations by the exact category and text the trial recorded, so a
  scoring written for one wording can never land on another;
* it signs only over a label that verifies, so an assessment never launders a tampered
  trial; and verify-provenance recomputes result.json's statuses from assessment.json
  (``disagreements``), so an edit of either is named even under a valid signature.
"""

from __future__ import annotations

import getpass
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from .errors import CaseError, RecordError, UsageError
from .gatespec import Category, GateSpec
from .models import SCHEMA_VERSION, Record, Strict, Verdict, utcnow
from .paths import RunPaths, TrialPaths
from .readback import read_record
from .result_models import AssessmentStatus, ExpectationResult, TrialResult

FIX = "the trial's assessment was changed after it was signed; assess the trial again from the operator's file"


class Entry(Strict):
    """One scored expectation, in the seed's shape (category, expectation, status, evidence)."""

    category: Category
    expectation: str = Field(description="The expectation's exact text, as the trial's result.json records it.")
    status: Literal["pass", "fail"] = Field(description="For mustAvoid, pass means the behaviour was avoided.")
    evidence: str = Field("", description="What the operator saw, in a line or two.")


class OperatorFile(Strict):
    """The file an operator writes and hands to `bench assess` (seed 002's assessment.json)."""

    schemaVersion: Literal[1]
    caseId: str = Field(description="The case the trial ran; must equal the trial's.")
    expectations: list[Entry] = Field(description="Any of the case's expectations; the rest stay unscored.")


class Assessment(Record):
    """results/<label>/<case>/<arm>/trial-<n>/assessment.json: the operator's entries, who scored them and when."""

    schema_version: int = SCHEMA_VERSION
    case: str
    assessed_by: str = Field(description="`bench assess --by`, else the operator's login name.")
    assessed_at: datetime = Field(description="UTC.")
    expectations: list[Entry]


# --- deriving a result's assessment fields ---------------------------------------------


def unscored(gate: GateSpec) -> list[ExpectationResult]:
    """The gate's expectations as a fresh trial records them. Call it wherever a TrialResult is made."""
    return [ExpectationResult(category=e.category, text=e.text) for e in gate.expectations]


def status_of(expectations: list[ExpectationResult]) -> AssessmentStatus:
    statuses = [e.status for e in expectations]
    if not statuses:
        return "none"
    if "fail" in statuses:
        return "fail"
    if all(s == "unscored" for s in statuses):
        return "unscored"
    return "partial" if "unscored" in statuses else "pass"


def settle(result: TrialResult) -> TrialResult:
    """``result`` with assessment_status and ok derived from its expectations and verdict: call before writing.

    Both are derived, so they are set only here: a verdict changed after the result was
    made (ERROR while recording) cannot leave a stale ok behind.
    """
    status = status_of(result.expectations)
    return result.model_copy(update={"assessment_status": status,
                                     "ok": result.verdict is Verdict.PASS and status != "fail"})


def scored(recorded: list[ExpectationResult], entries: list[Entry]) -> list[ExpectationResult]:
    """``recorded`` with each entry's status and evidence; expectations no entry names stay unscored."""
    by_key = {(e.category, e.expectation): e for e in entries}
    out = []
    for item in recorded:
        entry = by_key.get((item.category, item.text))
        out.append(item.model_copy(update={"status": entry.status, "evidence": entry.evidence} if entry
                                   else {"status": "unscored", "evidence": ""}))
    return out


def problems(recorded: list[ExpectationResult], entries: list[Entry]) -> list[tuple[int, str]]:
    """(entry index, what is wrong) for every entry that names no recorded expectation or repeats one."""
    known = {(e.category, e.text) for e in recorded}
    seen: set[tuple[str, str]] = set()
    found = []
    for index, entry in enumerate(entries):
        key = (entry.category, entry.expectation)
        if key in seen:
            found.append((index, f"scores {entry.category} {entry.expectation!r} a second time"))
        elif key not in known:
            same_text = next((e.category for e in recorded if e.text == entry.expectation), None)
            found.append((index, f"{entry.expectation!r} is a {same_text}, not a {entry.category}" if same_text
                          else f"{entry.category} {entry.expectation!r} is not one of the case's expectations"))
        seen.add(key)
    return found


def listing(recorded: list[ExpectationResult]) -> str:
    return "; ".join(f"{e.category} {e.text!r}" for e in recorded) or "none (its gate lists no expectations)"


# --- bench assess -----------------------------------------------------------------------


@dataclass(frozen=True)
class Assessed:
    trial: TrialPaths
    result: TrialResult
    record: Assessment
    replaced: Assessment | None  # the assessment this one replaced, if the trial had one

    def lines(self) -> list[str]:
        rows = [f"{e.category:15} {e.status:8} {e.text}" for e in self.result.expectations]
        if self.replaced:
            rows.append(f"replaced the assessment by {self.replaced.assessed_by} at "
                        f"{self.replaced.assessed_at.isoformat()}")
        r = self.result
        rows.append(f"{r.case}/{r.arm}/trial-{r.trial}: verdict {r.verdict.value}, assessment {r.assessment_status}, "
                    f"ok {str(r.ok).lower()}")
        return rows


def operator() -> str:
    """Who is assessing when --by is not given: the login name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        raise UsageError("cannot tell who is assessing (no login name) — pass --by NAME") from None


def assess(trial_dir: Path, source: Path, by: str, trusted: dict) -> Assessed:
    """Score ``trial_dir``'s expectations from the operator's ``source`` file, record it, re-sign the label.

    Raises UsageError (exit 2), changing nothing, for a folder that is not a trial, a
    label that does not verify, or a file that does not match the trial's expectations.
    """
    from .attest import sign_label
    from .keys import load_or_create
    from .models import RunRecord
    from .record import write_manifest

    if not by.strip():
        raise UsageError("--by is empty — name who assessed the trial")
    trial, label = locate(trial_dir)
    key = load_or_create()  # before the trust check, so your own key is one a first-time user trusts
    complete, result = _verified(trial, label, trusted)
    given = read_operator_file(source)
    if given.caseId != result.case:
        raise CaseError(source, "caseId", f"{given.caseId!r} is not the trial's case {result.case!r}",
                        f"assess a trial of {given.caseId}, or write caseId {result.case!r}")
    wrong = problems(result.expectations, given.expectations)
    if wrong:
        index, problem = wrong[0]
        raise CaseError(source, f"expectations.{index}", problem,
                        f"name one of {result.case}'s expectations exactly: {listing(result.expectations)}")
    replaced = read_record(trial.assessment, Assessment, FIX) if trial.assessment.is_file() else None
    record = Assessment(case=result.case, assessed_by=by, assessed_at=utcnow(), expectations=given.expectations)
    result = settle(result.model_copy(update={"expectations": scored(result.expectations, given.expectations)}))
    trial.assessment.write_text(record.model_dump_json(indent=2) + "\n")
    trial.result.write_text(result.model_dump_json(indent=2) + "\n")
    write_manifest(trial)
    run = read_record(label.run_record, RunRecord, FIX)
    sign_label(label, key, run.run_ids, final=complete)
    return Assessed(trial, result, record, replaced)


def locate(trial_dir: Path) -> tuple[TrialPaths, RunPaths]:
    """The trial and its label, or UsageError: a trial lies at <label>/<case>/<arm>/trial-<n>."""
    folder = trial_dir.resolve()
    trial = TrialPaths(folder)
    label = RunPaths(folder.parents[2]) if len(folder.parents) > 2 else None
    if not (folder.name.startswith("trial-") and trial.result.is_file() and label and label.run_record.is_file()):
        raise UsageError(f"{trial_dir} is not a trial folder (results/<label>/<case>/<arm>/trial-<n> holding "
                         f"result.json, in a label with run.json) — pass one")
    return trial, label


def _verified(trial: TrialPaths, label: RunPaths, trusted: dict) -> tuple[bool, TrialResult]:
    """(whether the label's statement was final, the trial's result), once the label verifies as a whole."""
    from .label_check import integrity
    from .provenance import check_manifest

    signature, found = integrity(label, trusted)
    where = trial.dir.relative_to(label.dir).as_posix()
    found += [(where, what) for what in check_manifest(trial)]
    if found:
        first = "; ".join(f"{w}: {what}" for w, what in found[:2])
        raise UsageError(f"refusing to assess {trial.dir}: its label does not verify ({len(found)} difference(s): "
                         f"{first}) — `bench verify-provenance {label.dir}` lists them; an assessment is signed "
                         f"only over evidence that verifies")
    complete = bool(signature.statement["predicate"]["buildDefinition"]["internalParameters"]["complete"])
    return complete, read_record(trial.result, TrialResult, FIX)


def read_operator_file(path: Path) -> OperatorFile:
    """The operator's file, or one CaseError naming the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the assessment ({exc}) — pass a UTF-8 JSON file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaseError(path, "(whole file)", f"not valid JSON ({exc.msg} at line {exc.lineno})",
                        "write it as the README's example") from None
    try:
        return OperatorFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(whole file)"
        found = "" if error["type"] == "missing" else f" (found {error.get('input')!r:.60})"
        raise CaseError(path, field, f"{error['msg']}{found}", "see provenance/schema/assessment-input.schema.json") \
            from None


# --- verify-provenance -------------------------------------------------------------------


def disagreements(trial: TrialPaths, result: TrialResult) -> list[tuple[str, str]]:
    """(file in the trial, what differs): result.json's expectation fields recomputed from assessment.json.

    Without assessment.json every expectation must be unscored. Whatever the signature
    says, a result.json whose scoring its assessment.json does not give is named.
    """
    entries, found = [], []
    source = trial.assessment.name if trial.assessment.is_file() else "no assessment.json (nothing scored)"
    if trial.assessment.is_file():
        try:
            record = read_record(trial.assessment, Assessment, FIX)
        except RecordError as exc:
            return [(trial.assessment.name, f"unreadable: {exc}")]
        entries = record.expectations
        if record.case != result.case:
            found.append((trial.assessment.name, f"case {record.case!r} is not result.json's {result.case!r}: "
                                                 f"carried in from another trial"))
        found += [(trial.assessment.name, f"expectations[{index}]: {problem}")
                  for index, problem in problems(result.expectations, entries)]
    again = settle(result.model_copy(update={"expectations": scored(result.expectations, entries)}))
    for index, (said, due) in enumerate(zip(result.expectations, again.expectations)):
        if (said.status, said.evidence) != (due.status, due.evidence):
            what = f"status {said.status!r} disagrees with {due.status!r}" if said.status != due.status else \
                f"evidence {said.evidence!r:.60} disagrees with {due.evidence!r:.60}"
            found.append((trial.result.name, f"expectations[{index}] ({said.category} {said.text!r}): {what} "
                                             f"from {source}"))
    for name in ("assessment_status", "ok"):
        if getattr(result, name) != getattr(again, name):
            found.append((trial.result.name, f"{name} {getattr(result, name)!r} disagrees with "
                                             f"{getattr(again, name)!r}, derived from its verdict and {source}"))
    return found

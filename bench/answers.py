"""Reference answers: a case's gate, itself tested by answers whose verdict is known.

A gate is code, and code changes. So a case may ship answers under its goldens::

    goldens/<case>/answers/<name>/
      answer.toml        expect = "PASS" | "FAIL"; optional reason (a regex), assessment, expect_ok
      submission/        the folder graded, as `bench grade CASE submission/` grades it
      assessment.json    optional: an operator's scoring (bench/assessment.py), applied after grading

`bench cases check-answers` grades every answer through `bench grade`'s pipeline
(bench/external.py) into one label, so the evidence verifies and compares like any run,
and fails when an answer does not give its expected verdict. Answers are withheld like
the rest of goldens/: no agent sees them, and no check may name them as withheld files
(bench/gatespec.py), since a grader that read them could grade by them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from pydantic import Field, field_validator, model_validator

from .cases import Case, case_ids as expand_ids, load_case, known_cases, raise_first, read_toml
from .errors import CaseError, UsageError
from .models import NAME, Strict, Verdict
from .paths import Project
from .result_models import TrialResult
from .run import RunOutcome

ANSWERS = "answers"
SUBMISSION = "submission"


class AnswerSpec(Strict):
    """goldens/<case>/answers/<name>/answer.toml: what grading this answer must give."""

    expect: Literal["PASS", "FAIL"] = Field(description="The verdict the gate must give this answer.")
    reason: str | None = Field(
        None, description="A regular expression the verdict's reason must match (searched), so a FAIL answer "
        "fails for the reason it was written for, not any other.")
    assessment: str | None = Field(
        None, description="An operator's assessment.json, a file in this answer's folder, applied to the graded "
        "trial as `bench assess` applies it.")
    expect_ok: bool | None = Field(
        None, description="The combined ok the assessed answer must have (PASS and no assessed expectation "
        "failed); needs `assessment`.")

    @field_validator("reason")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @field_validator("assessment")
    @classmethod
    def _plain(cls, value: str | None) -> str | None:
        if value is not None and (not value or "/" in value or value in (".", "..")):
            raise ValueError(f"{value!r} is not a file name in the answer's folder")
        return value

    @model_validator(mode="after")
    def _ok_needs_assessment(self) -> "AnswerSpec":
        if self.expect_ok is not None and self.assessment is None:
            raise ValueError("expect_ok needs `assessment`: without one, ok is just the verdict")
        return self


@dataclass(frozen=True)
class Answer:
    case: Case
    name: str
    dir: Path
    spec: AnswerSpec

    @property
    def submission(self) -> Path:
        return self.dir / SUBMISSION

    @property
    def assessment(self) -> Path | None:
        return self.dir / self.spec.assessment if self.spec.assessment else None


def load_answers(case: Case) -> list[Answer]:
    """The case's answers, each validated (answer.toml, its submission folder, its assessment); [] for none."""
    return [_answer(case, folder) for folder in _folders(case)]


def answer_problems(case: Case) -> list[CaseError]:
    """Every problem of every answer of the case, for `bench cases validate`."""
    try:
        folders = _folders(case)
    except CaseError as exc:
        return [exc]
    return [problem for folder in folders for problem in _read_answer(case, folder)[1]]


def _folders(case: Case) -> list[Path]:
    root = case.goldens_dir / ANSWERS
    if not root.exists():
        return []
    if not root.is_dir():
        raise CaseError(root, f"{ANSWERS}/", "is not a folder", "make it a folder of answers/<name>/")
    return sorted(root.iterdir())


def _answer(case: Case, folder: Path) -> Answer:
    answer, problems = _read_answer(case, folder)
    raise_first(problems)
    return answer


def _read_answer(case: Case, folder: Path) -> tuple[Answer | None, list[CaseError]]:
    """The answer, or every problem of its folder: its name, answer.toml, submission/, assessment."""
    if not folder.is_dir() or folder.is_symlink():
        return None, [CaseError(folder, f"{ANSWERS}/", "is not a folder", "answers/ holds one folder per answer")]
    found = [] if NAME.match(folder.name) else [CaseError(
        folder, "(folder name)", f"{folder.name!r} is not a plain lowercase name (a-z, 0-9, '.', '_', '-')",
        "rename the folder: it names the answer's arm in results")]
    spec, problems = read_toml(folder / "answer.toml", AnswerSpec)
    found += problems
    if not (folder / SUBMISSION).is_dir():
        found.append(CaseError(folder / SUBMISSION, f"{SUBMISSION}/", "does not exist", "put the answer's workspace there"))
    answer = Answer(case, folder.name, folder, spec) if spec is not None else None
    if answer is not None and answer.assessment is not None:
        found += _assessment_problems(answer)
    return (None if found else answer), found


def _assessment_problems(answer: Answer) -> list[CaseError]:
    """The answer's assessment.json must be one `bench assess` would take for this case."""
    from .assessment import listing, problems, read_operator_file, unscored

    path = answer.assessment
    if not path.is_file():
        return [CaseError(answer.dir / "answer.toml", "assessment", f"{answer.spec.assessment!r} is not a file in "
                          f"{answer.name}/", "add the operator's assessment.json there, or remove the field")]
    try:
        given = read_operator_file(path)
    except UsageError as exc:  # unreadable (a CaseError names the field instead)
        return [exc if isinstance(exc, CaseError) else CaseError(path, "(file)", str(exc), "save it as UTF-8 JSON")]
    if given.caseId != answer.case.id:
        return [CaseError(path, "caseId", f"{given.caseId!r} is not {answer.case.id!r}", f"write {answer.case.id!r}")]
    recorded = unscored(answer.case.gate)
    return [CaseError(path, f"expectations.{index}", problem, f"name one of: {listing(recorded)}")
            for index, problem in problems(recorded, given.expectations)]


# --- check-answers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One answer's line in check-answers' table."""

    case: str
    answer: str
    expected: str
    got: str
    ok: bool
    verdict: Verdict


@dataclass(frozen=True)
class Checked:
    rows: list[Row]
    outcome: RunOutcome

    def exit_code(self) -> int:
        """1 when an answer got the other verdict (or reason, or ok); else 3 when one got no verdict; else 0."""
        from .exit_status import ALL_PASS, FAILED, NO_VERDICT

        if any(not row.ok and row.verdict in (Verdict.PASS, Verdict.FAIL) for row in self.rows):
            return FAILED
        return NO_VERDICT if any(not row.ok for row in self.rows) else ALL_PASS


def check_answers(project: Project, case_ids: list[str], label: str | None, results: Path,
                  say: Callable[[str], None] | None = None) -> Checked:
    """Grade every answer of ``case_ids`` (default: every case that has answers) into one label; compare each."""
    from .agents import EXTERNAL
    from .external import external_arm
    from .request_checks import check_label
    from .run import RunRequest, default_label, execute
    from .submission import Submission

    named = expand_ids(project, case_ids or known_cases(project))  # a tracked case: each of its tracks
    answers = {case.id: found for case in (load_case(project, c) for c in named)
               if (found := load_answers(case))}
    if not answers:
        where = ", ".join(case_ids) if case_ids else "any case"
        raise UsageError(f"no reference answers (goldens/<case>/{ANSWERS}/<name>/answer.toml) for {where}")
    submissions = {case: [Submission(external_arm(a.case, None, a.name), a.submission) for a in found]
                   for case, found in answers.items()}
    request = RunRequest(cases=list(answers), agent=EXTERNAL, label=check_label(label or f"answers-{default_label()}"),
                         results=results, submissions=submissions)
    outcome = execute(request, project, say)
    by_arm = {(r.case, r.arm): r for r in outcome.results}
    rows = [_row(a, _assessed(a, by_arm[(case, a.name)], outcome)) for case, found in answers.items() for a in found]
    return Checked(rows, outcome)


def _assessed(answer: Answer, result: TrialResult, outcome: RunOutcome) -> TrialResult:
    """The answer's result with its operator assessment applied through `bench assess` (recorded and signed)."""
    if answer.assessment is None:
        return result
    from .assessment import assess
    from .keys import trusted_keys

    trial = outcome.paths.trial(result.case, result.arm, result.trial)
    return assess(trial.dir, answer.assessment, "check-answers", trusted_keys()).result


def _row(answer: Answer, result: TrialResult) -> Row:
    spec = answer.spec
    expected = spec.expect + (f" /{spec.reason}/" if spec.reason else "") + \
        (f", ok {str(spec.expect_ok).lower()}" if spec.expect_ok is not None else "")
    ok = result.verdict.value == spec.expect and (spec.reason is None or re.search(spec.reason, result.reason)) \
        and (spec.expect_ok is None or result.ok is spec.expect_ok)
    got = result.verdict.value + (f" ({result.reason})" if result.reason else "") + \
        (f", ok {str(result.ok).lower()}" if spec.expect_ok is not None else "")
    return Row(answer.case.id, answer.name, expected, got, bool(ok), result.verdict)

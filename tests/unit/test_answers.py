"""Reference answers: answer.toml validated like any case file, and answers never reach a grader."""

from __future__ import annotations

import json
import shutil

import pytest
from pydantic import ValidationError

from bench.answers import Checked, Row, load_answers
from bench.cases import load_case
from bench.errors import CaseError
from bench.gatespec import CommandCheck
from bench.models import Verdict
from bench.paths import Project


def answer_toml(project, name="correct"):
    return project / "goldens" / "hello" / "answers" / name / "answer.toml"


def test_hello_ships_a_passing_and_a_failing_answer(project):
    answers = {a.name: a.spec for a in load_answers(load_case(Project(project), "hello"))}
    assert answers["correct"].expect == "PASS" and answers["wrong-text"].expect == "FAIL"
    assert answers["wrong-text"].reason


@pytest.mark.parametrize("text, field, says", [
    ('expect = "MAYBE"\n', "expect", "'MAYBE'"),
    ('expect = "FAIL"\nreason = "(unclosed"\n', "reason", "not a valid regular expression"),
    ('expect = "PASS"\nexpect_ok = true\n', "(root)", "expect_ok needs `assessment`"),
    ('expect = "PASS"\nassessment = "../x.json"\n', "assessment", "not a file name"),
    ('expect = "PASS"\nexpected = "PASS"\n', "expected", "remove it"),
])
def test_a_bad_answer_toml_names_file_and_field(project, text, field, says):
    answer_toml(project).write_text(text)
    with pytest.raises(CaseError) as caught:
        load_answers(load_case(Project(project), "hello"))
    assert caught.value.path == str(answer_toml(project)) and caught.value.field == field
    assert says in str(caught.value)


def test_a_missing_assessment_or_submission_and_a_bad_folder_name_are_named(project):
    answer_toml(project).write_text('expect = "PASS"\nassessment = "assessment.json"\nexpect_ok = true\n')
    with pytest.raises(CaseError, match=r"field 'assessment': 'assessment.json' is not a file in correct/"):
        load_answers(load_case(Project(project), "hello"))
    answer_toml(project).write_text('expect = "PASS"\n')
    wrong = project / "goldens" / "hello" / "answers" / "wrong-text"
    shutil.rmtree(wrong / "submission")
    with pytest.raises(CaseError, match=r"wrong-text/submission: field 'submission/': does not exist"):
        load_answers(load_case(Project(project), "hello"))
    wrong.rename(wrong.with_name("Wrong"))
    with pytest.raises(CaseError, match=r"'Wrong' is not a plain lowercase name"):
        load_answers(load_case(Project(project), "hello"))


def test_an_assessment_must_name_the_case_expectations(project):
    folder = answer_toml(project).parent
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + '\n[[expectations]]\ncategory = "mustAvoid"\ntext = "a second file"\n')
    answer_toml(project).write_text('expect = "PASS"\nassessment = "assessment.json"\nexpect_ok = true\n')
    scoring = {"schemaVersion": 1, "caseId": "hello",
               "expectations": [{"category": "mustDemonstrate", "expectation": "a second file", "status": "pass"}]}
    (folder / "assessment.json").write_text(json.dumps(scoring))
    with pytest.raises(CaseError, match=r"field 'expectations.0': 'a second file' is a mustAvoid"):
        load_answers(load_case(Project(project), "hello"))
    scoring["expectations"][0]["category"] = "mustAvoid"
    (folder / "assessment.json").write_text(json.dumps(scoring))
    assert load_answers(load_case(Project(project), "hello"))[0].assessment == folder / "assessment.json"


def test_cli_refuses_a_bad_answer_before_grading_anything(bench, project, tmp_path):
    answer_toml(project, "wrong-text").write_text('expect = "FAILED"\n')
    done = bench("cases", "check-answers", "hello", root=project)
    assert done.returncode == 2, done.stderr
    assert f"{answer_toml(project, 'wrong-text')}: field 'expect'" in done.stderr
    assert not (tmp_path / "results").exists()
    validated = bench("cases", "validate", root=project)
    assert validated.returncode == 2 and "bad  hello" in validated.stdout and "field 'expect'" in validated.stdout


def test_answers_never_reach_a_grader():
    with pytest.raises(ValidationError, match="reference answers"):
        CommandCheck(kind="command", name="peek", run="true", withheld=["answers/correct/submission"])


def row(ok: bool, verdict: Verdict) -> Row:
    return Row("hello", "a", "PASS", verdict.value, ok, verdict)


@pytest.mark.parametrize("rows, code", [
    ([row(True, Verdict.PASS), row(True, Verdict.FAIL)], 0),
    ([row(True, Verdict.PASS), row(False, Verdict.FAIL)], 1),
    ([row(False, Verdict.ERROR), row(False, Verdict.PASS)], 1),
    ([row(True, Verdict.PASS), row(False, Verdict.ERROR)], 3),
])
def test_exit_code_one_for_a_wrong_verdict_three_for_none(rows, code):
    assert Checked(rows, outcome=None).exit_code() == code

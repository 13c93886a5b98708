"""Operator assessments without an engine: matching rules, derived statuses, the label check, the schemas.

Labels are synthetic (results layout, sealed and signed as a run leaves them by
tests/labels.py), so `bench assess` and the label check read exactly what a run writes.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.assessment import assess, disagreements, settle, status_of, unscored
from bench.errors import CaseError, UsageError
from bench.gatespec import GateSpec
from bench.keys import trusted_keys
from bench.label_check import integrity
from bench.models import Verdict
from bench.paths import RunPaths, TrialPaths
from bench.result_models import ExpectationResult, TrialResult
from bench.schemas import rendered
from tests.labels import seal

WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)
SHOWS, SPLITS, AVOIDS = "checks capacity before writing", "splits long runs", "allocating memory"
GATE = GateSpec.model_validate({
    "checks": [{"kind": "grep", "name": "g", "files": ["x"], "pattern": "x"}],
    "expectations": [{"category": "mustDemonstrate", "text": SHOWS}, {"category": "mustDemonstrate", "text": SPLITS},
                     {"category": "mustAvoid", "text": AVOIDS}]})


def entry(category: str, text: str, status: str = "pass", evidence: str = "seen") -> dict:
    return {"category": category, "expectation": text, "status": status, "evidence": evidence}


@pytest.fixture()
def trial(tmp_path: Path) -> TrialPaths:
    return unscored_trial(tmp_path)


def unscored_trial(tmp_path: Path) -> TrialPaths:
    """One PASS trial of case c-rle, its gate's expectations recorded unscored, in a sealed, signed label."""
    paths = RunPaths(tmp_path / "lab").trial("c-rle", "default", 1)
    paths.dir.mkdir(parents=True)
    result = settle(TrialResult(run_id="r", label="lab", case="c-rle", arm="default", trial=1, agent="oracle",
                                verdict=Verdict.PASS, started_at=WHEN, expectations=unscored(GATE)))
    paths.result.write_text(result.model_dump_json(indent=2) + "\n")
    (paths.dir / "workspace.tar").write_bytes(b"what the agent produced")
    seal(paths.dir.parents[2])
    return paths


def scoring(tmp_path: Path, *entries: dict, case: str = "c-rle") -> Path:
    path = tmp_path / "scoring.json"
    path.write_text(json.dumps({"schemaVersion": 1, "caseId": case, "expectations": list(entries)}))
    return path


def run_assess(trial: TrialPaths, source: Path):
    return assess(trial.dir, source, "ann", trusted_keys())


def label_findings(trial: TrialPaths) -> list[tuple[str, str]]:
    return integrity(RunPaths(trial.dir.parents[2]), trusted_keys())[1]


# --- matching rules ---------------------------------------------------------------------


@pytest.mark.parametrize("bad, field, words", [
    (entry("mustAvoid", SHOWS), "expectations.0", f"{SHOWS!r} is a mustDemonstrate, not a mustAvoid"),
    (entry("mustDemonstrate", "checks capacity"), "expectations.0", "is not one of the case's expectations"),
])
def test_an_entry_naming_no_expectation_exactly_is_refused_listing_them(trial, tmp_path, bad, field, words):
    before = trial.result.read_bytes()
    with pytest.raises(CaseError) as caught:
        run_assess(trial, scoring(tmp_path, bad))
    message = str(caught.value)
    assert caught.value.field == field and words in message
    assert "scoring.json" in message and f"mustAvoid {AVOIDS!r}" in message  # the case's list, to copy from
    assert trial.result.read_bytes() == before and not trial.assessment.exists()


def test_another_case_is_refused(trial, tmp_path):
    with pytest.raises(CaseError, match="'hello' is not the trial's case 'c-rle'") as caught:
        run_assess(trial, scoring(tmp_path, entry("mustDemonstrate", SHOWS), case="hello"))
    assert caught.value.field == "caseId"


def test_a_duplicate_entry_is_refused(trial, tmp_path):
    with pytest.raises(CaseError, match=f"scores mustDemonstrate {SHOWS!r} a second time") as caught:
        run_assess(trial, scoring(tmp_path, entry("mustDemonstrate", SHOWS), entry("mustDemonstrate", SHOWS, "fail")))
    assert caught.value.field == "expectations.1"


@pytest.mark.parametrize("data, field", [
    ({"schemaVersion": 2, "caseId": "c-rle", "expectations": []}, "schemaVersion"),
    ({"schemaVersion": 1, "caseId": "c-rle", "expectations": [entry("mustDemonstrate", SHOWS, "maybe")]},
     "expectations.0.status"),
    ({"schemaVersion": 1, "caseId": "c-rle", "expectations": [], "extra": 1}, "extra"),
])
def test_a_malformed_file_names_its_field(trial, tmp_path, data, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CaseError) as caught:
        run_assess(trial, path)
    assert caught.value.field == field and str(path) in str(caught.value)


def test_a_partial_assessment_leaves_the_rest_unscored_and_keeps_what_the_agent_made(trial, tmp_path):
    before = json.loads(trial.result.read_text())
    tar = trial.dir.joinpath("workspace.tar").read_bytes()
    done = run_assess(trial, scoring(tmp_path, entry("mustDemonstrate", SPLITS, evidence="loop caps run at 9")))
    after = json.loads(trial.result.read_text())
    assert [(e["status"], e["evidence"]) for e in after["expectations"]] == [
        ("unscored", ""), ("pass", "loop caps run at 9"), ("unscored", "")]
    assert (after["assessment_status"], after["ok"]) == ("partial", True)
    changed = {"expectations", "assessment_status", "ok"}
    assert {k: v for k, v in after.items() if k not in changed} == {k: v for k, v in before.items() if k not in changed}
    assert trial.dir.joinpath("workspace.tar").read_bytes() == tar
    recorded = json.loads(trial.assessment.read_text())
    assert recorded["assessed_by"] == "ann" and recorded["case"] == "c-rle"
    assert recorded["expectations"] == [entry("mustDemonstrate", SPLITS, evidence="loop caps run at 9")]
    assert datetime.fromisoformat(recorded["assessed_at"]).utcoffset().total_seconds() == 0
    assert done.lines()[-1] == "c-rle/default/trial-1: verdict PASS, assessment partial, ok true"
    assert label_findings(trial) == []  # manifest rewritten, label re-signed


def test_a_failed_must_avoid_makes_ok_false(trial, tmp_path):
    done = run_assess(trial, scoring(tmp_path, entry("mustDemonstrate", SHOWS), entry("mustDemonstrate", SPLITS),
                                     entry("mustAvoid", AVOIDS, "fail", "mallocs a scratch buffer")))
    assert (done.result.verdict, done.result.assessment_status, done.result.ok) == (Verdict.PASS, "fail", False)
    assert "mustAvoid       fail     allocating memory" in done.lines()


def test_a_second_assessment_replaces_the_first_and_says_so(trial, tmp_path):
    run_assess(trial, scoring(tmp_path, entry("mustAvoid", AVOIDS, "fail")))
    done = run_assess(trial, scoring(tmp_path, entry("mustAvoid", AVOIDS, "pass")))
    assert done.result.assessment_status == "partial" and done.result.ok
    assert any(line.startswith("replaced the assessment by ann at ") for line in done.lines())


def test_a_folder_that_is_not_a_trial_is_refused(trial, tmp_path):
    with pytest.raises(UsageError, match="is not a trial folder"):
        assess(trial.dir.parent, scoring(tmp_path), "ann", trusted_keys())


def test_a_label_that_does_not_verify_is_refused_and_not_signed_over(trial, tmp_path):
    (trial.dir / "workspace.tar").write_bytes(b"swapped afterwards")
    attestation = RunPaths(trial.dir.parents[2]).attestation.read_bytes()
    with pytest.raises(UsageError, match="its label does not verify .*workspace.tar"):
        run_assess(trial, scoring(tmp_path, entry("mustAvoid", AVOIDS)))
    assert RunPaths(trial.dir.parents[2]).attestation.read_bytes() == attestation


# --- derived statuses and the label check -----------------------------------------------


@pytest.mark.parametrize("statuses, expected", [
    ([], "none"), (["unscored", "unscored"], "unscored"), (["pass", "unscored"], "partial"),
    (["pass", "pass"], "pass"), (["pass", "fail"], "fail"), (["fail", "unscored"], "fail"),
])
def test_status_derivation(statuses, expected):
    assert status_of([ExpectationResult(category="mustAvoid", text=str(i), status=s)
                      for i, s in enumerate(statuses)]) == expected


@pytest.mark.parametrize("verdict, statuses, ok", [
    ("PASS", [], True), ("PASS", ["fail"], False), ("FAIL", ["pass"], False), ("ERROR", [], False),
])
def test_ok_is_a_pass_verdict_without_a_failed_expectation(verdict, statuses, ok):
    result = TrialResult(run_id="r", label="l", case="c", arm="a", trial=1, agent="oracle", verdict=Verdict(verdict),
                         started_at=WHEN, expectations=[ExpectationResult(category="mustAvoid", text=str(i), status=s)
                                                        for i, s in enumerate(statuses)])
    assert settle(result).ok is ok


def test_a_record_written_before_assessments_reads_back_with_its_verdict_as_ok():
    old = {"run_id": "r", "label": "l", "case": "c", "arm": "a", "trial": 1, "agent": "oracle", "verdict": "PASS",
           "started_at": WHEN.isoformat()}
    result = TrialResult.model_validate(old)
    assert (result.expectations, result.assessment_status, result.ok) == ([], "none", True)
    assert TrialResult.model_validate({**old, "verdict": "FAIL"}).ok is False


def test_the_label_check_names_a_result_edited_and_resigned(trial, tmp_path):
    """With a valid signature over it, a result.json whose scoring its assessment.json does not give is named."""
    run_assess(trial, scoring(tmp_path, entry("mustAvoid", AVOIDS, "fail")))
    data = json.loads(trial.result.read_text())
    data["expectations"][2]["status"], data["assessment_status"], data["ok"] = "pass", "partial", True
    trial.result.write_text(json.dumps(data))
    seal(trial.dir.parents[2])  # re-signed by whoever holds the key: the signature alone proves nothing here
    found = [f"{where}: {what}" for where, what in label_findings(trial)]
    assert any(f.startswith("c-rle/default/trial-1/result.json: expectations[2]") and "status 'pass' disagrees with "
               "'fail' from assessment.json" in f for f in found), found
    assert any("assessment_status 'partial' disagrees with 'fail'" in f for f in found)
    assert any("ok True disagrees with False" in f for f in found)


def test_a_scored_result_without_its_assessment_is_named(trial):
    result = TrialResult.model_validate_json(trial.result.read_text())
    edited = settle(result.model_copy(update={"expectations": [
        e.model_copy(update={"status": "pass"}) for e in result.expectations]}))
    found = disagreements(trial, edited)
    assert len(found) == 4 and all(where == "result.json" for where, _ in found)  # ok: PASS either way
    assert found[0][1].endswith("status 'pass' disagrees with 'unscored' from no assessment.json (nothing scored)")


# --- gate.toml and the schemas ---------------------------------------------------------


@pytest.mark.parametrize("expectations, words", [
    ([{"category": "mustAvoid", "text": "  "}], "text is empty"),
    ([{"category": "mustAvoid", "text": "a"}, {"category": "mustAvoid", "text": "a"}], "listed twice"),
    ([{"category": "shouldMaybe", "text": "a"}], "mustDemonstrate"),
])
def test_gate_expectations_are_validated(expectations, words):
    with pytest.raises(ValidationError, match=words):
        GateSpec.model_validate({"checks": GATE.model_dump()["checks"], "expectations": expectations})


def test_the_same_text_under_both_categories_is_two_expectations():
    gate = GateSpec.model_validate({"checks": GATE.model_dump()["checks"], "expectations": [
        {"category": "mustAvoid", "text": "a"}, {"category": "mustDemonstrate", "text": "a"}]})
    assert [e.status for e in unscored(gate)] == ["unscored", "unscored"]


def test_schemas_publish_the_assessment_and_the_new_result_fields():
    schemas = {name: json.loads(text) for name, text in rendered().items()}
    assert {"assessed_by", "assessed_at", "expectations"} <= set(schemas["assessment.schema.json"]["properties"])
    assert {"schemaVersion", "caseId", "expectations"} <= set(schemas["assessment-input.schema.json"]["properties"])
    assert {"expectations", "assessment_status", "ok"} <= set(schemas["result.schema.json"]["properties"])
    assert "expectations" in schemas["gate.schema.json"]["properties"]

"""Records read back from disk: one clear line for a bad file, a refusal for another version."""

from __future__ import annotations

import json

import pytest

from bench.errors import RecordError, UsageError
from bench.hashing import short_tag
from bench.models import LEVELS, Provenance, RunRecord
from bench.result_models import TrialResult
from bench.readback import read_record

FIX = "rerun that trial"


def _result(**extra) -> dict:
    return {"schema_version": 1, "run_id": "r", "label": "l", "case": "c", "arm": "a", "trial": 1, "agent": "null",
            "verdict": "PASS", "started_at": "2025-01-01T00:00:00Z", **extra}


def test_a_good_record_reads_back(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_result()))
    assert read_record(path, TrialResult, FIX).verdict.value == "PASS"


def test_a_truncated_file_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_result())[:40])
    with pytest.raises(RecordError) as caught:
        read_record(path, TrialResult, FIX)
    message = str(caught.value)
    assert message.startswith(f"{path}: field '(whole file)': not valid JSON")
    assert "truncated or corrupt" in message and message.endswith(f"— {FIX}") and "\n" not in message
    assert isinstance(caught.value, UsageError)  # exit 2, printed without a traceback


def test_bytes_that_are_not_utf8_are_a_corrupt_record_not_a_traceback(tmp_path):
    path = tmp_path / "result.json"
    path.write_bytes(json.dumps(_result()).encode().replace(b'"l"', b'"\xff"'))
    with pytest.raises(RecordError, match="field '\\(whole file\\)': not valid JSON .*truncated or corrupt"):
        read_record(path, TrialResult, FIX)


def test_an_empty_file_says_so(tmp_path):
    path = tmp_path / "result.json"
    path.write_text("")
    with pytest.raises(RecordError, match="empty file"):
        read_record(path, TrialResult, FIX)


def test_an_unknown_field_is_refused_by_name(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_result(verdikt="PASS")))
    with pytest.raises(RecordError, match=r"field 'verdikt': Extra inputs are not permitted \(found 'PASS'\)"):
        read_record(path, TrialResult, FIX)


def test_a_bad_nested_value_names_the_dotted_field(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(json.dumps(_result(checks=[{"name": "x", "kind": "command", "gating": True, "passed": "maybe"}])))
    with pytest.raises(RecordError, match=r"field 'checks\.0\.passed'"):
        read_record(path, TrialResult, FIX)


@pytest.mark.parametrize("version", [2, 0, None])
def test_an_unknown_schema_version_is_refused_before_the_fields(tmp_path, version):
    data = _result(schema_version=version, field_of_the_future=1)
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError) as caught:
        read_record(path, TrialResult, FIX)
    assert f"schema_version {version} is not supported by this harness (knows 1) — " in str(caught.value)
    assert str(caught.value).endswith(FIX)


def test_run_json_knows_its_own_version(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schema_version": 1, "label": "l", "harness_version": "0", "wheel_sha256": "x",
                                "arms": [], "cases": {"hello": {"visible_hash": "a", "goldens_hash": "b"}}}))
    with pytest.raises(RecordError, match=r"schema_version 1 is not supported by this harness \(knows 3\)"):
        read_record(path, RunRecord, "use a new --label")


def test_written_records_forbid_unknown_fields():
    for model in (TrialResult, Provenance, RunRecord):
        assert model.model_config.get("extra") == "forbid", model


def test_levels_are_the_provenance_literal():
    assert LEVELS == ("pinned", "content-reproducible", "bit-reproducible")
    assert Provenance.model_json_schema()["properties"]["reproducibility"]["enum"] == list(LEVELS)


@pytest.mark.parametrize("digest", ["sha256:" + "ab" * 32, "ab" * 32, "SHA256:" + "AB" * 32])
def test_short_tag_is_the_first_16_hex_digits(digest):
    assert short_tag(digest) == digest.split(":")[-1][:16]


@pytest.mark.parametrize("bad", ["sha256:", "abc", "sha256:" + "zz" * 32])
def test_short_tag_refuses_what_is_not_a_digest(bad):
    with pytest.raises(ValueError):
        short_tag(bad)

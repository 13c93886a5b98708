"""Golden-data validation: generic and over-matching fingerprints, states against the code, the planted spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.allium import (DistillManifest, WeedManifest, validate_distill, validate_distill_file, validate_weed,
                          validate_weed_file)
from bench.errors import CaseError

ROOT = Path(__file__).resolve().parents[2]


def distill(rules=None, entities=None) -> DistillManifest:
    return DistillManifest.model_validate({
        "fixture": "toy", "spec_path": "spec/toy.allium",
        "entities": entities or [{"name": "Account", "states": ["active", "closed"]}],
        "rules": rules or [{"id": "close", "ensures_all": ["account_closed"]}],
    })


def messages(problems, level=None) -> list[str]:
    return [f"{p.where}: {p.message}" for p in problems if level in (None, p.level)]


def test_a_short_term_inside_a_longer_word_is_warned_about():
    code = "account.status = 'active'\nif account.is_inactive: raise Closed()\n"
    problems = validate_distill(distill(rules=[{"id": "activate", "ensures_all": ["active"]}]), code)
    assert messages(problems) == ["rule activate: term 'active' also matches inside 'inactive'; "
                                  "pick a more distinctive term"]
    assert problems[0].level == "warning"


def test_terms_that_only_extend_a_word_are_fine():
    code = "account.status = 'active'\nactivated_at = now()\nclosed = False\n"
    assert validate_distill(distill(rules=[{"id": "a", "ensures_all": ["active"]}]), code) == []


def test_short_and_generic_only_fingerprints_are_warned_about():
    problems = validate_distill(distill(rules=[{"id": "r", "ensures_all": ["status", "created"],
                                                "requires_any": ["ttl"]}]), "active closed")
    assert messages(problems) == [
        "rule r: term 'ttl' is shorter than 4 letters and will match inside unrelated words",
        "rule r: all-of terms ['status', 'created'] are all generic words; they will match the wrong block "
        "— add a distinctive term",
    ]


def test_numbers_are_values_not_short_words():
    assert validate_distill(distill(rules=[{"id": "r", "ensures_all": ["max_attempts", "3"]}]),
                            "active closed max_attempts = 3") == []


def test_states_are_cross_checked_against_the_code_with_aliases_per_entity():
    """'done' is Ticket's alias for closed, not Job's: Job.closed must appear in the code itself."""
    entities = [
        {"name": "Ticket", "states": ["open", "closed"], "state_aliases": {"closed": ["done"]}},
        {"name": "Job", "states": ["open", "closed"]},
        {"name": "Batch", "states": ["open", "sealed"], "state_aliases": {"sealed": ["frozen"]}},
    ]
    problems = validate_distill(distill(entities=entities), "status = 'open'\nmark_done(ticket)\n")
    assert messages(problems, "error") == [
        "Job.closed: appears nowhere in the fixture's code — fix the name, or add the alias the code uses"]
    assert messages(problems, "warning") == [
        "Batch.sealed: neither the state nor its aliases appear in the code; confirm it is genuinely implicit"]


def test_aliases_are_checked_for_consistency_when_loaded():
    with pytest.raises(ValidationError, match="alias 'done' of 'closed' already names 'open'"):
        distill(entities=[{"name": "T", "states": ["open", "closed"],
                           "state_aliases": {"open": ["done"], "closed": ["done"]}}])
    with pytest.raises(ValidationError, match=r"transition \['open', 'gone'\] uses \['gone'\]"):
        distill(entities=[{"name": "T", "states": ["open"], "transitions": [["open", "gone"]]}])


def weed(**overrides) -> WeedManifest:
    return WeedManifest.model_validate({
        "fixture": "toy", "planted_spec": "spec.allium",
        "divergences": [{"id": "d", "shape": "config drift", "summary": "", "must_all": ["max_attempts"]}],
        **overrides})


def test_the_planted_spec_must_parse_with_zero_errors():
    problems = validate_weed(weed(), "entity A {\n  status: a | b\n", None)
    assert messages(problems, "error") == ["planted spec: line 1: entity A is never closed (missing '}')"]
    assert messages(validate_weed(weed(), None, None), "error") == ["planted spec: spec.allium does not exist"]
    assert messages(validate_weed(weed(), "entity A { status: a | b }", None), "error") == [
        "planted spec: not structurally valid: no rule declared"]


def test_weed_fingerprints_get_the_same_warnings():
    divergences = [{"id": "d", "shape": "s", "summary": "", "must_all": ["active"], "must_any": ["status"]}]
    problems = validate_weed(weed(divergences=divergences), None, "if user.inactive: pass")
    assert "divergence d: term 'active' also matches inside 'inactive'; pick a more distinctive term" in messages(problems)
    assert "divergence d: any-of terms ['status'] are all generic words; they will match the wrong block " \
           "— add a distinctive term" in messages(problems)


def test_the_shipped_goldens_validate():
    assert validate_distill_file(ROOT / "goldens/distill-courier/manifest.toml", ROOT) == []
    problems = validate_weed_file(ROOT / "goldens/weed-courier/divergences.toml", ROOT,
                                  ROOT / "cases/weed-courier/workspace")
    assert messages(problems) == [  # 'sms' is what a finding calls it; the warning is known and accepted
        "judgement call sms-flagged-off: term 'sms' is shorter than 4 letters and will match inside unrelated words"]


def test_a_broken_manifest_is_a_case_error_naming_the_field(tmp_path):
    path = tmp_path / "manifest.toml"
    path.write_text('fixture = "toy"\nspec_path = "s.allium"\nrules = []\n[[entities]]\nname = "A"\nstatez = ["x"]\n')
    with pytest.raises(CaseError, match="manifest.toml: field 'entities.0.statez': Extra inputs are not permitted"):
        validate_distill_file(path, None)


def test_an_unknown_fixture_is_an_error_not_a_crash(tmp_path):
    manifest = tmp_path / "manifest.toml"
    manifest.write_text((ROOT / "goldens/distill-courier/manifest.toml").read_text().replace(
        'fixture = "courier"', 'fixture = "parcels"'))
    problems = validate_distill_file(manifest, ROOT)
    assert problems[0].level == "error" and problems[0].where == "fixture 'parcels'"

"""The distill scorer: hand-made manifests, the oracle spec, and mutated oracles with hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.allium import DistillManifest, DistillThresholds, choose_spec, load_distill_manifest, score_distill
from bench.allium.terms import has, norm

ROOT = Path(__file__).resolve().parents[2]
ORACLE = (ROOT / "goldens/distill-courier/solution/spec/courier.allium").read_text()
MANIFEST = load_distill_manifest(ROOT / "goldens/distill-courier/manifest.toml")

RULE = "rule {name} {{\n    when: {name}(x)\n    ensures: {ensures}\n}}\n"


def manifest(**overrides) -> DistillManifest:
    """Two entities that both call something 'done', meaning different states."""
    data = {
        "fixture": "toy", "spec_path": "spec/toy.allium",
        "entities": [
            {"name": "Ticket", "states": ["open", "closed"], "state_aliases": {"closed": ["done"]},
             "transitions": [["open", "closed"]]},
            {"name": "Job", "states": ["pending", "finished"], "state_aliases": {"finished": ["done"]},
             "transitions": [["pending", "finished"]]},
        ],
        "rules": [{"id": "close", "ensures_all": ["closed|done"], "requires_any": ["open"]}],
    }
    return DistillManifest.model_validate({**data, **overrides})


def toy_spec(job_states: str = "pending | done", extra: str = "") -> str:
    return f"""entity Ticket {{
    status: open | done
    transitions status {{ open -> done }}
}}
entity Job {{
    status: {job_states}
    transitions status {{ pending -> done }}
}}
rule Close {{
    when: Close(ticket)
    requires: ticket.status = open
    ensures: ticket.status = done
}}
{extra}"""


def test_aliases_are_scoped_per_entity():
    score = score_distill(toy_spec(), manifest())
    assert score.passed, score.reasons
    assert (score.value("state_recall"), score.value("transition_recall"), score.value("confabulations")) == (1, 1, 0)


def test_another_entitys_state_is_confabulation_here():
    """'closed' is Ticket's state; on Job it maps to nothing, so it is invented."""
    score = score_distill(toy_spec("pending | done | closed"), manifest())
    assert score.value("confabulations") == 1 and not score.passed
    assert score.review["confabulated"] == ["Job: state 'closed' is not in the code"]
    assert score.reasons == ["confabulations 1 > 0"]


def test_rules_match_one_to_one():
    """Two golden rules with the same fingerprint cannot both claim the one spec block."""
    twin = {"id": "close-again", "ensures_all": ["ticket.status = done"]}
    score = score_distill(toy_spec(), manifest(rules=[
        {"id": "close", "ensures_all": ["closed|done"], "requires_any": ["open"]}, twin]))
    assert score.value("rule_recall") == 0.5 and score.review["rules_missed"] == ["close-again"]


def test_term_matching_ignores_case_underscores_hyphens_and_spaces():
    m = manifest(rules=[{"id": "close", "ensures_all": ["Status = DONE"], "requires_any": ["STATUS=open"]}])
    assert score_distill(toy_spec(), m).value("rule_recall") == 1
    assert has(norm("parcel.status = out_for_delivery"), "Out-For Delivery")
    assert not has(norm("parcel.status = out_for_delivery"), "delivered|returned")


def test_invented_entities_and_unmatched_rules_are_reported_not_gated():
    extra = "entity Audit {\n    note: String\n}\n" + RULE.format(name="Log", ensures="Audit.created(note: x)")
    score = score_distill(toy_spec(extra=extra), manifest())
    assert score.passed
    assert score.review["invented_entities"] == ["Audit"] and score.review["unmatched_rules"] == ["Log"]
    assert score.metrics["invented_entities"].gating is False and score.value("unmatched_rules") == 1


def test_exclusions_are_prefix_matches_in_normative_content_only():
    m = manifest(exclusions={"implementation": ["redis"], "dead_code": ["sms"]})
    extra = ('-- Redis holds the lock; SMS is off\nopen question "Should redis expire tickets?"\n'
             + RULE.format(name="Notify", ensures="SmsSent(to: x) and x.predis = 1"))
    score = score_distill(toy_spec(extra=extra), m)
    assert score.value("exclusion_violations") == 1
    assert score.review["exclusion_violations"] == ["'sms' in 'SmsSent' (line 18)"]


def test_no_spec_fails_as_structurally_invalid_with_zero_recall():
    score = score_distill(None, MANIFEST)
    assert not score.passed and score.reasons[0] == "structurally invalid: no spec was written"
    assert score.value("entity_recall") == 0 and score.value("rule_recall") == 0


def test_every_metric_declares_its_direction():
    score = score_distill(ORACLE, MANIFEST)
    directions = {name: m.direction for name, m in score.metrics.items()}
    assert directions == {
        "structural_validity": "higher", "entity_recall": "higher", "state_recall": "higher",
        "transition_recall": "higher", "rule_recall": "higher", "boundary_recall": "higher",
        "config_recall": "higher", "confabulations": "lower", "exclusion_violations": "lower",
        "invented_entities": "lower", "unmatched_rules": "lower"}


def test_the_oracle_spec_passes_the_golden_manifest():
    score = score_distill(ORACLE, MANIFEST)
    assert score.passed and score.reasons == [] and score.decider == "harness-parser"
    assert all(score.value(n) == 1 for n in ("entity_recall", "state_recall", "transition_recall", "rule_recall",
                                             "boundary_recall", "config_recall"))
    assert score.value("confabulations") == 0 and score.value("exclusion_violations") == 0


def without_block(text: str, header: str) -> str:
    start = text.index(header)
    end = text.index("\n}\n", start) + 3
    return text[:start] + text[end:]


def test_dropping_an_entity_fails_entity_recall():
    """Manifest: Parcel, PickupRequest, Driver, DeliveryAttempt + external Customer; 4 of 5 left = 0.8."""
    score = score_distill(without_block(ORACLE, "entity DeliveryAttempt {"), MANIFEST)
    assert score.value("entity_recall") == pytest.approx(4 / 5)
    assert score.reasons == ["entity_recall 0.8 < 1"] and score.review["entities_missed"] == ["DeliveryAttempt"]
    assert score.value("state_recall") == 1 and score.value("rule_recall") == 1


def test_a_state_the_code_lacks_is_confabulation():
    mutated = ORACLE.replace("| failed_attempt | returned\n", "| failed_attempt | returned | lost\n")
    score = score_distill(mutated, MANIFEST)
    assert score.value("confabulations") == 1 and score.reasons == ["confabulations 1 > 0"]
    assert score.review["confabulated"] == ["Parcel: state 'lost' is not in the code"]
    assert score.value("state_recall") == 1  # recall is untouched: precision caught it


def test_a_transition_the_code_lacks_is_confabulation_too():
    mutated = ORACLE.replace("        terminal: delivered, returned\n",
                             "        delivered -> out_for_delivery\n        terminal: returned\n")
    assert score_distill(mutated, MANIFEST).value("confabulations") == 1


def test_redis_in_a_rule_is_an_exclusion_violation():
    mutated = ORACLE.replace("    requires: driver.on_shift\n",
                             "    requires: driver.on_shift\n    requires: parcel.redis_lock = held\n")
    score = score_distill(mutated, MANIFEST)
    assert score.value("exclusion_violations") == 1 and score.reasons == ["exclusion_violations 1 > 0"]
    assert score.value("rule_recall") == 1


def test_a_gate_may_declare_its_own_thresholds():
    mutated = without_block(ORACLE, "entity DeliveryAttempt {")
    assert score_distill(mutated, MANIFEST, DistillThresholds(entity_recall=0.8)).passed
    strict = DistillThresholds(boundary_recall=1.0, config_recall=1.0)
    assert score_distill(ORACLE, MANIFEST, strict).metrics["config_recall"].gating


def test_losing_rules_below_the_floor_fails_rule_recall():
    """14 golden rules; dropping 3 leaves 11/14 = 0.786 < 0.8."""
    text = ORACLE
    for header in ("rule StartShift {", "rule EndShift {", "rule EscalateOverdueParcel {"):
        text = without_block(text, header)
    score = score_distill(text, MANIFEST)
    assert score.value("rule_recall") == pytest.approx(11 / 14) and score.reasons == ["rule_recall 0.786 < 0.8"]


def test_choose_spec_prefers_the_asked_path_then_the_largest_spec():
    assert choose_spec({"spec/courier.allium": 10, "big.allium": 99}, "spec/courier.allium") == "spec/courier.allium"
    assert choose_spec({"a.allium": 10, "b/big.allium": 99, "notes.md": 500}, "spec/courier.allium") == "b/big.allium"
    assert choose_spec({"notes.md": 5}, "spec/courier.allium") is None

"""The harness's Allium reader: block structure in, structure and errors out."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.allium import parse_spec

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "goldens/distill-courier/solution/spec/courier.allium"

SMALL = """-- allium: 3
enum TicketStage { open | closed }

entity Ticket {
    stage: TicketStage
    priority: low
        | high
    title: String   -- a comment with { braces } and -- dashes
}

rule CloseTicket {
    when: CloseRequested(ticket)
    let reason = "done -- really"
    requires: ticket.stage = open
    ensures: ticket.stage = closed
}
"""


def test_the_oracle_spec_reads_cleanly():
    spec = parse_spec(ORACLE.read_text())
    assert (spec.errors, spec.warnings, spec.invalid_reason()) == ([], [], None)
    assert spec.decider == "harness-parser" and spec.version == 3
    parcel = next(e for e in spec.entities if e.name == "Parcel")
    assert parcel.states() == ("created", "collected", "out_for_delivery", "delivered", "failed_attempt", "returned")
    assert ("failed_attempt", "returned") in parcel.edges() and parcel.terminal["status"] == ("delivered", "returned")
    customer = next(e for e in spec.entities if e.name == "Customer")
    assert customer.kind == "external"
    assert len(spec.rules) == 14 and {c.name for c in spec.config} >= {"max_delivery_attempts", "escalate_after"}
    assert {b.name for b in spec.boundaries if b.kind == "surface"} == {
        "CustomerPickups", "DriverApp", "DispatchConsole", "CarrierWebhook"}


def test_named_enums_continuations_and_comments():
    spec = parse_spec(SMALL)
    ticket = spec.entities[0]
    assert ticket.state_fields() == {"stage": ("open", "closed")}  # priority is an enum, but not a lifecycle
    assert [f.enum_values for f in ticket.fields][1] == ("low", "high")
    rule = spec.rules[0]
    assert rule.when == "CloseRequested(ticket)"
    assert 'let reason = "done -- really"' in rule.requires and "ticket.stage = open" in rule.requires
    assert rule.ensures == "ticket.stage = closed"
    assert "comment" not in spec.normative_text and "done -- really" in spec.normative_text


def test_one_line_transition_blocks_and_backtick_literals():
    spec = parse_spec("""entity Job {
    status: pending | `timed-out` | done
    transitions status { pending -> `timed-out`  pending -> done  terminal: `timed-out`, done }
}
rule Finish {
    when: Finish(job)
    ensures: job.status = done
}""")
    job = spec.entities[0]
    assert spec.errors == [] and job.edges() == (("pending", "timed-out"), ("pending", "done"))
    assert job.terminal == {"status": ("timed-out", "done")}


@pytest.mark.parametrize("text, words", [
    ("entity A {\n  status: x | y\n", "is never closed"),
    ("entity A {\n  status: x | y\n}\n}\n", "'}' closes no block"),
    ("entity A { status: x | y }\nthis is prose\n", "unexpected text at top level"),
    ("entity A { status: x | y }\nrule R {\n  when: Go(a)\n}\n", "rule R has no ensures: clause"),
    ("entity A { status: x | y }\nrule R {\n  ensures: a.status = y\n}\n", "rule R has no when: clause"),
    ("entity A {\n status: x | y\n transitions status { x -> z }\n}\nrule R {\n when: Go(a)\n ensures: a.status = y\n}",
     "uses 'z', which is not a value of status"),
    ("entity A\nrule R {\n when: Go(a)\n ensures: a.status = y\n}", "entity A has no { ... } block"),
])
def test_structural_errors_name_the_line_and_the_problem(text, words):
    spec = parse_spec(text)
    assert any(words in e for e in spec.errors), spec.errors
    assert not spec.structurally_valid and words in spec.invalid_reason()


@pytest.mark.parametrize("text, reason", [
    ("", "no entity, no enum, no rule declared"),
    ("entity A { name: String }\nrule R {\n when: Go(a)\n ensures: a.name = x\n}", "no enum declared"),
    ("entity A { status: x | y }", "no rule declared"),
    ("external entity A { status: x | y }\nrule R {\n when: Go(a)\n ensures: a.status = y\n}", "no entity declared"),
])
def test_a_spec_needs_entities_enums_and_rules(text, reason):
    assert parse_spec(text).invalid_reason() == reason


def test_unknown_blocks_warn_but_do_not_fail():
    spec = parse_spec(ORACLE.read_text() + "\ngiven {\n  clock: Clock\n}\n")
    assert spec.structurally_valid and spec.warnings == ["line 276: unknown declaration 'given', skipped"]


def test_open_questions_and_comments_are_not_normative():
    spec = parse_spec('entity A { status: x | y } -- uses redis\nopen question "Should redis cache this?"\n')
    assert spec.open_questions == ["Should redis cache this?"]
    assert "redis" not in spec.normative_text.lower()

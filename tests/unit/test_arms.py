"""Arms: `--arm NAME=SPEC` parsing and resolution against a case's own contexts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.arms import arms_for, parse_arm
from bench.cases import Case
from bench.errors import UsageError
from bench.models import ArmSpec
from bench.case_spec import CaseSpec


def _case(arms: list[str]) -> Case:
    return Case(id="red-box", spec=CaseSpec(title="t", arms=arms), gate=None, dir=Path("."), goldens_dir=Path("."))


def test_a_spec_sets_every_key():
    arm = parse_arm("cand = context:bare, agent:command, agent_cmd:true, model:m-1")
    assert arm == ArmSpec(name="cand", context="bare", agent="command", agent_cmd="true", model="m-1")


def test_an_empty_spec_is_just_a_name():
    assert parse_arm("bare") == ArmSpec(name="bare")


@pytest.mark.parametrize("text, problem", [
    ("x=context", "'context' is not KEY:VALUE"),
    ("x=colour:red", "'colour:red' is not KEY:VALUE with KEY one of agent, agent_cmd, context, model"),
    ("Big=context:bare", "'Big' is not a plain lowercase name"),
])
def test_bad_arms_name_the_text_and_the_fix(text, problem):
    with pytest.raises(UsageError) as caught:
        parse_arm(text)
    assert str(caught.value).startswith(f"--arm {text!r}: ") and problem in str(caught.value)


def test_without_arms_a_case_runs_its_own():
    assert arms_for(_case(["with-context", "bare"]), []) == [
        ArmSpec(name="with-context", context="with-context"), ArmSpec(name="bare", context="bare")]


def test_an_arm_takes_the_context_of_its_name_else_the_case_first():
    case = _case(["with-context", "bare"])
    resolved = arms_for(case, [parse_arm("bare"), parse_arm("cand=model:m")])
    assert [(a.name, a.context) for a in resolved] == [("bare", "bare"), ("cand", "with-context")]


def test_an_unknown_context_lists_the_case_arms():
    with pytest.raises(UsageError, match="arm 'x': case red-box has no context 'nope'; its arms are with-context, bare"):
        arms_for(_case(["with-context", "bare"]), [parse_arm("x=context:nope")])


def test_arm_names_must_differ():
    with pytest.raises(UsageError, match="arm names must differ: a, a"):
        arms_for(_case(["default"]), [parse_arm("a=agent:null"), parse_arm("a=model:m")])

"""Bad run flags and unreadable case files: one line naming the thing and the fix, before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.arms import arms_for, parse_arm
from bench.cases import load_case, load_toml
from bench.errors import CaseError, UsageError
from bench.case_spec import CaseSpec
from bench.paths import Project
from bench.request_checks import check_agent_cmd, check_label, check_request
from bench.run import RunRequest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("label", ["..", "../escape", "/tmp/abs", "a/b", "", ".hidden", "a b", "x" * 101, "é"])
def test_a_label_is_a_name_never_a_path(label):
    with pytest.raises(UsageError, match="is not a label name"):
        check_label(label)
    with pytest.raises(UsageError, match="is not a label name"):
        check_request(RunRequest(cases=["hello"], label=label))


@pytest.mark.parametrize("label", ["baseline", "run-2.1", "A_b", "20261130T000000Z", "-x"])
def test_plain_names_are_labels(label):
    assert check_label(label) == label


@pytest.mark.parametrize("field, value, words", [("timeout_s", -1, "--timeout -1"), ("timeout_s", 0, "--timeout 0"),
                                                 ("concurrency", 0, "--concurrency 0"),
                                                 ("concurrency", 10_000, "--concurrency 10000"),
                                                 ("trials", 0, "--trials")])
def test_numbers_that_cannot_mean_what_was_asked_are_refused(field, value, words):
    with pytest.raises(UsageError, match=words):
        check_request(RunRequest(cases=["hello"], **{field: value}))


def test_agent_cmd_for_no_command_agent_is_refused_not_ignored():
    with pytest.raises(UsageError, match="--agent-cmd is only used by the command agent.*oracle"):
        check_agent_cmd(RunRequest(cases=["hello"], agent="oracle", agent_cmd="echo hi"), [])
    check_agent_cmd(RunRequest(cases=["hello"], agent="command", agent_cmd="echo hi"), [])
    check_agent_cmd(RunRequest(cases=["hello"], agent_cmd="echo hi"), [None, "command"])  # an arm runs it
    with pytest.raises(UsageError):
        check_agent_cmd(RunRequest(cases=["hello"], agent_cmd="echo hi"), ["null", None])


def test_an_arm_that_sets_nothing_must_name_a_context_of_the_case():
    case = load_case(Project(ROOT), "hello")
    with pytest.raises(UsageError, match="--arm 'bad' sets nothing.*bad=agent:null.*default"):
        arms_for(case, [parse_arm("bad")])
    assert [a.context for a in arms_for(case, [parse_arm("default"), parse_arm("x=agent:null")])] == ["default"] * 2


def test_a_case_file_that_is_not_utf8_or_not_a_file_is_named(tmp_path):
    latin = tmp_path / "case.toml"
    latin.write_bytes('title = "Caf\xe9"\nimage = "base"\n'.encode("latin-1"))
    with pytest.raises(CaseError, match=r"case.toml: field '\(encoding\)': not UTF-8 text.*save it as UTF-8"):
        load_toml(latin, CaseSpec)
    folder = tmp_path / "gate.toml"
    folder.mkdir()
    with pytest.raises(CaseError, match="is a folder, not a file"):
        load_toml(folder, CaseSpec)


def test_a_results_folder_that_cannot_be_made_is_one_line(tmp_path, monkeypatch):
    from bench import run as run_module

    project = tmp_path / "project"
    for part in ("cases", "goldens", "images", "provenance"):
        shutil.copytree(ROOT / part, project / part)
    monkeypatch.setattr(run_module, "connect", lambda: None)
    monkeypatch.setattr(run_module, "check_mode", lambda seat, client: None)
    monkeypatch.setattr(run_module, "remove_orphans", lambda client: [])
    monkeypatch.setattr(run_module, "load_or_create", lambda: None)
    request = RunRequest(cases=["hello"], results=Path("/proc/nope"), label="x")
    with pytest.raises(UsageError, match="cannot write results to /proc/nope/x.*--results"):
        run_module.execute(request, Project(project), say=lambda line: None)

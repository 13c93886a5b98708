"""CLI option sets: every `bench run` option lands on a RunRequest or AgentOptions field, by name."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from bench.agents import AgentOptions
from bench.cli import by_name, cli, run
from bench.run import RunRequest


def test_every_run_option_is_a_field_of_the_request_or_the_agent_options():
    fields = {f.name for f in dataclasses.fields(RunRequest)} | {f.name for f in dataclasses.fields(AgentOptions)}
    names = {param.name for param in run.params} - {"as_json"}  # how the outcome is printed is not the request
    assert names <= fields, names - fields


def test_run_builds_the_request_by_name(monkeypatch, tmp_path):
    seen = {}

    def fake_execute(request, project, say):
        seen["request"] = request
        raise SystemExit(0)

    monkeypatch.setattr("bench.run.execute", fake_execute)
    monkeypatch.setattr("bench.cli._project", lambda: None)
    CliRunner().invoke(cli, ["run", "hello", "--trials", "3", "--arm", "a", "--arm", "b=model:m", "--agent-env", "TOKEN",
                             "--agent-network", "--max-turns", "7", "--seat", "software", "--ca-bundle", "ca.pem"])
    request = seen["request"]
    assert (request.cases, request.trials, request.arms, request.seat, request.ca_bundle) == (
        ["hello"], 3, ["a", "b=model:m"], "software", "ca.pem")
    assert request.agent_options == AgentOptions(max_turns=7, env=["TOKEN"], network=True)


def test_by_name_keeps_only_fields_and_lists_repeats():
    assert by_name(AgentOptions, {"env": ("A", "B"), "label": "x", "network": True}) == {"env": ["A", "B"], "network": True}


@pytest.mark.parametrize("command", [[], ["run"], ["images"], ["images", "build"], ["images", "rebuild"],
                                     ["images", "lock"], ["images", "load"], ["images", "prune"], ["images", "list"],
                                     ["cases"], ["cases", "validate"], ["compare"], ["report"], ["verify-provenance"],
                                     ["schema"]])
def test_every_help_works(command):
    done = CliRunner().invoke(cli, [*command, "--help"])
    assert done.exit_code == 0, done.output
    assert "Usage:" in done.output


def test_ca_bundle_is_one_option_everywhere():
    commands = [run, cli.commands["images"].commands["build"], cli.commands["images"].commands["rebuild"],
                cli.commands["images"].commands["lock"]]
    helps = {next(p.help for p in command.params if p.name == "ca_bundle") for command in commands}
    envvars = {next(p.envvar for p in command.params if p.name == "ca_bundle") for command in commands}
    assert len(helps) == 1 and envvars == {"BENCH_CA_BUNDLE"}

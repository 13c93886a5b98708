"""The option sets of `bench run` (and the verbs that share them): each option declared once.

Apart from bench/cli.py so the verbs module stays a size a reader takes in at once; each
set is named for what it fills, and each option's destination is a field name of what it
fills (RunRequest, AgentOptions), so requests are built by name (``by_name``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import click

from .cli_common import option_set, results_option

# --- option sets: each option declared once, each set named for what it fills -----------------


ca_bundle_option = click.option(
    "--ca-bundle", envvar="BENCH_CA_BUNDLE",
    help="Extra CA bundle to trust in image builds (and, in `bench run`, in agent containers given a network) "
         "[env BENCH_CA_BUNDLE].")


# Each destination is a field name of RunRequest (bench/run.py), so the request is built by name.
run_options = option_set(
    click.option("--label", help="Results folder name under --results: letters, digits, '.', '_', '-', not "
                                 "starting with '.' (default: a UTC timestamp)."),
    click.option("--agent", default="oracle", show_default=True, help="oracle, null, command, claude-code or codex."),
    click.option("--agent-cmd", help="Shell command for --agent command ({prompt_file}, {workspace})."),
    click.option("--trials", default=1, show_default=True, type=int, help="Trials per case x arm."),
    click.option("--timeout", "timeout_s", type=int, help="Agent wall clock in seconds (default: the case's)."),
    results_option("Where label folders are written."),
    ca_bundle_option,
    click.option("--arm", "arms", multiple=True, metavar="NAME=SPEC",
                 help="An arm to run, e.g. base=context:with-context or cand=context:bare,model:M (repeatable); "
                      "keys: context, agent, agent_cmd, model, plugin:PATH, subject:PATH|GIT_URL@COMMIT."),
    click.option("--concurrency", type=int, help="Trials at once (default: one per core, at most 4; at most 4 per core)."),
    click.option("--seat", type=click.Choice(["software", "gpu"]),
                 help="software: accept a software WebGPU seat (stamped on every record); gpu: give graders the "
                      "host's NVIDIA GPU. Default: software rendering, and cases that need a GPU are INCOMPLETE."),
    click.option("--subject", metavar="PATH|GIT_URL@COMMIT",
                 help="Replace the cases' pinned subject with a checkout or .tgz (PATH) or a commit; packed to a "
                      "tarball. An arm's own subject: wins for that arm."),
    click.option("--locked", is_flag=True,
                 help="Refuse to run (exit 2) if any image differs from provenance/images.lock.json, like uv --locked."),
    click.option("--track", "tracks", multiple=True, metavar="TRACK",
                 help="Run only this authoring track of tracked cases (repeatable); CASE@TRACK names one track."),
    click.option("--tag", "tags", multiple=True, metavar="TAG",
                 help="Also run every case whose case.toml `tags` has TAG (repeatable); with no CASES, only those."),
    click.option("--judge-model", help="Model the cases' judge checks ask (default claude-opus-4-1), through the "
                                       "credential proxy with ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)."),
    click.option("--judge-script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="Judge offline: answer judge checks from this script's `judge = true` turns."),
    click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                 help="local: trials on this machine's Docker engine; ray: each trial a Ray task on a cluster node "
                      "offering the `docker` resource (pip install 'hermetic-bench[ray]'; README: Running on a Ray "
                      "cluster)."),
    click.option("--ray-address", metavar="HOST:PORT",
                 help="The Ray cluster --executor ray joins (default: RAY_ADDRESS, else the one started here)."),
    click.option("--dry-run", is_flag=True,
                 help="Everything but the model call: build, stage, print the agent's argv and environment (secrets "
                      "redacted), grade the untouched workspace (FAILs expected; exit 0), mark the label a dry run."),
)

# Each destination is a field name of AgentOptions (bench/agents/__init__.py).
agent_options = option_set(
    click.option("--model", help="Model for model-driven agents (claude-code, codex); an arm's model:NAME wins."),
    click.option("--model-script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="Serve the model from this script (JSON/TOML turns) on a local endpoint, offline (claude-code)."),
    click.option("--max-turns", type=int, help="Model turns the agent CLI may take (default: the case's, 50)."),
    click.option("--agent-env", "env", multiple=True, metavar="NAME",
                 help="Environment variable handed to --agent command as a credential, redacted from records "
                      "(repeatable)."),
    click.option("--agent-network", "network", is_flag=True,
                 help="Give --agent command the bridge network instead of none."),
)


def by_name(model: type, values: dict[str, Any]) -> dict[str, Any]:
    """The values whose names are fields of the dataclass ``model``; repeatable options' tuples as lists."""
    names = {field.name for field in dataclasses.fields(model)}
    return {key: list(value) if isinstance(value, tuple) else value for key, value in values.items() if key in names}

"""Agents: what runs in the agent container, one small module each.

An agent turns (case, arm) into an ``AgentPlan``: the command the container runs, the
extra folders it needs, its environment and credentials, whether it needs a network,
and (for a scripted model) the endpoint sidecar. The trial lifecycle runs every plan
the same way, so an adapter cannot weaken isolation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .base import Agent, AgentPlan, AgentReport, agent_layer
from .claude_code import ClaudeCodeAgent
from .codex import CodexAgent
from .command import CommandAgent
from .external import EXTERNAL, ExternalAgent
from .null import NullAgent
from .oracle import OracleAgent

AGENTS: dict[str, type] = {"oracle": OracleAgent, "null": NullAgent, "command": CommandAgent,
                           "claude-code": ClaudeCodeAgent, "codex": CodexAgent}


@dataclass
class AgentOptions:
    """What the user chose for the agents of a run (from `bench run` options)."""

    model: str | None = None
    model_script: Path | None = None
    max_turns: int | None = None
    env: list[str] = field(default_factory=list)
    network: bool = False
    plugin_dir: str | None = None  # where an arm's plugin lies in the container (bench/plugin.py), per arm
    environ: dict[str, str] | None = None  # where model CLIs read credentials (default: the process's environment)


def make_agent(name: str, command: str | None = None, options: AgentOptions | None = None) -> Agent:
    """The named agent, or a UsageError listing the known ones and what they need.

    Called before anything is built, so a missing credential or a malformed model
    script stops the run at once (exit 2).
    """
    options = options or AgentOptions()
    if name == EXTERNAL:
        raise UsageError("--agent external is what `bench grade CASE DIR` records for work made outside bench; "
                         "grade a folder with `bench grade`, or run an agent (oracle, null, command, ...)")
    if name not in AGENTS:
        raise UsageError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    if options.plugin_dir and name == "codex":
        raise UsageError("--agent codex loads no plugin directory; run plugin: arms with claude-code, or with "
                         "command (the plugin is in $BENCH_PLUGIN_DIR)")
    if name == "command":
        if not command:
            raise UsageError("--agent command needs --agent-cmd 'SHELL COMMAND' ({prompt_file} and {workspace} are filled in)")
        return CommandAgent(command, options.env, options.network)
    if name == "claude-code":
        return ClaudeCodeAgent(options.model, options.model_script, options.max_turns, options.environ,
                               plugin_dir=options.plugin_dir)
    if name == "codex":
        return CodexAgent(options.model, options.model_script, options.environ)
    return AGENTS[name]()


__all__ = ["Agent", "AgentOptions", "AgentPlan", "AgentReport", "agent_layer", "make_agent", "AGENTS", "EXTERNAL",
           "ExternalAgent"]

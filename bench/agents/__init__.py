"""Agents: what runs in the agent container, one small module each.

An agent turns (case, arm) into an ``AgentPlan``: the command the container runs, the
extra folders it needs, its environment and whether it needs a network. The trial
lifecycle runs every plan the same way, so an adapter cannot weaken isolation.
"""

from __future__ import annotations

from ..errors import UsageError
from .base import Agent, AgentPlan
from .command import CommandAgent
from .null import NullAgent
from .oracle import OracleAgent

AGENTS: dict[str, type[Agent]] = {"oracle": OracleAgent, "null": NullAgent, "command": CommandAgent}


def make_agent(name: str, command: str | None = None) -> Agent:
    """The named agent, or a UsageError listing the known ones and what they need."""
    if name not in AGENTS:
        raise UsageError(f"unknown agent {name!r}; known agents: {', '.join(sorted(AGENTS))}")
    if name == "command":
        if not command:
            raise UsageError("--agent command needs --agent-cmd 'SHELL COMMAND' ({prompt_file} and {workspace} are filled in)")
        return CommandAgent(command)
    return AGENTS[name]()


__all__ = ["Agent", "AgentPlan", "make_agent", "AGENTS"]

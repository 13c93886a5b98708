"""The agent contract shared by every adapter."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..cases import Case
from ..models import AgentRecord

PROMPT_FILE = "/task/PROMPT.md"
WORKSPACE = "/workspace"


@dataclass
class AgentPlan:
    """What the agent container runs; built per trial, applied by the trial lifecycle."""

    command: list[str]
    trees: dict[str, Path] = field(default_factory=dict, repr=False)
    env: dict[str, str] = field(default_factory=dict, repr=False)
    network: str = "none"


class Agent(Protocol):
    name: str

    def record(self) -> AgentRecord:
        """Name and exact version, for provenance."""
        ...

    def plan(self, case: Case, arm: str) -> AgentPlan:
        ...

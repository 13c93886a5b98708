"""The `command` agent runs any shell command as the agent, from a template.

Placeholders: ``{prompt_file}`` (the task prompt inside the container) and
``{workspace}``; every other brace is left alone, so JSON in a command survives. Useful for wrapping a CLI this harness has no adapter for, and for
tests that need an agent with a specific behaviour (hang, plant files, search).
"""

from __future__ import annotations

import bench

from ..cases import Case
from ..hashing import sha256_bytes
from ..models import AgentRecord
from .base import PROMPT_FILE, WORKSPACE, AgentPlan


class CommandAgent:
    name = "command"

    def __init__(self, template: str) -> None:
        self.template = template
        self.command = template.replace("{prompt_file}", PROMPT_FILE).replace("{workspace}", WORKSPACE)

    def record(self) -> AgentRecord:
        return AgentRecord(name=self.name, version=f"{bench.__version__}+cmd.{sha256_bytes(self.template.encode())[:12]}")

    def plan(self, case: Case, arm: str) -> AgentPlan:
        return AgentPlan(command=["sh", "-c", self.command])

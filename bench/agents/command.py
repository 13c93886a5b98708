"""The `command` agent runs any shell command as the agent, from a template.

Placeholders: ``{prompt_file}`` (the task prompt inside the container) and
``{workspace}``. Useful for wrapping a CLI this harness has no adapter for, and for
tests that need an agent with a specific behaviour (hang, plant files, search).
"""

from __future__ import annotations

import bench

from ..cases import Case
from ..errors import UsageError
from ..hashing import sha256_bytes
from ..models import AgentRecord
from .base import PROMPT_FILE, WORKSPACE, AgentPlan


class CommandAgent:
    name = "command"

    def __init__(self, template: str) -> None:
        try:
            self.command = template.format(prompt_file=PROMPT_FILE, workspace=WORKSPACE)
        except (KeyError, IndexError) as exc:
            raise UsageError(f"--agent-cmd: unknown placeholder {exc}; use {{prompt_file}} or {{workspace}}") from None
        self.template = template

    def record(self) -> AgentRecord:
        return AgentRecord(name=self.name, version=f"{bench.__version__}+cmd.{sha256_bytes(self.template.encode())[:12]}")

    def plan(self, case: Case, arm: str) -> AgentPlan:
        return AgentPlan(command=["sh", "-c", self.command])

"""The `command` agent runs any shell command as the agent, from a template.

Placeholders: ``{prompt_file}`` (the task prompt inside the container) and
``{workspace}``; every other brace is left alone, so JSON in a command survives. Useful
for wrapping a CLI this harness has no adapter for, and for tests that need an agent
with a specific behaviour (hang, plant files, search).

A wrapped CLI may need credentials and a network: ``env`` names variables handed on
from the user's environment (treated as credentials, so redacted from every record),
and ``network`` gives the container the bridge network instead of none.
"""

from __future__ import annotations

import os

import bench

from ..cases import Case
from ..errors import UsageError
from ..hashing import sha256_bytes
from ..models import AgentRecord
from ..sandbox import WORKSPACE
from .base import PROMPT_FILE, AgentPlan, credentials


class CommandAgent:
    name = "command"

    def __init__(self, template: str, env: list[str] | tuple[str, ...] = (), network: bool = False,
                 environ: dict[str, str] | None = None) -> None:
        self.template, self.network = template, network
        self.command = template.replace("{prompt_file}", PROMPT_FILE).replace("{workspace}", WORKSPACE)
        environ = dict(os.environ if environ is None else environ)
        missing = [name for name in env if not environ.get(name)]
        if missing:
            raise UsageError(f"--agent-env {', '.join(missing)}: not set in the environment; set it or drop the option")
        self.secrets = credentials(list(env), environ)

    def record(self) -> AgentRecord:
        return AgentRecord(name=self.name, version=f"{bench.__version__}+cmd.{sha256_bytes(self.template.encode())[:12]}")

    def plan(self, case: Case, arm: str) -> AgentPlan:
        return AgentPlan(command=["sh", "-c", self.command], secrets=dict(self.secrets),
                         network="bridge" if self.network else "none")

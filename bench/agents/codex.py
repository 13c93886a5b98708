"""The `codex` agent: OpenAI's Codex CLI, headless (``codex exec --json``), in the agent container.

The CLI comes from the ``codex`` image layer (images/codex: the pinned, statically
linked linux-x64 build). Flags and their reasons, checked against ``codex exec --help``
of 0.171.0:

* ``--json`` — one JSON event per line (thread.started, turn.completed with usage, ...);
* ``--dangerously-bypass-approvals-and-sandbox`` — nobody approves, and Codex's own
  sandbox (bubblewrap) cannot start without capabilities; the container is the sandbox;
* ``--skip-git-repo-check`` — case workspaces are not git repositories;
* ``--ephemeral`` and ``CODEX_HOME`` in /tmp — no session files, a fresh configuration;
* ``-C /workspace``; ``-m MODEL`` when given.

Credentials: ``CODEX_API_KEY`` (what ``codex exec`` reads) or ``OPENAI_API_KEY`` (handed
on as CODEX_API_KEY too); ``OPENAI_BASE_URL`` becomes ``-c openai_base_url=...`` because
the CLI does not read that variable. Codex speaks the OpenAI Responses API, which the
scripted endpoint does not, so codex always needs a real model endpoint.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from ..cases import Case
from ..errors import UsageError
from ..models import AgentRecord
from ..transcripts import codex_report
from .base import PROMPT_FILE, TRANSCRIPT_JSONL, WORKSPACE, AgentPlan, credentials

CREDENTIALS = ("CODEX_API_KEY", "OPENAI_API_KEY")
BINARY = "/opt/agent/codex/bin/codex"
PATH = "/opt/agent/codex/codex-path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class CodexAgent:
    name = "codex"
    layer = "codex"

    def __init__(self, model: str | None = None, script: Path | None = None,
                 environ: dict[str, str] | None = None) -> None:
        environ = dict(os.environ if environ is None else environ)
        if script is not None:
            raise UsageError("--model-script serves the Anthropic Messages API (for --agent claude-code); "
                             "codex speaks the OpenAI Responses API — set CODEX_API_KEY or OPENAI_API_KEY instead")
        self.model = model
        self.secrets = credentials(CREDENTIALS, environ)
        self.base_url = environ.get("OPENAI_BASE_URL")
        self.installed: AgentRecord | None = None  # set from the image's labels (bench/agents/layer.py)
        if not self.secrets:
            raise UsageError("--agent codex needs a model: set CODEX_API_KEY (or OPENAI_API_KEY) in the environment; "
                             "`--agent oracle` validates the harness offline with no model at all")

    def record(self) -> AgentRecord:
        installed = self.installed or AgentRecord(name=self.name, version="unknown")
        return installed.model_copy(update={"model": self.model})

    def plan(self, case: Case, arm: str) -> AgentPlan:
        flags = ["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
                 "--ephemeral", "-C", WORKSPACE]
        if self.model:
            flags += ["-m", self.model]
        if self.base_url:
            flags += ["-c", f"openai_base_url={json.dumps(self.base_url)}"]
        command = f'mkdir -p "$CODEX_HOME" && exec {BINARY} {shlex.join(flags)} "$(cat {PROMPT_FILE})"'
        secrets = dict(self.secrets)
        secrets.setdefault("CODEX_API_KEY", secrets.get("OPENAI_API_KEY", ""))
        return AgentPlan(command=["sh", "-c", command], env={"CODEX_HOME": "/tmp/codex-home", "PATH": PATH},
                         secrets=secrets, network="bridge", transcript=TRANSCRIPT_JSONL, read_report=codex_report)

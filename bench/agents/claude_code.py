"""The `claude-code` agent: Anthropic's Claude Code CLI, headless, in the agent container.

The CLI comes from the ``claude-code`` image layer (images/claude-code: the pinned
standalone executable). It runs ``claude -p PROMPT --output-format stream-json
--verbose``, so its transcript is one JSON event per line and ends in a ``result``
event with status, turns, tokens and cost (bench/transcripts.py). Flags and their
reasons:

* ``--dangerously-skip-permissions`` — nobody is there to approve a tool call; the
  container is the sandbox (uid 1000, no capabilities, no network but the model's).
  The CLI refuses it as root, which the container never is.
* ``--max-turns`` — the case's ``limits.max_turns`` (or ``--max-turns``); the wall
  clock is the sandbox's.
* ``CLAUDE_CONFIG_DIR`` in /tmp — a fresh, empty configuration every trial;
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` — no telemetry, update checks or
  other calls besides the model's.

The model is either the real API (credentials from the user's environment, bridge
network) or the scripted endpoint (``--model-script``: a sidecar with no network whose
loopback the agent shares). Credentials set in the environment are handed to the agent
in both cases and redacted from every record.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..cases import Case
from ..errors import UsageError
from ..hashing import sha256_file
from ..models import AgentRecord
from ..transcripts import claude_report
from .base import PROMPT_FILE, TRANSCRIPT_JSONL, AgentPlan, EndpointPlan, credentials

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
SETTINGS = ("ANTHROPIC_BASE_URL",)
BINARY = "/opt/agent/claude-code/claude"
SCRIPTED_KEY = "bench-scripted-endpoint"


class ClaudeCodeAgent:
    name = "claude-code"
    layer = "claude-code"

    def __init__(self, model: str | None = None, script: Path | None = None, max_turns: int | None = None,
                 environ: dict[str, str] | None = None) -> None:
        environ = dict(os.environ if environ is None else environ)
        self.model, self.script, self.max_turns = model, script, max_turns
        self.secrets = credentials(CREDENTIALS, environ)
        self.settings = {name: environ[name] for name in SETTINGS if environ.get(name)}
        self.installed: AgentRecord | None = None  # set from the image's labels (bench/agents/layer.py)
        if script is None and not self.secrets:
            raise UsageError(
                "--agent claude-code needs a model: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL and "
                "ANTHROPIC_AUTH_TOKEN) in the environment, or pass --model-script FILE to run it offline against "
                "a scripted endpoint (examples in tests/fixtures/model-scripts/); `--agent oracle` validates the "
                "harness offline with no model at all")
        if script is not None:
            check_script(script)

    def record(self) -> AgentRecord:
        installed = self.installed or AgentRecord(name=self.name, version="unknown")
        return installed.model_copy(update={"model": self.model_label()})

    def model_label(self) -> str | None:
        """The model as provenance names it; a scripted run never passes for a real model."""
        if self.script is None:
            return self.model
        scripted = f"scripted:sha256:{sha256_file(self.script)[:16]}"
        return f"{self.model} ({scripted})" if self.model else scripted

    def plan(self, case: Case, arm: str) -> AgentPlan:
        max_turns = self.max_turns or case.spec.limits.max_turns
        flags = ["--output-format", "stream-json", "--verbose", "--max-turns", str(max_turns),
                 "--dangerously-skip-permissions"]
        if self.model:
            flags += ["--model", self.model]
        command = f'exec {BINARY} -p "$(cat {PROMPT_FILE})" {shlex.join(flags)}'
        env = {"CLAUDE_CONFIG_DIR": "/tmp/claude-config", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "DISABLE_AUTOUPDATER": "1", **self.settings}
        plan = AgentPlan(command=["sh", "-c", command], env=env, secrets=dict(self.secrets),
                         network="none" if self.script else "bridge", transcript=TRANSCRIPT_JSONL,
                         read_report=claude_report)
        if self.script is not None:
            plan.endpoint = EndpointPlan(self.script)
            plan.env["ANTHROPIC_BASE_URL"] = plan.endpoint.url
            if not self.secrets:
                plan.env["ANTHROPIC_API_KEY"] = SCRIPTED_KEY  # the CLI wants a key; the endpoint ignores it
        return plan


def check_script(script: Path) -> None:
    """Refuse a missing or malformed script before anything is built."""
    from ..model_endpoint import ScriptError, load_script

    try:
        load_script(script)
    except OSError as exc:
        raise UsageError(f"--model-script {script}: cannot read it ({exc.strerror})") from None
    except ScriptError as exc:
        raise UsageError(f"--model-script: {exc}") from None

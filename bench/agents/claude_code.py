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
* ``--plugin-dir`` — for a ``plugin:`` arm, the read-only copy of the checkout under
  test (bench/plugin.py), loaded the way a user loads a local plugin.
* ``CLAUDE_CONFIG_DIR`` in /tmp — a fresh, empty configuration every trial;
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` — no telemetry, update checks or
  other calls besides the model's.

The model is either the real API or the scripted endpoint (``--model-script``: a
sidecar with no network whose loopback the agent shares). The real API is reached
through the credential proxy (bench/agents/proxy.py): the agent's network is the
forwarder sidecar's loopback, ``ANTHROPIC_BASE_URL`` points there, and the credential
variable the user set (the first of CREDENTIALS) holds a placeholder, so the CLI still
sends the header kind the real one needs (``x-api-key`` for an API key, ``Authorization:
Bearer`` for a token), which the injector replaces with the real value on its way to
the user's ``ANTHROPIC_BASE_URL`` (default DEFAULT_URL). Under a script, credentials
set in the environment are handed to the agent and redacted from every record.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..cases import Case
from ..transcripts import claude_report
from .base import PLACEHOLDER, PROMPT_FILE, TRANSCRIPT_JSONL, AgentPlan, EndpointPlan, ModelCLIAgent

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
AUTH = {"ANTHROPIC_API_KEY": "x-api-key", "ANTHROPIC_AUTH_TOKEN": "bearer", "CLAUDE_CODE_OAUTH_TOKEN": "bearer"}
BASE_URL = "ANTHROPIC_BASE_URL"
DEFAULT_URL = "https://api.anthropic.com"
BINARY = "/opt/agent/claude-code/claude"
SCRIPTED_KEY = "bench-scripted-endpoint"


class ClaudeCodeAgent(ModelCLIAgent):
    name = "claude-code"
    layer = "claude-code"
    credential_names = CREDENTIALS
    credential_hint = "ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN)"
    auth = AUTH
    base_url_variable = BASE_URL
    default_url = DEFAULT_URL

    def __init__(self, model: str | None = None, script: Path | None = None, max_turns: int | None = None,
                 environ: dict[str, str] | None = None, plugin_dir: str | None = None) -> None:
        super().__init__(model, script, environ)
        self.max_turns, self.plugin_dir = max_turns, plugin_dir

    def plan(self, case: Case, arm: str) -> AgentPlan:
        max_turns = self.max_turns or case.spec.limits.max_turns
        flags = ["--output-format", "stream-json", "--verbose", "--max-turns", str(max_turns),
                 "--dangerously-skip-permissions"]
        if self.model:
            flags += ["--model", self.model]
        if self.plugin_dir:
            flags += ["--plugin-dir", self.plugin_dir]
        command = f'exec {BINARY} -p "$(cat {PROMPT_FILE})" {shlex.join(flags)}'
        env = {"CLAUDE_CONFIG_DIR": "/tmp/claude-config", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "DISABLE_AUTOUPDATER": "1"}
        plan = AgentPlan(command=["sh", "-c", command], env=env, transcript=TRANSCRIPT_JSONL, read_report=claude_report)
        if self.script is None:
            plan.proxy = self.proxy_plan()
            plan.env.update({BASE_URL: plan.proxy.url, plan.proxy.variable: PLACEHOLDER})
            return plan
        plan.endpoint = EndpointPlan(self.script)
        # A model key set in the environment is never handed on: the scripted endpoint needs none.
        plan.env.update({BASE_URL: plan.endpoint.url, "ANTHROPIC_API_KEY": SCRIPTED_KEY})
        return plan

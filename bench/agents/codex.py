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

Credentials: ``CODEX_API_KEY`` or ``OPENAI_API_KEY``, held by the credential proxy's
injector only (bench/agents/proxy.py), which sends it as ``Authorization: Bearer`` to
the user's ``OPENAI_BASE_URL`` (default DEFAULT_URL). Codex talks to the proxy's
loopback through a provider of its own (``provider``, as for the scripted endpoint
below) whose ``env_key`` variable, CODEX_API_KEY, holds a placeholder. Its
base URL is the loopback's root: Codex appends ``/responses`` to it, and the injector
appends that to the provider's base path, which is exactly where Codex would have
sent it with ``openai_base_url`` set to the user's URL.

Offline (``--model-script``): the scripted endpoint's Responses dialect, in a sidecar
whose loopback the agent shares (network ``none``). Codex is pointed at it through a
provider of its own (``-c model_provider=bench``, ``wire_api = "responses"``) rather than
``openai_base_url``: the built-in OpenAI provider first tries a WebSocket the endpoint
does not speak. The model defaults to ``bench-scripted``: for a model it has no metadata
for, Codex advertises its plain function tools (the shell is ``exec_command`` taking
``{"cmd": "..."}``), which a script can call; a known model's default may wrap them in
a JavaScript "code mode" tool instead.
"""

from __future__ import annotations

import json
import shlex

from ..cases import Case
from ..sandbox import WORKSPACE
from ..transcripts import codex_report
from .base import PLACEHOLDER, PROMPT_FILE, TRANSCRIPT_JSONL, AgentPlan, EndpointPlan, ModelCLIAgent
from .claude_code import SCRIPTED_KEY

CREDENTIALS = ("CODEX_API_KEY", "OPENAI_API_KEY")
DEFAULT_URL = "https://api.openai.com/v1"
KEY_VARIABLE = "CODEX_API_KEY"  # what the providers below read their key from
BINARY = "/opt/agent/codex/bin/codex"
PATH = "/opt/agent/codex/codex-path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SCRIPTED_MODEL = "bench-scripted"


class CodexAgent(ModelCLIAgent):
    name = "codex"
    layer = "codex"
    credential_names = CREDENTIALS
    credential_hint = "CODEX_API_KEY (or OPENAI_API_KEY)"
    script_examples = "tests/fixtures/model-scripts/*-codex.*"
    auth = {name: "bearer" for name in CREDENTIALS}
    base_url_variable = "OPENAI_BASE_URL"
    default_url = DEFAULT_URL

    def plan(self, case: Case, arm: str) -> AgentPlan:
        flags = ["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
                 "--ephemeral", "-C", WORKSPACE]
        endpoint = EndpointPlan(self.script) if self.script is not None else None
        proxy = self.proxy_plan() if endpoint is None else None
        model = self.model or (SCRIPTED_MODEL if endpoint else None)
        if model:
            flags += ["-m", model]
        if endpoint:
            flags += provider("bench scripted endpoint", f"{endpoint.url}/v1")
        else:
            flags += provider("bench credential proxy", proxy.url)
        command = f'mkdir -p "$CODEX_HOME" && exec {BINARY} {shlex.join(flags)} "$(cat {PROMPT_FILE})"'
        env = {"CODEX_HOME": "/tmp/codex-home", "PATH": PATH, KEY_VARIABLE: PLACEHOLDER if proxy else SCRIPTED_KEY}
        # No model key is ever handed on: the proxy holds it, and the scripted endpoint needs none.
        return AgentPlan(command=["sh", "-c", command], env=env, endpoint=endpoint, proxy=proxy,
                         transcript=TRANSCRIPT_JSONL, read_report=codex_report)


def provider(name: str, base_url: str) -> list[str]:
    """``-c`` flags that make Codex talk plain HTTP Responses to ``base_url`` (a sidecar on its loopback).

    A provider of our own because the built-in one tries a WebSocket first (five
    failed reconnects, then a fallback, all in the transcript) and may send the
    "responses-lite" request shape; ``env_key`` names the variable holding its key.
    """
    table = {"name": name, "base_url": base_url, "wire_api": "responses", "env_key": KEY_VARIABLE}
    pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in table.items())
    return ["-c", 'model_provider="bench"', "-c", f"model_providers.bench={{{pairs}}}"]

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
the CLI does not read that variable.

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
from pathlib import Path

from ..cases import Case
from ..transcripts import codex_report
from .base import PROMPT_FILE, TRANSCRIPT_JSONL, WORKSPACE, AgentPlan, EndpointPlan, ModelCLIAgent
from .claude_code import SCRIPTED_KEY

CREDENTIALS = ("CODEX_API_KEY", "OPENAI_API_KEY")
BINARY = "/opt/agent/codex/bin/codex"
PATH = "/opt/agent/codex/codex-path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SCRIPTED_MODEL = "bench-scripted"


class CodexAgent(ModelCLIAgent):
    name = "codex"
    layer = "codex"
    credential_names = CREDENTIALS
    credential_hint = "CODEX_API_KEY (or OPENAI_API_KEY)"
    script_examples = "tests/fixtures/model-scripts/*-codex.*"

    def __init__(self, model: str | None = None, script: Path | None = None,
                 environ: dict[str, str] | None = None) -> None:
        super().__init__(model, script, environ)
        self.base_url = self.environ.get("OPENAI_BASE_URL")

    def plan(self, case: Case, arm: str) -> AgentPlan:
        flags = ["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
                 "--ephemeral", "-C", WORKSPACE]
        endpoint = EndpointPlan(self.script) if self.script is not None else None
        model = self.model or (SCRIPTED_MODEL if endpoint else None)
        if model:
            flags += ["-m", model]
        if endpoint:
            flags += scripted_provider(endpoint)
        elif self.base_url:
            flags += ["-c", f"openai_base_url={json.dumps(self.base_url)}"]
        command = f'mkdir -p "$CODEX_HOME" && exec {BINARY} {shlex.join(flags)} "$(cat {PROMPT_FILE})"'
        secrets = dict(self.secrets)
        env = {"CODEX_HOME": "/tmp/codex-home", "PATH": PATH}
        if secrets:
            secrets.setdefault("CODEX_API_KEY", secrets.get("OPENAI_API_KEY", ""))
        else:
            env["CODEX_API_KEY"] = SCRIPTED_KEY  # the provider wants a key; the endpoint ignores it
        return AgentPlan(command=["sh", "-c", command], env=env, secrets=secrets,
                         network="none" if endpoint else "bridge", endpoint=endpoint, transcript=TRANSCRIPT_JSONL,
                         read_report=codex_report)


def scripted_provider(endpoint: EndpointPlan) -> list[str]:
    """``-c`` flags that make Codex talk plain HTTP Responses to the scripted endpoint.

    A provider of our own because the built-in one tries a WebSocket first (five
    failed reconnects, then a fallback, all in the transcript) and may send the
    "responses-lite" request shape; ``env_key`` names the variable holding its key.
    """
    provider = {"name": "bench scripted endpoint", "base_url": f"{endpoint.url}/v1", "wire_api": "responses",
                "env_key": "CODEX_API_KEY"}
    table = ", ".join(f"{key} = {json.dumps(value)}" for key, value in provider.items())
    return ["-c", 'model_provider="bench"', "-c", f"model_providers.bench={{{table}}}"]

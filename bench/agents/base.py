"""The agent contract shared by every adapter.

An adapter says *what* runs; the trial lifecycle decides *how*. Everything that could
weaken isolation is a field of the plan the lifecycle applies the same way for every
agent: the network (``none`` unless a model endpoint is needed), credentials (kept
apart from plain settings so every recorded file can be redacted of them), and the
model's sidecars: the scripted endpoint, or the credential proxy that holds the real
model credential so the agent never does (both share their loopback with the agent).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..cases import Case
from ..errors import UsageError
from ..hashing import sha256_file
from ..models import AgentRecord
from ..transcripts import AgentReport

PROMPT_FILE = "/task/PROMPT.md"
TRANSCRIPT_LOG = "transcript.log"
TRANSCRIPT_JSONL = "transcript.jsonl"
MIN_SECRET_CHARS = 8
PLACEHOLDER = "bench-proxy-placeholder"  # the only model key an agent behind the credential proxy holds


@dataclass
class EndpointPlan:
    """A scripted model endpoint in a sidecar; the agent reaches it on the shared loopback."""

    script: Path
    port: int = 8765
    log_prompts: bool = False  # a judge's endpoint logs the prompts it was sent (bench/grading/judge.py)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class ProxyPlan:
    """The credential proxy between the agent and its real provider (bench/agents/proxy.py).

    The agent talks plain HTTP to ``url`` on the loopback it shares with the forwarder
    sidecar, holding only PLACEHOLDER. The injector sidecar (egress ``network``) holds
    ``secret``, puts it in the ``auth`` header (``x-api-key``, or ``bearer`` for
    ``Authorization: Bearer``) and forwards to ``upstream`` only. ``variable`` names the
    credential, for redaction markers and log lines.
    """

    upstream: str
    auth: str
    variable: str
    secret: str = field(repr=False)
    port: int = 8766
    network: str = "bridge"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class AgentPlan:
    """What the agent container runs; built per trial, applied by the trial lifecycle.

    ``env`` is plain settings; ``secrets`` are credentials, handed to the agent's
    environment like ``env`` but replaced by ``[REDACTED:NAME]`` in every recorded file.
    A model credential behind the credential proxy (``proxy``) is in neither: only the
    injector sidecar gets it; ``redactions()`` still lists it, so a provider that echoes
    it cannot put it into a record either.
    ``transcript`` names the file the agent's stdout is kept in: ``transcript.jsonl``
    for CLIs that print one JSON event per line (stderr then goes to agent-stderr.log),
    ``transcript.log`` for anything else. ``read_report`` turns the transcript into
    status and usage; agents without one report nothing.
    """

    command: list[str]
    trees: dict[str, Path] = field(default_factory=dict, repr=False)
    env: dict[str, str] = field(default_factory=dict, repr=False)
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    network: str = "none"
    endpoint: EndpointPlan | None = None
    proxy: ProxyPlan | None = None
    transcript: str = TRANSCRIPT_LOG
    read_report: Callable[[Path, bool], AgentReport] | None = field(default=None, repr=False)

    def redactions(self) -> dict[str, str]:
        """Every credential this plan involves, by name: what the record step must redact."""
        return {**self.secrets, **({self.proxy.variable: self.proxy.secret} if self.proxy else {})}


class Agent(Protocol):
    name: str

    def record(self) -> AgentRecord:
        """Name and exact version, for provenance."""
        ...

    def plan(self, case: Case, arm: str) -> AgentPlan:
        ...


def agent_layer(agent: Agent) -> str | None:
    """The images/ folder holding the agent's CLI, for adapters that need one (None: runs on the workspace image)."""
    return getattr(agent, "layer", None)


def credentials(names: tuple[str, ...] | list[str], source: dict[str, str] | None = None) -> dict[str, str]:
    """The named variables that are set (non-empty) in the user's environment.

    A value shorter than MIN_SECRET_CHARS is refused: redacting it from every recorded
    file would mangle unrelated text, and keeping it would break the redaction promise.
    """
    source = os.environ if source is None else source
    found = {name: source[name] for name in names if source.get(name)}
    for name, value in found.items():
        if len(value) < MIN_SECRET_CHARS:
            raise UsageError(f"{name} is set to a value shorter than {MIN_SECRET_CHARS} characters; credentials are "
                             f"redacted from every record, which needs a longer value — unset it or pass a real one")
    return found


class ModelCLIAgent:
    """What every model-driven CLI adapter shares: a model to talk to, and how provenance names it.

    The model is the real API (credentials from the user's environment, which only the
    credential proxy's injector ever holds) or a scripted endpoint (``--model-script``).
    With neither, the adapter refuses before anything is built, naming the variable to
    set; a scripted run is recorded as such in provenance, so it can never pass for a
    real model.
    """

    name: str
    layer: str
    credential_names: tuple[str, ...]
    credential_hint: str  # what to set, e.g. "ANTHROPIC_API_KEY (or ...)"
    auth: dict[str, str]  # credential variable -> the header the injector puts it in (x-api-key | bearer)
    base_url_variable: str  # the user's provider URL variable, e.g. ANTHROPIC_BASE_URL
    default_url: str  # the provider when that variable is unset
    script_examples: str = "tests/fixtures/model-scripts/"

    def __init__(self, model: str | None = None, script: Path | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.model, self.script = model, script
        self.secrets = credentials(self.credential_names, self.environ)
        if script is None and not self.secrets:
            raise UsageError(
                f"--agent {self.name} needs a model: set {self.credential_hint} in the environment, or pass "
                f"--model-script FILE to run it offline against a scripted endpoint (examples in "
                f"{self.script_examples}); `--agent oracle` validates the harness offline with no model at all")
        if script is not None:
            check_script(script)
        else:
            self.proxy_plan()

    def proxy_plan(self) -> ProxyPlan:
        """The credential proxy for the first credential set (in ``credential_names`` order).

        The provider is the user's ``base_url_variable`` or ``default_url``; the
        constructor calls this once, so a malformed URL stops the run before anything is built.
        """
        from ..credential_proxy import ProxyError, parse_upstream

        variable = next(name for name in self.credential_names if name in self.secrets)
        upstream = self.environ.get(self.base_url_variable) or self.default_url
        try:
            parse_upstream(upstream)
        except ProxyError as exc:
            raise UsageError(f"{self.base_url_variable}: {exc}") from None
        return ProxyPlan(upstream=upstream, auth=self.auth[variable], variable=variable, secret=self.secrets[variable])

    def record(self) -> AgentRecord:
        """Name and model; the installed version comes from the agent's image (TrialSpec.installed)."""
        return AgentRecord(name=self.name, version="unknown", model=self.model_label())

    def model_label(self) -> str | None:
        """The model as provenance names it; a scripted run never passes for a real model."""
        if self.script is None:
            return self.model
        scripted = f"scripted:sha256:{sha256_file(self.script)[:16]}"
        return f"{self.model} ({scripted})" if self.model else scripted


def check_script(script: Path, flag: str = "--model-script") -> None:
    """Refuse a missing or malformed script (``flag``'s: --model-script, --judge-script) before anything is built."""
    from ..model_endpoint import ScriptError, load_script

    try:
        load_script(script)
    except OSError as exc:
        raise UsageError(f"{flag} {script}: cannot read it ({exc.strerror})") from None
    except ScriptError as exc:
        raise UsageError(f"{flag}: {exc}") from None

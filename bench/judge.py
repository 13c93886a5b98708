"""The run's judge, seen from the host: which model, reached how, and which credential every record must lose.

Why a sidecar, as for an agent: the judge runs in a grader container whose only network
is the model's (bench/grading/judge.py), and it never holds a key. Offline and in tests
(``--judge-script``) that network is the scripted model endpoint's loopback
(bench/agents/endpoint.py), logging the prompts it was sent; against a real provider it
is the credential proxy's forwarder (bench/agents/proxy.py), whose injector alone holds
ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) and sends it to ANTHROPIC_BASE_URL (default
the Anthropic API). That credential is added to every trial's redactions, so a provider
that echoes it cannot put it into a record either.

Everything is refused before anything is built: a gating judge with no way to reach a
model, a malformed script or provider URL, and judge flags on a run whose cases have no
judge check (they would be silently ignored). An advisory judge without a model is
recorded as not judged; it never decides a verdict anyway.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from .agents.base import EndpointPlan, ProxyPlan, credentials
from .agents.claude_code import AUTH, BASE_URL, DEFAULT_URL
from .cases import Case
from .errors import UsageError
from .hashing import sha256_file

DEFAULT_MODEL = "claude-opus-4-1"
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")  # the Messages API's own; in this order
HOW_TO_REACH = ("set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for another provider), or pass "
                "--judge-script FILE to judge offline against a scripted endpoint")


@dataclass(frozen=True)
class JudgeSetup:
    """The run's judge model and the one endpoint it reaches: a scripted one, or a provider behind the proxy."""

    model: str
    endpoint: EndpointPlan | None = None
    proxy: ProxyPlan | None = None

    @property
    def url(self) -> str:
        """Where the judge client sends its request, on the loopback it shares with the sidecar."""
        return self.endpoint.url if self.endpoint else self.proxy.url

    @property
    def label(self) -> str:
        """The endpoint as results name it: the script by its bytes' SHA-256, or the provider's URL."""
        if self.endpoint:
            return f"scripted:sha256:{sha256_file(self.endpoint.script)[:16]}"
        return self.proxy.upstream

    def redactions(self) -> dict[str, str]:
        return {self.proxy.variable: self.proxy.secret} if self.proxy else {}

    def bind(self, client, run_id: str, image: str, wheel: Path, ca: Path | None, task: str) -> BoundJudge:
        """The judge for one trial: its sidecar runs ``image`` (the grader's) with the harness ``wheel``."""
        from .agents.endpoint import scripted_endpoint
        from .agents.proxy import credential_proxy

        if self.endpoint:
            network = partial(scripted_endpoint, client, run_id, image, wheel, self.endpoint)
        else:
            network = partial(credential_proxy, client, run_id, image, wheel, self.proxy, ca=ca)
        return BoundJudge(self, task, network)


@dataclass(frozen=True)
class BoundJudge:
    """The run's judge for one trial: the case's task prompt and the sidecar that is the judge's only network.

    ``network(log_to)`` starts the sidecar and yields the network mode the judge container
    joins; the sidecar's own log (request lines; a scripted endpoint's prompts too) is
    kept in ``log_to`` and the sidecar removed when the block exits.
    """

    setup: JudgeSetup
    task: str
    network: Callable[[Path], AbstractContextManager[str]]

    @property
    def log_name(self) -> str:
        return "judge-endpoint.log" if self.setup.endpoint else "judge-proxy.log"


def judge_for(cases: list[Case], model: str | None, script: Path | None,
              environ: dict[str, str] | None = None) -> JudgeSetup | None:
    """The run's judge, or None when no case has a judge check (or only advisory ones and no model is reachable)."""
    judged = [(case.id, check) for case in cases for check in case.gate.checks if check.kind == "judge"]
    if not judged:
        if model or script:
            flag = "--judge-script" if script else "--judge-model"
            raise UsageError(f"{flag}: none of this run's cases has a judge check (kind = \"judge\" in its gate.toml), "
                             f"so it would be ignored — drop {flag}")
        return None
    setup = _scripted(model, script) if script else _provider(model, os.environ if environ is None else environ)
    gating = next(((case, check.name) for case, check in judged if check.gating), None)
    if setup is None and (gating or model):
        what = f"case {gating[0]}'s judge check {gating[1]!r} is a gate (advisory = false)" if gating else \
            f"--judge-model {model}"
        raise UsageError(f"{what}, and no judge model is reachable: {HOW_TO_REACH}")
    return setup


def _scripted(model: str | None, script: Path) -> JudgeSetup:
    from .agents.base import check_script

    check_script(script, "--judge-script")
    return JudgeSetup(model or DEFAULT_MODEL, endpoint=EndpointPlan(script, log_prompts=True))


def _provider(model: str | None, environ: dict[str, str]) -> JudgeSetup | None:
    from .credential_proxy import ProxyError, parse_upstream

    found = credentials(CREDENTIALS, environ)
    if not found:
        return None
    variable = next(name for name in CREDENTIALS if name in found)
    upstream = environ.get(BASE_URL) or DEFAULT_URL
    try:
        parse_upstream(upstream)
    except ProxyError as exc:
        raise UsageError(f"{BASE_URL}: {exc}") from None
    return JudgeSetup(model or DEFAULT_MODEL,
                      proxy=ProxyPlan(upstream=upstream, auth=AUTH[variable], variable=variable, secret=found[variable]))

"""`bench run --dry-run`: everything a run does except the model call.

Why a stand-in agent rather than a branch in the lifecycle: the point of a dry run is
to exercise the real path (resolve, build the images, stage the workspace, lay the
skills and plugin, export, grade, record, sign), so every phase stays as it is and only
the agent's plan changes. ``DryRunAgent`` asks the real adapter for its plan, prints
the argv and environment it would have run with (every credential as its
``[REDACTED:NAME]`` marker, and every printed line passed through the redactor too,
so a value copied into a command line is caught), then hands the lifecycle a plan
that runs ``true`` on network ``none`` with no model sidecar: the scripted endpoint
and the credential proxy are never started, so no model endpoint can be reached.

The graded workspace is the untouched scaffold, so FAILs are expected. So that they
can never pass for an agent's results, every result is marked ``dry_run``, run.json
records the option (a resume with or without it is refused), `bench run` exits 0 on
them, and `bench compare` refuses any side holding a dry run (bench/compare.py).
"""

from __future__ import annotations

import shlex
import threading
from typing import Callable

from .agents import Agent, AgentPlan, agent_layer
from .cases import Case
from .models import AgentRecord
from .redact import Redactor, marker

Say = Callable[[str], None]
NOTE = "dry run: the agent is not started and no model is called; the untouched workspace is graded"
PLACEHOLDER = "dry-run-placeholder-credential-never-sent"


def dry_environ(agent: str) -> dict[str, str]:
    """The environment a dry run builds a model CLI's plan from: the user's, and where it holds no credential for
    the agent, a placeholder, so a dry run needs no key (the seed's promise); it is redacted where printed like a
    real one, and nothing is ever sent with it, since no model endpoint is started."""
    import os

    from .agents import AGENTS

    names = getattr(AGENTS.get(agent), "credential_names", ())
    environ = dict(os.environ)
    if names and not any(environ.get(name) for name in names):
        environ[names[0]] = PLACEHOLDER
    return environ


class DryRunAgent:
    """Stands in for ``inner``: the same name, image layer and record, a plan that does nothing."""

    def __init__(self, inner: Agent, say: Say) -> None:
        self.inner, self.say = inner, say
        self.name = inner.name
        self.layer = agent_layer(inner)  # the same agent image is built and staged as a real run's
        self._printed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def record(self) -> AgentRecord:
        return self.inner.record()

    def plan(self, case: Case, arm: str) -> AgentPlan:
        real = self.inner.plan(case, arm)
        with self._lock:
            first = (case.id, arm) not in self._printed
            self._printed.add((case.id, arm))
        if first:
            for line in describe(real, f"{case.id} ({arm or 'no context'})"):
                self.say(line)
        return AgentPlan(command=["true"], trees=dict(real.trees))


def describe(plan: AgentPlan, where: str) -> list[str]:
    """What the agent would have run, as printable lines, with no credential in any of them."""
    secrets = plan.redactions()
    lines = [f"{NOTE} — {where}", f"  argv: {shlex.join(plan.command)}", "  env:"]
    lines += [f"    {name}={value}" for name, value in sorted(plan.env.items())]
    lines += [f"    {name}={marker(name)}" for name in sorted(plan.secrets)]
    lines.append(f"  network: {_network(plan)}")
    redactor = Redactor(secrets)
    return [redactor.text(line) for line in lines] if redactor else lines


def _network(plan: AgentPlan) -> str:
    if plan.endpoint is not None:
        return f"the scripted endpoint's loopback ({plan.endpoint.url}, script {plan.endpoint.script.name}); not started"
    if plan.proxy is not None:
        return (f"the credential proxy's loopback ({plan.proxy.url}), forwarding to {plan.proxy.upstream} with "
                f"{plan.proxy.variable}={marker(plan.proxy.variable)}; not started")
    return f"{plan.network} (a dry run runs on none)"

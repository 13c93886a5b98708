"""The agent container's network, decided in one place from its plan.

Why one place: the network is where isolation is won or lost, so every agent gets it
the same way. An agent without a model gets ``plan.network`` (``none`` unless a
command agent asked for more). A model-driven agent never gets a route out: it joins
the network namespace of a sidecar that has none, and reaches its model on that
sidecar's loopback: the scripted endpoint (``plan.endpoint``), or the credential
proxy's forwarder (``plan.proxy``), behind which the injector holds the real
credential.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import docker

from ..paths import TrialPaths
from .base import AgentPlan
from .endpoint import scripted_endpoint
from .proxy import credential_proxy


@contextmanager
def agent_network(client: docker.DockerClient, run_id: str, image_id: str, wheel: Path, plan: AgentPlan, logs: Path,
                  ca: Path | None) -> Iterator[str]:
    """Yield the network mode for the agent container: plan.network when it needs no model sidecar;
    the scripted endpoint's namespace (plan.endpoint); or the credential proxy's forwarder (plan.proxy).
    `logs` is the trial folder: endpoint.log / proxy.log are written there.

    The sidecars run ``image_id`` (any image with python3: the agent's) with the harness
    ``wheel``; ``ca`` (the run's --ca-bundle) is trusted by the proxy's injector. They are
    removed when the block exits, however it exits.
    """
    paths = TrialPaths(logs)
    if plan.endpoint is not None:
        with scripted_endpoint(client, run_id, image_id, wheel, plan.endpoint, paths.endpoint_log) as network:
            yield network
    elif plan.proxy is not None:
        with credential_proxy(client, run_id, image_id, wheel, plan.proxy, paths.proxy_log, ca) as network:
            yield network
    else:
        yield plan.network

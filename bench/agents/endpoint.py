"""The scripted model endpoint's sidecar container, seen from the host.

Why a sidecar and a shared namespace: the agent must reach its model on
``127.0.0.1`` and nothing else. The sidecar runs ``bench.model_endpoint`` (from the
harness wheel) with network ``none``, so its namespace holds only a loopback; the
agent's container is created with ``network_mode=container:<sidecar>`` and shares
exactly that loopback. Neither has a route out. The sidecar carries the run's labels
(role ``endpoint``), so the run's cleanup removes it like any other container, and it
is removed here when the agent is done, whatever happened.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import docker

from ..engine import ROLE_LABEL, run_labels
from ..harness import WHEEL_IN_CONTAINER
from ..model_endpoint import READY
from ..models import Limits
from ..docker_sandbox import DockerSandbox
from ..sandbox import SandboxSpec, tar_tree
from .base import EndpointPlan

SCRIPT_IN_CONTAINER = "/opt/bench/model-script"
LIMITS = Limits(cpus=0.5, memory_mb=256, pids=64)
READY_WITHIN_S = 30


@contextmanager
def scripted_endpoint(client: docker.DockerClient, run_id: str, image: str, wheel: Path, plan: EndpointPlan,
                      log_to: Path) -> Iterator[str]:
    """Start the sidecar and wait until it listens; yield the network mode the agent joins with.

    On exit the sidecar's output (one line per request, no headers or bodies) is kept
    in ``log_to`` and the sidecar is removed.
    """
    script = f"{SCRIPT_IN_CONTAINER}{plan.script.suffix or '.json'}"
    spec = SandboxSpec(
        image=image, workdir="/", limits=LIMITS, env={"PYTHONPATH": WHEEL_IN_CONTAINER},
        command=["python3", "-m", "bench.model_endpoint", "--script", script, "--port", str(plan.port),
                 *(["--log-prompts"] if plan.log_prompts else [])],
        labels=run_labels(run_id, **{ROLE_LABEL: "endpoint"}),
    )
    with DockerSandbox(client, spec) as box:
        try:
            box.put(tar_tree([], {WHEEL_IN_CONTAINER.lstrip("/"): wheel.read_bytes(),
                                      script.lstrip("/"): plan.script.read_bytes()}))
            box.start()
            box.until_ready(READY, "the model endpoint", READY_WITHIN_S)
            yield f"container:{box.id}"
        finally:
            _keep_log(box, log_to)


def _keep_log(box: DockerSandbox, log_to: Path) -> None:
    try:
        log_to.write_text(box.output())
    except Exception:
        pass  # the engine may be gone; the trial's record says why

"""The credential proxy's sidecars, seen from the host.

Why: a model credential handed to the agent is one ``env`` away from its transcript,
its workspace or a provider it was never meant to reach. So the agent gets a
placeholder, and two sidecars (both running ``bench.credential_proxy`` from the harness
wheel) stand between it and the provider:

* the **injector** holds the credential in its environment and has egress (the plan's
  ``network``, the bridge by default); it listens on a Unix socket in a volume;
* the **forwarder** has network ``none`` and the volume read-only; it listens on
  ``127.0.0.1:PORT`` and pipes each connection to the injector's socket. The agent's
  container is created with ``network_mode=container:<forwarder>``: it shares only that
  loopback, has no route out, and cannot read the injector's environment.

The volume is a small tmpfs owned by the sidecars' uid, so nothing touches the disk.
All three carry the run's labels (roles ``proxy-injector``, ``proxy-forwarder``,
``proxy``), so the run's cleanup finds them, and are removed here when the agent is
done, whatever happened. The injector's request lines (no headers, no bodies) and the
forwarder's output are kept in the trial's ``proxy.log``.
"""

from __future__ import annotations

import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import docker

from ..credential_proxy import CREDENTIAL_ENV, READY
from ..engine import ROLE_LABEL, engine_faults, run_labels
from ..harness import WHEEL_IN_CONTAINER
from ..docker_sandbox import DockerSandbox
from ..models import Limits
from ..sandbox import SandboxSpec, tar_tree
from ..trust import CONTAINER_PATH as CA_IN_CONTAINER
from .base import ProxyPlan

PROXY_DIR = "/run/bench-proxy"
SOCKET = f"{PROXY_DIR}/injector.sock"
LIMITS = Limits(cpus=0.5, memory_mb=256, pids=128)  # a thread or two per open connection
READY_WITHIN_S = 30
VOLUME_OPTIONS = {"type": "tmpfs", "device": "tmpfs", "o": "uid=1000,gid=1000,mode=0700,size=1m"}


@contextmanager
def credential_proxy(client: docker.DockerClient, run_id: str, image: str, wheel: Path, plan: ProxyPlan,
                     log_to: Path, ca: Path | None = None) -> Iterator[str]:
    """Start the injector, then the forwarder, each once it listens; yield the agent's network mode.

    ``ca`` (the run's --ca-bundle) is trusted by the injector beside the system bundle.
    Raises InfrastructureError when a sidecar cannot start; its output is in the message.
    """
    boxes: list[DockerSandbox] = []
    with ExitStack() as cleanup:
        volume = _volume(client, run_id)
        cleanup.callback(_remove_volume, volume)
        try:
            command = ["inject", "--socket", SOCKET, "--upstream", plan.upstream, "--auth", plan.auth]
            files = {WHEEL_IN_CONTAINER: wheel.read_bytes()}
            if ca is not None:
                command += ["--ca-bundle", CA_IN_CONTAINER]
                files[CA_IN_CONTAINER] = ca.read_bytes()
            injector = _sidecar(client, cleanup, run_id, image, volume, "injector", command, files,
                                network=plan.network, env={CREDENTIAL_ENV: plan.secret})
            boxes.append(injector)
            forwarder = _sidecar(client, cleanup, run_id, image, volume, "forwarder",
                                 ["forward", "--socket", SOCKET, "--port", str(plan.port)],
                                 {WHEEL_IN_CONTAINER: files[WHEEL_IN_CONTAINER]})
            boxes.append(forwarder)
            yield f"container:{forwarder.id}"
        finally:
            _keep_logs(boxes, log_to)


def _sidecar(client: docker.DockerClient, cleanup: ExitStack, run_id: str, image: str, volume, role: str,
             command: list[str], files: dict[str, bytes], network: str = "none",
             env: dict[str, str] | None = None) -> DockerSandbox:
    """One started sidecar that printed its ready line; removed when ``cleanup`` closes.

    Only the injector binds its socket in the volume; the forwarder just connects, so
    it gets the volume read-only.
    """
    mode = "rw" if role == "injector" else "ro"
    spec = SandboxSpec(image=image, workdir="/", limits=LIMITS, network=network, role=f"proxy-{role}",
                       env={"PYTHONPATH": WHEEL_IN_CONTAINER, **(env or {})},
                       command=["python3", "-m", "bench.credential_proxy", *command],
                       labels=run_labels(run_id, **{ROLE_LABEL: f"proxy-{role}"}),
                       volumes={volume.name: {"bind": PROXY_DIR, "mode": mode}})
    box = cleanup.enter_context(DockerSandbox(client, spec))
    box.put(tar_tree([], {name.lstrip("/"): data for name, data in files.items()}))
    box.start()
    box.until_ready(READY, f"the credential proxy's {role}", READY_WITHIN_S)
    return box


def _volume(client: docker.DockerClient, run_id: str):
    with engine_faults("creating the credential proxy's volume"):
        return client.volumes.create(name=f"bench-proxy-{uuid.uuid4().hex[:12]}", driver="local",
                                     driver_opts=VOLUME_OPTIONS, labels=run_labels(run_id, **{ROLE_LABEL: "proxy"}))


def _remove_volume(volume) -> None:
    try:
        volume.remove(force=True)
    except Exception:
        pass  # the engine may be gone; the run's cleanup removes it by label


def _keep_logs(boxes: list[DockerSandbox], log_to: Path) -> None:
    """The injector's request lines, then the forwarder's output (errors only, past its ready line)."""
    try:
        log_to.write_text("".join(box.output() for box in boxes))
    except Exception:
        pass  # the engine may be gone; the trial's record says why


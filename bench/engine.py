"""The connection to the Docker engine, and the labels that make cleanup exact.

Everything the harness creates carries ``bench.harness`` plus the run's id and the
host pid that owns it. Cleanup removes by those labels only, so it can never touch a
container or image the harness did not make; a later run removes the leftovers of a
run whose process is gone (killed, or cut off when the engine stopped).
"""

from __future__ import annotations

import os
import socket
from contextlib import contextmanager
from typing import Iterator

import docker
from docker.errors import APIError, DockerException
from requests.exceptions import ConnectionError as RequestsConnectionError

from .errors import EngineUnavailable, InfrastructureError

HARNESS_LABEL = "bench.harness"
RUN_LABEL = "bench.run"
PID_LABEL = "bench.pid"
HOST_LABEL = "bench.host"
ROLE_LABEL = "bench.role"
HARNESS = "hermetic-bench"  # the value of HARNESS_LABEL on everything the harness makes


def engine_address() -> str:
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


def connect(timeout: int = 120) -> docker.DockerClient:
    """A client for the local engine, or EngineUnavailable saying how to start one."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except DockerException as exc:
        raise EngineUnavailable(
            f"Docker engine not reachable at {engine_address()} — start dockerd "
            f"(e.g. `dockerd &`) or set DOCKER_HOST ({type(exc).__name__})"
        ) from None


@contextmanager
def engine_faults(doing: str) -> Iterator[None]:
    """Turn any engine failure inside the block into an InfrastructureError naming the step.

    APIError is caught first: docker-py's APIError is a requests HTTPError, hence an
    OSError, so the connection clause would otherwise report an engine that answered
    (with an error) as an engine that went away — and a run would stop for it.
    """
    try:
        yield
    except APIError as exc:
        raise InfrastructureError(f"Docker engine refused {doing}: {exc.explanation or exc}") from None
    except (RequestsConnectionError, ConnectionError, socket.error) as exc:
        raise EngineUnavailable(f"Docker engine went away while {doing}: {exc}") from None
    except DockerException as exc:
        raise InfrastructureError(f"Docker failed while {doing}: {exc}") from None


def harness_labels(**extra: str) -> dict[str, str]:
    """Labels for what outlives a run (images): the harness's mark, nothing about the process."""
    return {HARNESS_LABEL: HARNESS, **extra}


def owner_labels(**extra: str) -> dict[str, str]:
    """Labels for a short-lived container outside a run: the owning pid and host let cleanup find it."""
    return harness_labels(**{PID_LABEL: str(os.getpid()), HOST_LABEL: socket.gethostname(), **extra})


def run_labels(run_id: str, **extra: str) -> dict[str, str]:
    """Labels for anything a run creates."""
    return owner_labels(**{RUN_LABEL: run_id, **extra})


def remove_run_containers(client: docker.DockerClient, run_id: str) -> int:
    """Force-remove every container and volume labelled with this run; returns the count."""
    selector = {"label": f"{RUN_LABEL}={run_id}"}
    removed = 0
    for item in [*client.containers.list(all=True, filters=selector), *client.volumes.list(filters=selector)]:
        removed += _remove(item)
    return removed


def _remove(item) -> int:
    """Remove one container or volume; one already gone, or already being removed (409), is not an error."""
    try:
        item.remove(force=True, **({"v": True} if isinstance(item, docker.models.containers.Container) else {}))
        return 1
    except docker.errors.NotFound:
        return 0
    except docker.errors.APIError as exc:
        if exc.status_code == 409:  # "removal already in progress": someone else is at it
            return 0
        raise


def alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(client: docker.DockerClient) -> list[str]:
    """Remove containers of earlier runs on this host whose owning process is gone."""
    host = socket.gethostname()
    orphan_runs: set[str] = set()
    for container in client.containers.list(all=True, filters={"label": HARNESS_LABEL}):
        labels = container.labels
        if labels.get(HOST_LABEL) == host and not alive(labels.get(PID_LABEL, "")):
            orphan_runs.add(labels.get(RUN_LABEL, ""))
    for run_id in orphan_runs:
        remove_run_containers(client, run_id)
    return sorted(orphan_runs)


def engine_versions(client: docker.DockerClient) -> tuple[str, str]:
    info = client.version()
    return info.get("Version", "unknown"), info.get("ApiVersion", "unknown")

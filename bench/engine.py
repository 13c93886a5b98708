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
from typing import Callable, Iterator, TypeVar

import docker
from docker.errors import APIError, DockerException
from requests.exceptions import ConnectionError as RequestsConnectionError, ReadTimeout
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential
from urllib3.exceptions import ReadTimeoutError

from .errors import EngineUnavailable, InfrastructureError

HARNESS_LABEL = "bench.harness"
RUN_LABEL = "bench.run"
PID_LABEL = "bench.pid"
HOST_LABEL = "bench.host"
ROLE_LABEL = "bench.role"
HARNESS = "hermetic-bench"  # the value of HARNESS_LABEL on everything the harness makes
T = TypeVar("T")

# Seconds one call may go unanswered, by operation. Under load an untag took longer than
# the client's 120 s (issue 12); exports and commits move whole filesystems.
TIMEOUTS: dict[str, float] = {"remove": 300, "commit": 600, "export": 900, "inspect": 300, "list": 120}
ATTEMPTS = 3  # a read timeout is retried this often (with backoff) before the engine is called slow
BACKOFF_MAX_S = 30.0


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
def engine_faults(doing: str, timeout: float | None = None) -> Iterator[None]:
    """Turn any engine failure inside the block into an InfrastructureError naming the step.

    APIError is caught first: docker-py's APIError is a requests HTTPError, hence an
    OSError, so the connection clause would otherwise report an engine that answered
    (with an error) as an engine that went away — and a run would stop for it. A read
    timeout is an OSError too, but an engine that accepted the call and is slow to
    answer is busy, not gone: it is an InfrastructureError (that trial is ERROR), and
    only a refused or dropped connection is EngineUnavailable (the run stops).
    """
    try:
        yield
    except APIError as exc:
        raise InfrastructureError(f"Docker engine refused {doing}: {exc.explanation or exc}") from None
    except (RequestsConnectionError, ConnectionError, socket.error, ReadTimeoutError) as exc:
        if is_slow(exc):
            within = f"{timeout:g} s, {ATTEMPTS} tries" if timeout is not None else "the client's timeout"
            raise InfrastructureError(
                f"Docker engine is slow: no answer within {within} while {doing} — it is "
                "overloaded, not gone; rerun with fewer concurrent trials (--concurrency) or when it is idle"
            ) from None
        raise EngineUnavailable(f"Docker engine went away while {doing}: {exc}") from None
    except DockerException as exc:
        raise InfrastructureError(f"Docker failed while {doing}: {exc}") from None


def is_slow(exc: BaseException) -> bool:
    """A read that timed out: the engine took the call but did not answer in time.

    Known by type: requests' ReadTimeout, urllib3's ReadTimeoutError, a socket timeout,
    and requests' ConnectionError wrapping a ReadTimeoutError (what a streamed body,
    such as an export, raises when the engine stops sending mid-way).
    """
    if isinstance(exc, (ReadTimeout, ReadTimeoutError, TimeoutError)):
        return True
    return isinstance(exc, RequestsConnectionError) and any(isinstance(arg, ReadTimeoutError) for arg in exc.args)


def timed(client: docker.DockerClient, operation: str) -> docker.DockerClient:
    """The same engine connection with the read timeout sized to ``operation`` (a key of TIMEOUTS).

    docker-py fixes one timeout per client and the run's client is shared by trial
    threads, so changing it in place would change every thread's calls: the clone
    shares the connection pool and differs only in its timeout. A fake client (no
    ``api``) is returned as it is.
    """
    api = getattr(client, "api", None)
    if api is None or not hasattr(api, "timeout"):
        return client
    api_clone = object.__new__(type(api))
    api_clone.__dict__.update(api.__dict__)
    api_clone.timeout = TIMEOUTS[operation]
    clone = object.__new__(type(client))
    clone.__dict__.update(client.__dict__)
    clone.api = api_clone
    return clone


def patient(client: docker.DockerClient, operation: str, doing: str, call: Callable[[docker.DockerClient], T]) -> T:
    """``call(timed client)``, retried with backoff while it times out; then classified by engine_faults.

    Slow is not dead: a read timeout is retried ATTEMPTS times (waits doubling up to
    BACKOFF_MAX_S); one that persists becomes "engine is slow" (ERROR), a refused
    connection is not retried and stays "engine went away". ``call`` must be safe to repeat.
    """
    retrying = Retrying(retry=retry_if_exception(is_slow), stop=stop_after_attempt(ATTEMPTS),
                        wait=wait_exponential(multiplier=1, min=1, max=BACKOFF_MAX_S), reraise=True)
    with engine_faults(doing, TIMEOUTS[operation]):
        return retrying(lambda: call(timed(client, operation)))


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
    removed = sum(_remove_container(client, found["Id"]) for found in _containers(client, selector, "cleanup"))
    volumes = patient(client, "list", "listing a run's volumes", lambda c: c.volumes.list(filters=selector))
    return removed + sum(_remove(volume) for volume in volumes)


def _containers(client: docker.DockerClient, filters: dict, why: str) -> list[dict]:
    """Containers matching label filters, as the engine's list gives them: no per-container inspect.

    docker-py's containers.list() inspects every match, which blocks behind a busy
    container (a live run's export or commit); the plain list carries the labels we need.
    """
    return patient(client, "list", f"listing containers for {why}",
                   lambda c: c.api.containers(all=True, filters=filters))


def _remove_container(client: docker.DockerClient, container_id: str) -> int:
    """Force-remove one container with its volumes."""
    return patient(client, "remove", f"removing container {container_id[:12]}",
                   lambda c: _removed(lambda: c.api.remove_container(container_id, force=True, v=True)))


def _remove(volume) -> int:
    return _removed(lambda: volume.remove(force=True))


def _removed(remove: Callable[[], object]) -> int:
    """1 when ``remove`` removed it; 0 when it was already gone, or is already being removed (409) by someone else."""
    try:
        remove()
        return 1
    except docker.errors.NotFound:
        return 0
    except APIError as exc:
        if exc.status_code == 409:
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
    """Remove containers of earlier runs on this host whose owning process is gone.

    The engine selects by label (ours, this host); a live owner's containers are
    skipped by pid alone, never inspected or waited on, so cleanup cannot stall
    behind another run's busy container. A run owned by several processes (a Ray
    run's workers, bench/ray_node.py) keeps what its live ones own: only the dead
    owners' containers go, and the whole run (volumes too) once no owner is alive.
    """
    selector = {"label": [f"{HARNESS_LABEL}={HARNESS}", f"{HOST_LABEL}={socket.gethostname()}"]}
    live, dead = [], []
    for labels in (found.get("Labels") or {} for found in _containers(client, selector, "cleanup")):
        (live if alive(labels.get(PID_LABEL, "")) else dead).append(labels)
    live_runs = {labels.get(RUN_LABEL, "") for labels in live}
    for run_id in {labels.get(RUN_LABEL, "") for labels in dead} - live_runs:
        remove_run_containers(client, run_id)
    for run_id, pid in {(labels.get(RUN_LABEL, ""), labels.get(PID_LABEL, "")) for labels in dead}:
        if run_id in live_runs:
            remove_owned_containers(client, run_id, pid)
    return sorted({labels.get(RUN_LABEL, "") for labels in dead})


def remove_owned_containers(client: docker.DockerClient, run_id: str, pid: str) -> int:
    """Force-remove the run's containers that process ``pid`` on this host made; the rest of the run stays."""
    selector = {"label": [f"{RUN_LABEL}={run_id}", f"{PID_LABEL}={pid}", f"{HOST_LABEL}={socket.gethostname()}"]}
    return sum(_remove_container(client, found["Id"]) for found in _containers(client, selector, "cleanup"))


def engine_versions(client: docker.DockerClient) -> tuple[str, str]:
    info = client.version()
    return info.get("Version", "unknown"), info.get("ApiVersion", "unknown")

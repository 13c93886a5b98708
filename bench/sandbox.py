"""One container's life: create, put files, run to completion or timeout, export, destroy.

Contract (every method):
  * Raises ``EngineUnavailable`` / ``InfrastructureError`` for engine faults, never a
    Docker exception, so a broken engine becomes ERROR and is never charged to the agent.
  * Containers run as uid 1000, with all capabilities dropped, no-new-privileges, no
    Docker socket, CPU / memory / pids limits and, unless asked otherwise, network
    ``none``. They carry the run's labels, so cleanup can find exactly them.
  * ``run`` bounds the main process by wall clock: at the deadline the whole container
    is killed (every process in it), not just a client.
"""

from __future__ import annotations

import io
import tarfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import docker

from .engine import engine_faults
from .hashing import walk
from .errors import BenchError
from .models import Limits

USER = "1000:1000"


class ExportTooLarge(BenchError):
    """The agent's workspace exceeded the export cap: the agent's fault, so FAIL."""


@dataclass
class Outcome:
    exit_code: int | None
    timed_out: bool
    seconds: float


@dataclass
class SandboxSpec:
    image: str
    command: list[str]
    labels: dict[str, str]
    limits: Limits
    workdir: str = "/workspace"
    env: dict[str, str] = field(default_factory=dict)
    network: str = "none"
    read_only_mounts: dict[str, str] = field(default_factory=dict, repr=False)
    device_requests: list = field(default_factory=list, repr=False)  # docker DeviceRequests (a grader's GPU)


class Sandbox:
    """A created (not yet started) container, destroyed on exit from ``with``."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec) -> None:
        self.client, self.spec = client, spec
        limits = spec.limits
        with engine_faults(f"creating a container from {spec.image}"):
            self.container = client.containers.create(
                spec.image, command=spec.command, user=USER, working_dir=spec.workdir,
                environment=spec.env, labels=spec.labels, network_mode=spec.network,
                nano_cpus=int(limits.cpus * 1e9), mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m", pids_limit=limits.pids,
                cap_drop=["ALL"], security_opt=["no-new-privileges"], shm_size="256m",
                volumes={host: {"bind": inside, "mode": "ro"} for host, inside in spec.read_only_mounts.items()},
                device_requests=spec.device_requests or None,
            )

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()

    def put_tar(self, data: bytes, at: str = "/") -> None:
        """Extract a tar into the container (before or after start)."""
        with engine_faults("copying files into a container"):
            self.container.put_archive(at, data)

    def run(self, timeout_s: float, log_to: Path | None = None) -> Outcome:
        """Start the main process and wait for it; kill the container at the deadline.

        The output streams to ``log_to`` as it is produced, so a killed trial still
        leaves everything it printed.
        """
        started = time.monotonic()
        with engine_faults("starting a container"):
            self.container.start()
        waiter: Future = Future()
        threading.Thread(target=_resolve, args=(waiter, self.container.wait), daemon=True).start()
        logger = _start_log_stream(self.container, log_to) if log_to else None
        try:
            status = waiter.result(timeout=timeout_s)
            timed_out = False
        except TimeoutError:
            self.kill()
            status, timed_out = None, True
        if logger:
            logger.join(timeout=10)
        if isinstance(status, BaseException):
            with engine_faults("waiting for a container"):
                raise status
        exit_code = None if status is None else int(status.get("StatusCode", -1))
        return Outcome(exit_code, timed_out, time.monotonic() - started)

    def kill(self) -> None:
        with engine_faults("killing a timed-out container"):
            try:
                self.container.kill()
            except docker.errors.APIError:
                pass  # already stopped between the deadline and the kill

    def output(self, stdout: bool = True, stderr: bool = True) -> str:
        with engine_faults("reading a container's output"):
            return self.container.logs(stdout=stdout, stderr=stderr).decode("utf-8", "replace")

    def export(self, path: str, to: Path, max_bytes: int) -> int:
        """Write ``path`` from the (stopped) container as a tar file; symlinks stay links."""
        with engine_faults(f"exporting {path}"):
            stream, _ = self.container.get_archive(path)
            written = 0
            with open(to, "wb") as handle:
                for chunk in stream:
                    written += len(chunk)
                    if written > max_bytes:
                        raise ExportTooLarge(f"workspace export exceeds {max_bytes // (1 << 20)} MiB")
                    handle.write(chunk)
        return written

    def commit(self, repository: str, tag: str, labels: dict[str, str]) -> str:
        with engine_faults("committing a staged container"):
            image = self.container.commit(repository=repository, tag=tag, conf={"Labels": labels})
        return image.id

    def destroy(self) -> None:
        """Remove the container and its anonymous volumes; tolerate one already gone."""
        try:
            self.container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except Exception:  # the engine may be gone; the run's cleanup retries by label
            pass


def _resolve(future: Future, call) -> None:
    try:
        future.set_result(call())
    except BaseException as exc:  # handed to the waiting thread
        future.set_result(exc)


def _start_log_stream(container, path: Path) -> threading.Thread:
    def pump() -> None:
        try:
            with open(path, "ab") as handle:
                for chunk in container.logs(stream=True, follow=True):
                    handle.write(chunk)
                    handle.flush()
        except Exception:
            pass  # the container died or the engine went; what was written stays

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def tar_tree(layers: list[tuple[str, Path]], files: dict[str, bytes] | None = None, uid: int = 1000) -> bytes:
    """A tar of host folders laid at relative paths (later layers win), plus literal files.

    Everything is owned by ``uid``. Symlinks are stored as links and never followed,
    so a case cannot smuggle a host file in through a link.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for inside, source in layers:
            _add_dir_entry(archive, inside, uid)
            for path in walk(source):
                info = archive.gettarinfo(str(path), arcname=f"{inside}/{path.relative_to(source).as_posix()}")
                info.uid = info.gid = uid
                info.uname = info.gname = ""
                if info.isfile():
                    with open(path, "rb") as handle:
                        archive.addfile(info, handle)
                else:
                    archive.addfile(info)
        for name, data in (files or {}).items():
            if "/" in name:
                _add_dir_entry(archive, name.rsplit("/", 1)[0], uid)
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, uid, uid
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _add_dir_entry(archive: tarfile.TarFile, name: str, uid: int) -> None:
    parts = name.strip("/").split("/")
    for depth in range(1, len(parts) + 1):
        info = tarfile.TarInfo("/".join(parts[:depth]))
        info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, uid, uid
        archive.addfile(info)



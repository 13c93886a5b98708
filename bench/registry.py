"""Locked images through an OCI registry, by digest, so another machine runs on identical bytes.

A rebuild on another machine gives at best the same content (Dockerfile builds stamp
times); only moving the bytes gives the same image ID. `bench images push REGISTRY`
sends each locked image, found by the lock's image ID (never by whatever a tag holds
now), as ``REGISTRY/bench/<name>:<the lock tag's suffix>`` and records the manifest
digest the registry answered in the lock entry's ``registry_digests``. `bench images
pull REGISTRY` fetches exactly that digest, so a moved tag in the registry cannot hand
over other bytes, checks that the pulled image ID is the lock's, and only then gives it
the lock's tag; `bench images list` then shows it bit-verified. Files instead of a
registry: bench/archive.py.
"""

from __future__ import annotations

import re
from typing import Callable

import docker
from docker.errors import ImageNotFound

from .engine import connect, engine_faults
from .errors import InfrastructureError, UsageError
from .lock import read_lock, write_lock
from .models import ImageLock, LockEntry
from .paths import Project

Log = Callable[[str], None]
REGISTRY = re.compile(r"^[A-Za-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$")


def check_registry(registry: str) -> str:
    """The registry as given, or UsageError: a scheme or trailing slash would make every reference wrong."""
    if not REGISTRY.match(registry):
        raise UsageError(f"REGISTRY {registry!r} is not host[:port][/path] — pass e.g. 127.0.0.1:5000 "
                         "(no http://, no trailing slash)")
    return registry


def selected(project: Project, lock: ImageLock, names: list[str]) -> list[LockEntry]:
    """The lock entries for ``names`` (all by default); a name the lock lacks is refused before anything moves."""
    missing = [name for name in names if name not in lock.images]
    if missing:
        raise UsageError(f"{project.lock_file}: no entry for {', '.join(missing)} — lock it first "
                         f"(`bench images lock {' '.join(missing)}`); locked: {', '.join(sorted(lock.images))}")
    if not lock.images:
        raise UsageError(f"{project.lock_file}: no locked images — run `bench images lock` first")
    return [lock.images[name] for name in (names or sorted(lock.images))]


def remote(registry: str, entry: LockEntry) -> tuple[str, str]:
    """(repository, tag) of an entry in a registry: the lock's repository and tag suffix under REGISTRY."""
    repository, suffix = entry.tag.rsplit(":", 1)
    return f"{registry}/{repository}", suffix


def locked_image(client: docker.DockerClient, entry: LockEntry):
    """The engine's image with the lock's ID, or UsageError naming the image and how to get it."""
    with engine_faults(f"looking up image {entry.name}"):
        try:
            return client.images.get(entry.id)
        except ImageNotFound:
            raise UsageError(f"image {entry.name}: the lock's ID {entry.id[:19]} is not on this engine — "
                             f"build it (`bench images build {entry.name}`) or pull/load it") from None


def give_lock_tag(image, entry: LockEntry) -> None:
    """Put the lock's tag on ``image`` (whose ID the caller has checked), so runs and `images list` find it."""
    repository, tag = entry.tag.rsplit(":", 1)
    with engine_faults(f"tagging {entry.tag}"):
        image.tag(repository, tag)


def push(project: Project, registry: str, names: list[str], log: Log) -> list[LockEntry]:
    """`bench images push`: each locked image to ``registry``; the lock records each manifest digest."""
    check_registry(registry)
    lock = read_lock(project)
    entries = selected(project, lock, names)
    client = connect()
    images = [locked_image(client, entry) for entry in entries]  # all present before anything moves
    pushed = []
    for entry, image in zip(entries, images):
        digest = _push_one(client, image, registry, entry, log)
        entry = entry.model_copy(update={"registry_digests": {**entry.registry_digests, registry: digest}})
        lock.images[entry.name] = entry
        write_lock(project, lock)  # after each image: an interrupted push keeps the digests it got
        pushed.append(entry)
    return pushed


def _push_one(client: docker.DockerClient, image, registry: str, entry: LockEntry, log: Log) -> str:
    """Push under a temporary remote tag and return the registry's manifest digest; the tag is removed after."""
    repository, tag = remote(registry, entry)
    log(f"pushing {entry.name} as {repository}:{tag}")
    with engine_faults(f"tagging {repository}:{tag}"):
        image.tag(repository, tag)
    try:
        digest = None
        with engine_faults(f"pushing {repository}:{tag}"):
            for line in client.api.push(repository, tag, stream=True, decode=True):
                if "error" in line:
                    raise InfrastructureError(f"pushing image {entry.name} to {registry} failed: {line['error']} "
                                              "— is the registry running and reachable from the Docker engine?")
                digest = (line.get("aux") or {}).get("Digest", digest)
    finally:
        with engine_faults(f"untagging {repository}:{tag}"):
            client.images.remove(f"{repository}:{tag}")
    if digest is None:
        raise InfrastructureError(f"pushing image {entry.name} to {registry}: the engine reported no digest")
    return digest


def pull(project: Project, registry: str, names: list[str], log: Log) -> list[LockEntry]:
    """`bench images pull`: each image by its recorded digest, checked against the lock's ID, then tagged."""
    check_registry(registry)
    lock = read_lock(project)
    entries = selected(project, lock, names)
    unpushed = [entry.name for entry in entries if registry not in entry.registry_digests]
    if unpushed:
        raise UsageError(f"{project.lock_file}: images.{unpushed[0]}.registry_digests has no digest for {registry} "
                         f"(nor for {', '.join(unpushed[1:]) or 'no other'}) — push them first "
                         f"(`bench images push {registry} {' '.join(unpushed)}`) and use the lock that push wrote")
    client = connect()
    for entry in entries:
        _pull_one(client, registry, entry, log)
    return entries


def _pull_one(client: docker.DockerClient, registry: str, entry: LockEntry, log: Log) -> None:
    repository, _ = remote(registry, entry)
    digest = entry.registry_digests[registry]
    reference = f"{repository}@{digest}"
    log(f"pulling {entry.name} from {reference}")
    with engine_faults(f"pulling {reference}"):
        for line in client.api.pull(repository, tag=digest, stream=True, decode=True):
            if "error" in line:
                raise InfrastructureError(f"pulling image {entry.name} from {reference} failed: {line['error']}")
        image = client.images.get(reference)
    if image.id != entry.id:
        raise InfrastructureError(f"image {entry.name}: {reference} is {image.id[:19]}, but the lock's ID is "
                                  f"{entry.id[:19]} — the lock's digest or ID was edited; nothing was tagged")
    give_lock_tag(image, entry)

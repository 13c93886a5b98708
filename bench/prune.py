"""`bench images prune`: remove what this harness made and nothing still needed — nor anything else.

What the harness made is decided conservatively, because labels alone cannot prove it:
Docker's builder copies a parent's labels into every image built FROM it, so an
unrelated image built on ``bench/base`` carries ``bench.harness`` too. An image is the
harness's only when it has the label *and* every one of its tags is under ``bench/``,
or, untagged, when it carries a run's owner pid or this machine cached its content digest
(the harness inspected it). It is kept while a lock entry or a kept result
(``results/**/provenance.json``) names it, while a container (running or not) uses it,
while an image that is kept descends from it, and while the process that made it
(``bench.pid`` on this host) lives.

Containers are removed only when stopped, labelled by the harness, and owned by a
process on this host that is gone — the same rule a new run uses for orphans.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound, NotFound

from .engine import HARNESS, HARNESS_LABEL, HOST_LABEL, PID_LABEL, alive, engine_faults, patient
from .images import cache_file
from .lock import read_lock
from .paths import Project

STOPPED = ["created", "exited", "dead"]


@dataclass
class PruneReport:
    removed_images: list[str] = field(default_factory=list)
    removed_containers: list[str] = field(default_factory=list)
    kept: dict[str, list[str]] = field(default_factory=dict)
    freed_bytes: int = 0
    dry_run: bool = False

    def keep(self, why: str, what: str) -> None:
        self.kept.setdefault(why, []).append(what)

    def lines(self) -> list[str]:
        verb = "would remove" if self.dry_run else "removed"
        lines = [f"{verb} image {image}" for image in self.removed_images]
        lines += [f"{verb} container {container}" for container in self.removed_containers]
        lines += [f"kept {len(items)} harness image(s): {why}" for why, items in sorted(self.kept.items())]
        if not self.dry_run:
            lines.append(f"freed {self.freed_bytes / 1e6:.1f} MB ({self.freed_bytes} bytes)")
        return lines


def prune(client: docker.DockerClient, project: Project, results: Path, names: list[str],
          dry_run: bool = False) -> PruneReport:
    """Remove dead-owner stopped containers, then unneeded harness images (only NAMES, if given)."""
    report = PruneReport(dry_run=dry_run)
    with engine_faults("pruning harness containers and images"):
        before = _layers_size(client)
        report.freed_bytes += _prune_containers(client, report, dry_run)
        referenced = {"locked": _locked(project), "named by a kept result": _in_results(results),
                      "used by a container": {c["ImageID"] for c in _all_containers(client)}}
        _prune_images(client, referenced, set(names), report, dry_run)
        report.freed_bytes += max(0, before - _layers_size(client)) if not dry_run else 0
    return report


def _all_containers(client: docker.DockerClient) -> list[dict]:
    return patient(client, "list", "listing containers", lambda c: c.api.containers(all=True))


def _layers_size(client: docker.DockerClient) -> int:
    """Bytes the engine's image layers take: what removing images can give back."""
    return int(patient(client, "inspect", "measuring image layers", lambda c: c.df()).get("LayersSize") or 0)


def _prune_containers(client: docker.DockerClient, report: PruneReport, dry_run: bool) -> int:
    host, freed = socket.gethostname(), 0
    selector = {"label": [f"{HARNESS_LABEL}={HARNESS}", f"{HOST_LABEL}={host}"], "status": STOPPED}
    sized = patient(client, "inspect", "listing stopped containers with their sizes",
                    lambda c: c.api.containers(all=True, size=True, filters=selector))
    for summary in sized:
        labels = summary.get("Labels") or {}
        if labels.get(HOST_LABEL) != host or PID_LABEL not in labels or alive(labels[PID_LABEL]):
            continue
        name = (summary.get("Names") or ["?"])[0].lstrip("/")
        if not dry_run and not _remove_stopped(client, summary["Id"], name):
            continue
        report.removed_containers.append(f"{name} ({summary['Id'][:12]})")
        freed += int(summary.get("SizeRw") or 0)
    return freed


def _remove_stopped(client: docker.DockerClient, container_id: str, name: str) -> bool:
    """Remove one stopped container patiently; False when it was already gone."""
    def remove(timed_client: docker.DockerClient) -> bool:
        try:
            timed_client.api.remove_container(container_id, v=True)
            return True
        except NotFound:
            return False
    return patient(client, "remove", f"removing container {name}", remove)


def _locked(project: Project) -> set[str]:
    return {entry.id for entry in read_lock(project).images.values()}


def _in_results(results: Path) -> set[str]:
    """Image IDs any kept result names; read loosely (any schema version), never validated."""
    ids: set[str] = set()
    for path in sorted(results.rglob("provenance.json")) if results.is_dir() else []:
        try:
            images = json.loads(path.read_text()).get("images", {})
        except (OSError, ValueError, AttributeError):
            continue
        ids |= {image["id"] for image in images.values() if isinstance(image, dict) and "id" in image}
    return ids


def _prune_images(client: docker.DockerClient, referenced: dict[str, set[str]], names: set[str],
                  report: PruneReport, dry_run: bool) -> None:
    listed = patient(client, "list", "listing images", lambda c: c.images.list(all=True))
    parents = {image.id: image.attrs.get("Parent") or None for image in listed}
    top = patient(client, "list", "listing images", lambda c: c.images.list())
    ours = [image for image in top if harness_made(image) and (not names or image_name(image) in names)]
    ours_ids = {image.id for image in ours}
    keepers = {image.id for image in top if image.id not in ours_ids}.union(*referenced.values())
    needed = _with_ancestors(keepers, parents)
    candidates = []
    for image in ours:
        why = _reason_to_keep(image, referenced, needed)
        if why:
            report.keep(why, _describe(image))
        else:
            candidates.append(image)
    # Newest first, so a child goes before the parent it would otherwise pin.
    for image in sorted(candidates, key=lambda i: i.attrs.get("Created", ""), reverse=True):
        if dry_run or _remove(client, image, report):
            report.removed_images.append(_describe(image))


def harness_made(image) -> bool:
    """The label alone is inherited by images built FROM ours; the tags or our own records decide."""
    labels = image.labels or {}
    if labels.get(HARNESS_LABEL) != HARNESS:
        return False
    if image.tags:
        return all(tag.startswith("bench/") for tag in image.tags)
    return PID_LABEL in labels or cache_file(image.id).is_file()


def image_name(image) -> str:
    """bench/<name>:... gives the name; an untagged image is named by its labels."""
    for tag in image.tags:
        return tag.split("/", 1)[1].split(":", 1)[0]
    labels = image.labels or {}
    return "staged" if "bench.case" in labels else labels.get("bench.image", "?")


def _with_ancestors(ids: set[str], parents: dict[str, str | None]) -> set[str]:
    needed = set()
    for image_id in ids:
        while image_id and image_id not in needed:
            needed.add(image_id)
            image_id = parents.get(image_id)
    return needed


def _reason_to_keep(image, referenced: dict[str, set[str]], needed: set[str]) -> str | None:
    labels = image.labels or {}
    for why, ids in referenced.items():
        if image.id in ids:
            return why
    if image.id in needed:
        return "parent of a kept image"
    if PID_LABEL in labels and labels.get(HOST_LABEL) == socket.gethostname() and alive(labels[PID_LABEL]):
        return "its owning process is still running"
    return None


def _remove(client: docker.DockerClient, image, report: PruneReport) -> bool:
    """Untag each bench/ tag (the last one deletes), or delete an untagged image; never forced."""
    for ref in image.tags or [image.id]:
        if refused := _untag(client, ref):
            report.keep(f"the engine refused ({refused})", _describe(image))
            return False
    return True


def _untag(client: docker.DockerClient, ref: str) -> str | None:
    """Remove one tag (or an untagged image) patiently; the engine's refusal, or None when done or gone."""
    def remove(timed_client: docker.DockerClient) -> str | None:
        try:
            timed_client.images.remove(ref)
        except ImageNotFound:
            return None
        except APIError as exc:
            return str(exc.explanation or exc)
        return None
    return patient(client, "remove", f"removing image {ref}", remove)


def _describe(image) -> str:
    return f"{', '.join(image.tags) or '<untagged>'} ({image.id[7:19]})"

"""`bench images rebuild`: make the pinned images again from images/ and say whether they drifted.

A lock entry is only a claim until something rebuilds it. A rebuild reruns every step
with nothing cached (mmdebstrap for base, ``nocache`` for Dockerfile images), so it
sees what today's mirror gives, and compares the result with the lock:

* same image ID — bit-reproducible (the deterministic base archive can reach this);
* same content digest only — content-reproducible (Dockerfile builds stamp build
  times into image configs, so their IDs differ on every build);
* anything else drifted: the packages that changed (dpkg manifests) and the first
  paths that differ (per-path entries, when this machine cached them for the locked ID).

``--check`` never moves a tag the lock points at: the rebuild is tagged
``bench/<name>:rebuild`` and untagged afterwards. Both modes record the finding in the
entry's ``verified`` field, because that proof is what a result's level rests on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from docker.errors import ImageNotFound

from .engine import connect, engine_faults, patient
from .errors import UsageError
from .images import Images, read_cached_filesystem
from .lock import read_lock, write_lock
from .models import ImageLock, LockEntry
from .paths import Project
from .trust import ca_bundle

PATHS_SHOWN = 10
Say = Callable[[str], None]


@dataclass
class Finding:
    """One image's rebuild compared with its lock entry."""

    locked: LockEntry
    rebuilt_id: str
    rebuilt_digest: str
    packages: list[str] = field(default_factory=list)
    paths: list[str] | None = None
    paths_differing: int = 0
    tagged: str | None = None

    @property
    def name(self) -> str:
        return self.locked.name

    @property
    def level(self) -> str | None:
        """"bit", "content", or None when the rebuild drifted from the lock."""
        if self.rebuilt_id == self.locked.id:
            return "bit"
        return "content" if self.rebuilt_digest == self.locked.content_digest else None

    def as_dict(self) -> dict:
        """What `bench images rebuild --json` says of this image: the lines' facts, IDs and digests in full."""
        return {"name": self.name, "same": self.level is not None, "level": self.level or "drifted",
                "rebuilt_id": self.rebuilt_id, "rebuilt_digest": self.rebuilt_digest, "locked_id": self.locked.id,
                "locked_digest": self.locked.content_digest, "packages": self.packages, "paths": self.paths,
                "paths_differing": self.paths_differing, "tagged": self.tagged}

    def lines(self) -> list[str]:
        ids = f"rebuilt {self.rebuilt_id[7:19]}, locked {self.locked.id[7:19]}"
        if self.level == "bit":
            lines = [f"{self.name}: same — bit-reproducible: identical image ID {self.rebuilt_id[:19]}"]
        elif self.level == "content":
            lines = [f"{self.name}: same — content-reproducible: identical content digest "
                     f"{self.rebuilt_digest[:19]}, image ID differs ({ids})"]
        else:
            lines = [f"{self.name}: drifted — content digest {self.rebuilt_digest[:19]} != locked "
                     f"{str(self.locked.content_digest)[:19]} ({ids})", *self._drift_lines()]
        if self.tagged:
            lines.append(f"  the rebuild now holds {self.tagged}")
        return lines

    def _drift_lines(self) -> list[str]:
        lines = [f"  packages: {', '.join(self.packages) if self.packages else 'none changed'}"]
        if self.paths is None:
            lines.append(f"  paths: unavailable — the locked image {self.locked.id[7:19]} was never "
                         "inspected on this machine (its per-path entries are not cached here)")
        else:
            shown = f", first {len(self.paths)}" if self.paths_differing > len(self.paths) else ""
            lines.append(f"  paths: {self.paths_differing} differ{shown}:")
            lines += [f"    {path}" for path in self.paths]
        return lines


def rebuild(project: Project, names: list[str], check: bool, ca: str | None,
            log: Say = lambda line: None, step: Say = lambda line: None) -> list[Finding]:
    """Rebuild NAMES (all of images/ by default), parents first; compare each with the lock.

    The lock is written after each image, so an interrupted rebuild keeps what it proved.
    """
    images = Images(connect(), project, ca_bundle(ca), log=log)
    lock = read_lock(project)
    entries = {}
    for name in names or images.names():
        if name not in lock.images:
            images.spec(name)  # an unknown name fails here, listing the known ones
        entries[name] = locked_entry(lock, name)
    order = build_order(images, list(entries))
    findings = []
    for name in order:
        step(f"{name}: rebuilding from images/{name} without cache")
        finding = rebuild_one(images, entries[name], check, step)
        record_verification(project, entries[name], finding.level)
        findings.append(finding)
        step(f"{name}: {'same' if finding.level else 'drifted'}")
    return findings


def record_verification(project: Project, entry: LockEntry, level: str | None) -> None:
    """Set ``verified`` on the entry the rebuild compared with, re-reading the lock first.

    A rebuild takes minutes; the lock may have been rewritten meanwhile. The finding
    applies only to the entry it was compared with, so another entry is left alone.
    """
    lock = read_lock(project)
    current = lock.images.get(entry.name)
    if current is not None and current.id == entry.id and current.content_digest == entry.content_digest:
        lock.images[entry.name] = current.model_copy(update={"verified": level})
        write_lock(project, lock)


def build_order(images: Images, names: list[str]) -> list[str]:
    """Parents before children, so a child's FROM is settled before it is rebuilt."""
    def depth(name: str) -> int:
        parent = images.spec(name).parent
        return 0 if parent is None else 1 + depth(parent)

    return sorted(dict.fromkeys(names), key=lambda name: (depth(name), name))


def locked_entry(lock: ImageLock, name: str) -> LockEntry:
    entry = lock.images.get(name)
    if entry is None:
        raise UsageError(f"image {name!r} is not in provenance/images.lock.json, so there is nothing "
                         f"to compare a rebuild with — `bench images build {name}` locks it first")
    if entry.builder == "dockertools":
        raise UsageError(f"image {name!r} was made by Nix dockerTools; rebuild it with "
                         f"`nix build .#{name}` and compare the image ID with the lock")
    return entry


def rebuild_one(images: Images, entry: LockEntry, check: bool, step: Say) -> Finding:
    tag = f"bench/{entry.name}:rebuild" if check else images.tag(entry.name)
    image = images.rebuild(entry.name, tag)
    step(f"{entry.name}: content digest of the rebuild {image.id[7:19]}")
    data = images.filesystem(entry.name, image.id)
    finding = compare(entry, image.id, data)
    if check:
        _drop_check_tag(images, entry, image, tag)
    else:
        finding.tagged = tag
    return finding


def _drop_check_tag(images: Images, entry: LockEntry, image, tag: str) -> None:
    """Untag a --check rebuild; it is deleted unless it is the locked image itself.

    A bit-identical rebuild gets the locked tag back only if that tag is missing: that
    restores what the lock names and moves nothing.
    """
    client = images.client
    with engine_faults(f"untagging {tag}"):
        if image.id == entry.id:
            try:
                client.images.get(entry.tag)
            except ImageNotFound:
                image.tag(*entry.tag.split(":"))
    patient(client, "remove", f"untagging {tag}", lambda timed_client: timed_client.images.remove(tag))


def compare(entry: LockEntry, rebuilt_id: str, data: dict) -> Finding:
    """The finding for one rebuild: drift detail only when the content digest differs."""
    finding = Finding(entry, rebuilt_id, data["digest"])
    if finding.level is None:
        finding.packages = package_changes(entry.packages, data["packages"])
        locked = read_cached_filesystem(entry.id)
        if locked is not None:
            changed = path_changes(locked["paths"], data["paths"])
            finding.paths, finding.paths_differing = changed[:PATHS_SHOWN], len(changed)
    return finding


def package_changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """"+name ver" added, "-name ver" removed, "name old -> new" upgraded or downgraded."""
    changes = []
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            changes.append(f"+{name} {new[name]}")
        elif name not in new:
            changes.append(f"-{name} {old[name]}")
        elif old[name] != new[name]:
            changes.append(f"{name} {old[name]} -> {new[name]}")
    return changes


def path_changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Sorted paths whose entry differs: "+" only in the rebuild, "-" only locked, "~" changed."""
    changed = sorted(path for path in old.keys() | new.keys() if old.get(path) != new.get(path))
    return [f"{'+' if p not in old else '-' if p not in new else '~'} {p}" for p in changed]

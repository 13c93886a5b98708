"""Pinned workspace paths: what the case's image installs, graded from the image, never the agent's copy.

A subject's project image installs the engine into the workspace (node_modules, the
package manifest, the lockfile). The agent's container starts with those files and can
change them: patch the engine so a broken scene renders, or swap a dependency. So:

* graders never receive the agent's copy of a pinned path: the workspace tar they get
  leaves it out (``without_pinned``), and the grader image's own copy — the pinned
  install, byte for byte what the image's digest names — is what the build uses. That
  also spares copying tens of megabytes into every grader container;
* every change the agent made under a pinned path is recorded in result.json
  (``pinned_changes``): the exported workspace's content under those paths, compared
  file by file (type, mode, SHA-256 or link target) with the same paths in the image the
  agent started from — read by the host from the engine, never from anything the agent
  could reach. (The engine's own ``docker diff`` says the same, but walks the whole image
  for over a second per trial; reading the export costs a tenth of that, and the image's
  side is read once per image per process.)
* a change under a path the case marks ``unmodified`` is the agent's FAIL, whatever the
  checks saw.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import tempfile
import threading
from pathlib import Path

import orjson

from .models import Limits
from .sandbox import WORKSPACE, MissingPath, SandboxFactory, SandboxSpec


LISTED_MAX = 200  # changes listed in a record; the count says how many there were
_IMAGES: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}  # (image ID, pinned) -> its manifest, per process
_IMAGES_LOCK = threading.Lock()


def check_paths(paths: list[str]) -> list[str]:
    """Workspace-relative paths without '..', a leading '/' or empty parts; ValueError naming the bad one."""
    for path in paths:
        parts = path.split("/")
        if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{path!r} is not a plain workspace-relative path (like node_modules or bun.lock)")
    return paths


def under(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def manifest(archive: tarfile.TarFile, pinned: tuple[str, ...], strip: str = "") -> dict[str, str]:
    """Workspace-relative path -> what is there (type, mode, and SHA-256 or link target), for the pinned paths."""
    found = {}
    for member in archive:
        path = member.name.removeprefix(strip).strip("/")
        if not path or not under(path, pinned):
            continue
        mode = f"{member.mode & 0o7777:o}"
        if member.isreg():
            found[path] = f"file {mode} {hashlib.sha256(archive.extractfile(member).read()).hexdigest()}"
        elif member.issym() or member.islnk():
            found[path] = f"link {member.linkname}"
        else:
            found[path] = f"{'dir' if member.isdir() else 'other'} {mode}"
    return found


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """"A / C / D path" for what was added, changed or deleted, sorted by path."""
    listed = [(path, "A") for path in after.keys() - before.keys()]
    listed += [(path, "D") for path in before.keys() - after.keys()]
    listed += [(path, "C") for path in after.keys() & before.keys() if after[path] != before[path]]
    return [f"{kind} {path}" for path, kind in sorted(listed)]


def workspace_changes(sandboxes: SandboxFactory, image: str, workspace_tar: Path, pinned: tuple[str, ...],
                      limits: Limits, labels: dict[str, str]) -> list[str]:
    """What the exported workspace changed under the pinned paths, against the image the agent started from."""
    with tarfile.open(workspace_tar) as archive:
        after = manifest(archive, pinned, strip=Path(WORKSPACE).name)
    return changes(image_manifest(sandboxes, image, pinned, limits, labels), after)


def image_manifest(sandboxes: SandboxFactory, image: str, pinned: tuple[str, ...], limits: Limits,
                   labels: dict[str, str]) -> dict[str, str]:
    """The pinned paths as the image has them, read from a created (never started) container, once per image.

    Kept in this process and in the user's cache folder by image ID: an ID is the
    SHA-256 of the image's config, which names every layer by its content's digest, so
    the same ID always has the same files.
    """
    cached = _cache_file(image, pinned)
    found = _from_cache(image, pinned, cached)
    if found is None:
        found = _from_image(sandboxes, image, pinned, limits, labels)
        _to_cache(image, pinned, cached, found)
    return found


def _from_cache(image: str, pinned: tuple[str, ...], cached: Path) -> dict[str, str] | None:
    with _IMAGES_LOCK:
        if (image, pinned) in _IMAGES:
            return _IMAGES[(image, pinned)]
    try:
        return _IMAGES.setdefault((image, pinned), orjson.loads(cached.read_bytes()))
    except (OSError, orjson.JSONDecodeError):
        return None


def _from_image(sandboxes: SandboxFactory, image: str, pinned: tuple[str, ...], limits: Limits,
                labels: dict[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    spec = SandboxSpec(image=image, command=["true"], limits=limits, labels=labels, role="pinned")
    with tempfile.TemporaryDirectory(prefix="bench-pinned-") as tmp, sandboxes(spec) as box:
        for path in pinned:
            tar = Path(tmp) / "part.tar"
            try:
                box.export(f"{WORKSPACE}/{path}", tar, limits.export_max_mb << 20)
            except MissingPath:
                continue
            parent = "" if Path(path).parent == Path(".") else str(Path(path).parent)
            with tarfile.open(tar) as archive:
                found.update({f"{parent}/{name}".strip("/"): what
                              for name, what in manifest(archive, (Path(path).name,)).items()})
    return found


def _to_cache(image: str, pinned: tuple[str, ...], cached: Path, found: dict[str, str]) -> None:
    with _IMAGES_LOCK:
        _IMAGES[(image, pinned)] = found
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(orjson.dumps(found))
        partial.replace(cached)
    except OSError:
        pass  # no cache folder to write: read it again next run


def _cache_file(image: str, pinned: tuple[str, ...]) -> Path:
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256("\0".join([image, *pinned]).encode()).hexdigest()[:32]
    return home / "hermetic-bench" / "pinned" / f"{key}.json"


def violations(unmodified: tuple[str, ...], changes: list[str]) -> list[str]:
    """The recorded changes under a path the case says the agent must not change."""
    return [change for change in changes if under(change.split(" ", 1)[1], unmodified)]


def without_pinned(workspace_tar: Path, to: Path, pinned: tuple[str, ...]) -> Path:
    """A copy of the workspace tar without the pinned paths (the graders' copy); members are not re-read
    beyond what is kept, so leaving out a large node_modules costs its headers only."""
    top = Path(WORKSPACE).name
    with tarfile.open(workspace_tar) as source, tarfile.open(to, "w") as kept:
        for member in source:
            inside = member.name.removeprefix(top).lstrip("/")
            if inside and under(inside, pinned):
                continue
            kept.addfile(member, source.extractfile(member) if member.isreg() else None)
    return to

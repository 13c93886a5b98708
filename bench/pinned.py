"""Pinned workspace paths: what the case's image installs, graded from the image, never the agent's copy.

A subject's project image installs the engine into the workspace (node_modules, the
package manifest, the lockfile). The agent's container starts with those files and can
change them: patch the engine so a broken scene renders, or swap a dependency. So:

* graders never receive the agent's copy of a pinned path: the workspace tar they get
  leaves it out (``without_pinned``), and the grader image's own copy — the pinned
  install, byte for byte what the image's digest names — is what the build uses. That
  also spares copying tens of megabytes into every grader container;
* every change the agent made under a pinned path is recorded in result.json
  (``pinned_changes``). Docker observes it, not a program the agent could reach: the
  engine's diff of the agent's container against the staged image it started from;
* a change under a path the case marks ``unmodified`` is the agent's FAIL, whatever the
  checks saw.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

WORKSPACE = "/workspace"  # where every case's workspace lives in its containers

LISTED_MAX = 200  # changes listed in a record; the count says how many there were
KINDS = {0: "C", 1: "A", 2: "D"}  # the engine's diff kinds: changed, added, deleted


def check_paths(paths: list[str]) -> list[str]:
    """Workspace-relative paths without '..', a leading '/' or empty parts; ValueError naming the bad one."""
    for path in paths:
        parts = path.split("/")
        if not path or path.startswith("/") or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{path!r} is not a plain workspace-relative path (like node_modules or bun.lock)")
    return paths


def under(path: str, roots: list[str] | tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def changes_under(pinned: tuple[str, ...], diff: list[tuple[str, str]]) -> list[str]:
    """The engine's diff of the agent's container, kept to the pinned paths: "C node_modules/x/y.js", sorted.

    A folder is listed as changed whenever something inside it was added or removed;
    such a folder is left out when an entry below it is listed, so the list names files.
    """
    prefix = WORKSPACE + "/"
    found = {(kind, path[len(prefix):]) for kind, path in diff if path.startswith(prefix)}
    found = {(kind, path) for kind, path in found if under(path, pinned)}
    paths = {path for _, path in found}
    return sorted(f"{kind} {path}" for kind, path in found
                  if kind != "C" or not any(other.startswith(path + "/") for other in paths))


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

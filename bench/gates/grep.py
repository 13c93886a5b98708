"""The `grep` check: a regex must (or must not) match in the files globs select.

Decided on the host, straight from the exported workspace tar: nothing the agent
wrote runs, only regular files count (a symlink or hard link is never followed), and
no path can leave the workspace because only the archive's own members are read.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

MAX_FILE_BYTES = 8 << 20
ROOT = "workspace/"


def glob_regex(pattern: str) -> re.Pattern:
    """A workspace glob as a regex: ``**/`` any folders (or none), ``*`` and ``?`` within one name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            char = pattern[i]
            out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
            i += 1
    return re.compile("".join(out) + r"\Z")


def selected(archive: tarfile.TarFile, globs: list[str]) -> list[tarfile.TarInfo]:
    """Regular files of the workspace whose relative path matches a glob, sorted by name."""
    patterns = [glob_regex(g.lstrip("./")) for g in globs]
    members = {}
    for member in archive.getmembers():
        name = member.name[len(ROOT):] if member.name.startswith(ROOT) else None
        if name and member.isreg() and any(p.match(name) for p in patterns):
            members[name] = member
    return [members[name] for name in sorted(members)]


def run(check: dict, workspace_tar: Path) -> tuple[bool, str]:
    """(passed, detail) naming the files that matched, or that none did."""
    regex = re.compile(check["pattern"], re.MULTILINE)
    with tarfile.open(workspace_tar) as archive:
        files = selected(archive, check["files"])
        hits = [m.name[len(ROOT):] for m in files
                if m.size <= MAX_FILE_BYTES and regex.search(archive.extractfile(m).read().decode("utf-8", "replace"))]
    wanted = check.get("must_match", True)
    where = ", ".join(check["files"])
    if wanted:
        if hits:
            return True, f"/{check['pattern']}/ matched in {', '.join(hits)}"
        return False, f"/{check['pattern']}/ matched in none of {len(files)} file(s) selected by {where}"
    if hits:
        return False, f"/{check['pattern']}/ must not match, but matched in {', '.join(hits)}"
    return True, f"/{check['pattern']}/ matched nowhere in {len(files)} file(s), as required"

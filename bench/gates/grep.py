"""The `grep` check: a regex must (or must not) match in the files globs select.

Globs never leave the workspace and symlinks are not followed, so an agent cannot
point the grader at a file outside what it produced.
"""

from __future__ import annotations

import re
from pathlib import Path

MAX_FILE_BYTES = 8 << 20


def _selected(workspace: Path, globs: list[str]) -> list[Path]:
    root = workspace.resolve()
    files: set[Path] = set()
    for pattern in globs:
        for path in workspace.glob(pattern):
            if path.is_symlink() or not path.is_file():
                continue
            if root in path.resolve().parents:
                files.add(path)
    return sorted(files)


def run(check: dict, workspace: Path) -> tuple[bool, str]:
    """(passed, detail) naming the files that matched, or that none did."""
    regex = re.compile(check["pattern"], re.MULTILINE)
    files = _selected(workspace, check["files"])
    hits = [
        path.relative_to(workspace).as_posix()
        for path in files
        if path.stat().st_size <= MAX_FILE_BYTES and regex.search(path.read_text("utf-8", "replace"))
    ]
    wanted = check.get("must_match", True)
    where = ", ".join(check["files"])
    if wanted:
        if hits:
            return True, f"/{check['pattern']}/ matched in {', '.join(hits)}"
        return False, f"/{check['pattern']}/ matched in none of {len(files)} file(s) selected by {where}"
    if hits:
        return False, f"/{check['pattern']}/ must not match, but matched in {', '.join(hits)}"
    return True, f"/{check['pattern']}/ matched nowhere in {len(files)} file(s), as required"

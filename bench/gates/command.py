"""The `command` check: run a shell command in the workspace; exit code and output decide."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

TAIL = 2000


def run(check: dict, workspace: Path) -> tuple[bool, str]:
    """(passed, detail). A command that outlives its timeout fails, naming the timeout."""
    try:
        done = subprocess.run(
            ["sh", "-c", check["run"]], cwd=workspace, capture_output=True, text=True,
            errors="replace", timeout=check.get("timeout_s", 120), stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False, f"timeout: `{check['run']}` ran past {check.get('timeout_s', 120)} s"
    output = f"stdout:\n{done.stdout[-TAIL:]}\nstderr:\n{done.stderr[-TAIL:]}"
    expected = check.get("expect_exit", 0)
    if done.returncode != expected:
        return False, f"`{check['run']}` exited {done.returncode}, expected {expected}\n{output}"
    for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        for pattern in check.get(f"{stream}_matches", []):
            if not re.search(pattern, text, re.MULTILINE):
                return False, f"{stream} of `{check['run']}` does not match /{pattern}/\n{output}"
    return True, f"`{check['run']}` exited {done.returncode}"

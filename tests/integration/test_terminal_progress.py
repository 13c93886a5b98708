"""`bench run` on a real pseudo-terminal: finished trials above one live region, nothing stale left.

The bytes the terminal receives are read back two ways (tests/terminal.py): no single
physical line may hold both the progress region and a finished trial's line, and the
replayed screen shows each finished trial exactly once and no progress bar at the end.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.terminal import screen, writes

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
FINISHED = re.compile(r"hello/default/trial-(\d): PASS")


def _run_on_a_terminal(args: list[str], cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """Run `bench ARGS` with stdout and stderr on a fresh pty 100 columns wide; the exit code and every byte."""
    leader, follower = pty.openpty()
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT), "COLUMNS": "100", "LINES": "30",
           "TERM": "xterm-256color"}
    for name in ("CI", "NO_COLOR", "TERM_PROGRAM", "FORCE_COLOR"):  # rich treats these as "not a live terminal"
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, "-m", "bench.cli", *args], stdin=follower, stdout=follower,
                               stderr=follower, env=env, cwd=cwd)
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], timeout)
            assert ready, f"no output for {timeout} s"
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower side closed: the process is gone
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode()


def test_progress_on_a_terminal_keeps_trial_lines_off_the_bar(docker_client, tmp_path):
    code, raw = _run_on_a_terminal(["run", "hello", "--agent", "oracle", "--trials", "3", "--concurrency", "2",
                                    "--results", str(tmp_path / "results")], tmp_path)
    assert code == 0, raw
    assert "━" in raw and "running hello/default/trial-" in raw  # there was a live region naming running trials
    mixed = [w for w in writes(raw) if FINISHED.search(w) and ("━" in w or " running" in w)]
    assert not mixed, mixed
    shown = screen(raw)
    assert sorted(m.group(1) for line in shown if (m := FINISHED.search(line))) == ["1", "2", "3"]
    assert not [line for line in shown if line.startswith("trials ") or "running hello/" in line], shown
    assert "results: " in shown[-1]

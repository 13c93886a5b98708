"""Stopping the Docker engine mid-trial is ERROR, never FAIL, with a clear message.

This test really stops the local dockerd and starts it again, so it runs last
(see conftest). Afterwards the next run removes the stopped run's leftovers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

pytestmark = [pytest.mark.docker, pytest.mark.engine_restart]
ROOT = Path(__file__).resolve().parents[2]


def _dockerd() -> tuple[int, list[str]]:
    """The dockerd serving this test's engine (DOCKER_HOST, else the default socket): pid and argv.

    CI runs its own engine beside the default one (scripts/engine), so "the" dockerd is
    the one whose --host names our socket; it is restarted with exactly its own arguments.
    """
    done = subprocess.run(["pidof", "dockerd"], capture_output=True, text=True)
    address = os.environ.get("DOCKER_HOST", "")
    for pid in map(int, done.stdout.split()):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
        hosts = [a.split("=", 1)[-1] for a in argv if a.startswith(("--host", "-H"))]
        hosts += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--host", "-H")]
        if (address and address in hosts) or (not address and not hosts):
            return pid, argv
    pytest.fail(f"this test needs the local dockerd serving {address or 'the default socket'} to stop "
                f"(dockerd processes: {done.stdout.split()})")


def _bridges() -> set[str]:
    """The host's engine bridges by name (docker0, bench-ci0), not the br-* of user networks."""
    return {path.name for path in Path("/sys/class/net").iterdir()
            if (path / "bridge").is_dir() and not path.name.startswith("br-")}


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _engine_up() -> bool:
    try:
        return docker.from_env(timeout=5).ping()
    except Exception:
        return False


def _start_dockerd(argv: list[str]) -> None:
    log = open("/tmp/bench-dockerd.log", "ab")
    subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
    _wait(_engine_up, 60, "dockerd to answer again")


def test_engine_stopped_mid_trial_is_error(docker_client, tmp_path):
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(
        [sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "command", "--agent-cmd", "sleep 120",
         "--label", "gone"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait(lambda: docker_client.containers.list(filters={"label": "bench.role=agent"}), 60, "the agent container")
    pid, argv = _dockerd()
    bridges = _bridges()  # another engine's bridge (docker0) must outlive this engine's restart
    try:
        os.kill(pid, signal.SIGTERM)
        _wait(lambda: not os.path.exists(f"/proc/{pid}"), 60, "dockerd to stop")
        _, stderr = run.communicate(timeout=120)
    finally:
        _start_dockerd(argv)
    assert bridges <= _bridges(), f"restarting the engine deleted {sorted(bridges - _bridges())}"
    result = json.loads((tmp_path / "results/gone/hello/default/trial-1/result.json").read_text())
    assert result["verdict"] == "ERROR"
    assert "Docker engine went away" in result["reason"]
    assert run.returncode == 3  # no FAIL, an ERROR: no verdict (bench/exit_status.py)
    assert "the Docker engine went away" in stderr
    # The next run removes what the dead run could not, and nothing is left.
    after = subprocess.run([sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "null", "--label", "after"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert after.returncode == 1, after.stderr  # the null agent's FAIL: the engine is back
    left = docker.from_env().containers.list(all=True, filters={"label": "bench.harness"})
    assert not [c for c in left if c.labels.get("bench.run") == result["run_id"]]

"""Two runs on one engine: start-up never waits on, or touches, another live run's containers.

Run A's agent container is frozen (`docker pause`: it answers nothing until thawed);
beside it sits a frozen container whose owning process is gone, as an interrupted run
leaves one. Run B must start, remove the dead run's container, leave A's alone (still
there, still paused) and finish its own trial.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.engine import HARNESS, HARNESS_LABEL, HOST_LABEL, PID_LABEL, ROLE_LABEL, RUN_LABEL

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]


def bench_process(tmp_path: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT), "BENCH_RESULTS": str(tmp_path / "results")}
    return subprocess.Popen([sys.executable, "-m", "bench.cli", *args], env=env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def agent_container_of(client, pid: int, within_s: float = 300):
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        found = client.containers.list(filters={"label": [f"{PID_LABEL}={pid}", f"{ROLE_LABEL}=agent"],
                                                "status": "running"})
        if found:
            return found[0]
        time.sleep(0.5)
    raise AssertionError(f"run A (pid {pid}) started no agent container within {within_s} s")


def test_a_run_starts_and_finishes_beside_a_frozen_live_run(docker_client, tmp_path):
    run_a = bench_process(tmp_path, "run", "hello", "--agent", "command", "--agent-cmd", "sleep 900", "--label", "a")
    orphan = None
    try:
        frozen = agent_container_of(docker_client, run_a.pid)
        frozen.pause()
        gone = subprocess.Popen(["true"])
        gone.wait()  # its pid now names no process: the owner of an interrupted run
        orphan = docker_client.containers.run(
            frozen.image.id, ["sleep", "900"], detach=True, network_mode="none",
            labels={HARNESS_LABEL: HARNESS, HOST_LABEL: socket.gethostname(), PID_LABEL: str(gone.pid),
                    RUN_LABEL: "interrupted-run", ROLE_LABEL: "agent"})
        orphan.pause()

        run_b = bench_process(tmp_path, "run", "hello", "--agent", "oracle", "--label", "b")
        out, err = run_b.communicate(timeout=300)
        assert run_b.returncode == 0, err[-3000:]
        assert "removed containers left by interrupted run interrupted-run" in err
        assert "PASS" in out + err
        frozen.reload()
        assert frozen.status == "paused"  # A's container: untouched
        assert not docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}=interrupted-run"})
    finally:
        for container in [c for c in docker_client.containers.list(filters={"label": f"{PID_LABEL}={run_a.pid}"})
                          if c.status == "paused"]:
            container.unpause()
        os.killpg(run_a.pid, signal.SIGINT)
        try:
            run_a.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(run_a.pid, signal.SIGKILL)
        if orphan is not None:
            try:
                orphan.remove(force=True)
            except Exception:
                pass
    assert not docker_client.containers.list(all=True, filters={"label": f"{PID_LABEL}={run_a.pid}"})

"""A real Ray cluster on this machine for tests and benchmarks: a head and more nodes as separate `ray start`s.

Each node is its own `ray start --block` in a session of its own, with its own ports, so
one node can be killed alone (its whole process group: raylet, workers), as a lost
machine would be, while the others go on; ``stop`` kills every session it started, and
nothing else (never `ray stop`, which would stop any Ray on the machine). Every node
offers the ``docker`` resource and a marker resource naming it, so a test can tell which
node ID is which. All nodes use the local Docker engine.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OBJECT_STORE = 200 * 1024 * 1024  # the machine has little memory to spare for tests


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def session_pids(session: int) -> list[int]:
    """The processes whose session is ``session`` (a node's `ray start` leads one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == session:
                    found.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                pass
    return found


class RayCluster:
    def __init__(self) -> None:
        self.temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # Ray's socket paths must stay short
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: dict[str, subprocess.Popen] = {}

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0", **(extra or {})}

    def start(self, name: str, docker: int = 2, env: dict[str, str] | None = None) -> None:
        """Start node ``name`` (the first one is the head) and wait until the cluster lists it."""
        head = not self.nodes
        where = ["--head", f"--port={self.port}", "--include-dashboard=false", f"--temp-dir={self.temp}"] if head \
            else [f"--address={self.address}"]
        ports = [f"--{flag}={free_port()}" for flag in ("dashboard-agent-listen-port", "dashboard-agent-grpc-port",
                                                         "runtime-env-agent-port", "metrics-export-port",
                                                         "node-manager-port", "object-manager-port")]
        low = free_port()
        command = [sys.executable, "-m", "ray.scripts.scripts", "start", *where, "--num-cpus=1", "--block",
                   f"--object-store-memory={OBJECT_STORE}", "--disable-usage-stats", *ports,
                   f"--resources={json.dumps({'docker': docker, name: 1})}",
                   f"--min-worker-port={low}", f"--max-worker-port={low + 40}"]
        log = open(self.temp / f"{name}.log", "wb")
        self.nodes[name] = subprocess.Popen(command, env=self.env(env), stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + 120
        while name not in self.node_ids():
            if self.nodes[name].poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray node {name} did not start: {(self.temp / f'{name}.log').read_text()[-2000:]}")
            time.sleep(1)

    def node_ids(self) -> dict[str, str]:
        """Marker name -> node ID of every live node, asked of the cluster by a short driver of its own."""
        script = ("import json, ray; ray.init(address=%r, logging_level='ERROR', log_to_driver=False); "
                  "print(json.dumps([[n['NodeID'], n['Resources']] for n in ray.nodes() if n['Alive']]))" % self.address)
        done = subprocess.run([sys.executable, "-c", script], env=self.env(), capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            return {}
        found = json.loads(done.stdout.strip().splitlines()[-1])
        return {name: node_id for node_id, resources in found for name in self.nodes if name in resources}

    def kill(self, name: str) -> None:
        """Every process of the node's session at once (raylet, and workers in process groups of their own), as a
        machine that goes away."""
        process = self.nodes.pop(name)
        for pid in session_pids(process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait(timeout=30)

    def stop(self) -> None:
        for name in reversed(list(self.nodes)):
            self.kill(name)

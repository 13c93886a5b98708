"""The credential proxy end to end: a real agent CLI, a planted key, a fake provider that checks it.

The "provider" is the scripted model endpoint in a container of its own on the default
bridge, started with ``--require-key-sha256``: it answers 401 to any request whose key
does not hash to the planted one. So a PASS proves the key was injected on the way,
while the agent's own first move (a shell call) dumps its environment and every
process's ``/proc/*/environ`` into the workspace, tries to reach another host through
the proxy, and tries to reach the provider directly. No --model-script: this is the
path a real API key takes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import subprocess
import sys
import tarfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
PORT = 8080
CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
                        "CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
PROBE = """
import socket, sys
def first_line(host, port, request):
    try:
        s = socket.create_connection((host, port), timeout=3)
        s.sendall(request)
        return s.recv(200).split(b"\\r\\n")[0].decode()
    except OSError as exc:
        return "refused: " + type(exc).__name__
provider, port = sys.argv[1], int(sys.argv[2])
print("absolute", first_line("127.0.0.1", 8766, f"GET http://{provider}:{port}/v1/models HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n".encode()))
print("direct", first_line(provider, port, b"GET /v1/models HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"))
"""
AGENTS = {
    "claude-code": {"key": "ANTHROPIC_API_KEY", "base": "ANTHROPIC_BASE_URL", "path": "", "tool": "Bash",
                    "input": lambda cmd: {"command": cmd, "description": "Look around"},
                    "write": ("Write", {"file_path": "/workspace/hello.txt", "content": "Hello, world!\n"}),
                    "placeholder": "ANTHROPIC_API_KEY=bench-proxy-placeholder", "args": ()},
    "codex": {"key": "OPENAI_API_KEY", "base": "OPENAI_BASE_URL", "path": "/v1", "tool": "exec_command",
              "input": lambda cmd: {"cmd": cmd},
              "write": ("exec_command", {"cmd": "printf 'Hello, world!\\n' > /workspace/hello.txt"}),
              "placeholder": "CODEX_API_KEY=bench-proxy-placeholder", "args": ("--model", "bench-scripted")},
}


def script(agent: dict, provider_ip: str) -> list[dict]:
    """Dump the environment and probe the network, then solve hello."""
    dump = ("env > /workspace/env.txt; cat /proc/*/environ 2>/dev/null | tr '\\000' '\\n' > /workspace/proc-environ.txt;"
            f" python3 /workspace/probe.py {provider_ip} {PORT} > /workspace/probe.txt 2>&1; true")
    setup = f"cat > /workspace/probe.py <<'EOF'\n{PROBE}\nEOF\n{dump}"
    return [{"text": "Looking around.", "tool": agent["tool"], "input": agent["input"](setup)},
            {"text": "Writing the greeting.", "tool": agent["write"][0], "input": agent["write"][1]},
            {"text": "Created hello.txt."}]


@contextmanager
def fake_provider(client, tmp_path: Path, agent: dict, key: str):
    """The scripted endpoint on the bridge, requiring ``key``; yields (container, its IP). Removed on exit.

    It waits for its script, which names its own address (for the agent's probe), so
    the script is put in once the container has one.
    """
    from bench.engine import ROLE_LABEL, run_labels
    from bench.harness import WHEEL_IN_CONTAINER, build_wheel
    from bench.images import Images
    from bench.paths import Project
    from bench.sandbox import tar_tree

    image = Images(client, Project(ROOT)).ensure("claude-code")
    wheel = build_wheel(tmp_path / "wheel")
    serve = ["python3", "-m", "bench.model_endpoint", "--script", "/tmp/script.json", "--host", "0.0.0.0",
             "--port", str(PORT), "--require-key-sha256", hashlib.sha256(key.encode()).hexdigest()]
    command = ["sh", "-c", 'while [ ! -f /tmp/script.json ]; do sleep 0.1; done; exec "$@"', "provider", *serve]
    container = client.containers.create(
        image.id, command, user="1000:1000", working_dir="/", environment={"PYTHONPATH": WHEEL_IN_CONTAINER},
        labels=run_labels(f"test-provider-{uuid.uuid4().hex[:8]}", **{ROLE_LABEL: "provider"}), network_mode="bridge")
    try:
        container.put_archive("/", tar_tree([], {WHEEL_IN_CONTAINER.lstrip("/"): wheel.read_bytes()}))
        container.start()
        container.reload()
        ip = container.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
        container.put_archive("/tmp", tar_tree([], {"script.json": json.dumps(script(agent, ip)).encode()}))
        deadline = time.monotonic() + 30
        while b"BENCH-ENDPOINT-READY" not in container.logs() and time.monotonic() < deadline:
            time.sleep(0.2)
        yield container, ip
    finally:
        container.remove(force=True)


def leaks(data: bytes, key: bytes) -> list[str]:
    """Which encodings of ``key`` occur in ``data``: raw, and base64 at each of the three alignments."""
    found = ["raw"] if key in data else []
    for shift in range(3):
        core = base64.b64encode(b"x" * shift + key)[4:-4]
        if core in data:
            found.append(f"base64+{shift}")
    return found


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_the_agent_never_holds_the_key(docker_client, tmp_path, name):
    agent, key = AGENTS[name], f"sk-ant-test-PLANTED-{secrets.token_hex(12)}"
    with fake_provider(docker_client, tmp_path, agent, key) as (provider, ip):
        base = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARIABLES}
        env = {**base, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT), agent["key"]: key,
               agent["base"]: f"http://{ip}:{PORT}{agent['path']}"}
        done = subprocess.run([sys.executable, "-m", "bench.cli", "run", "hello", "--agent", name, *agent["args"],
                               "--label", "proxied"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        served = provider.logs().decode()
    trial = tmp_path / "results" / "proxied" / "hello" / "default" / "trial-1"
    result = json.loads((trial / "result.json").read_text())
    assert result["verdict"] == "PASS", f"{result['reason']}\n{done.stderr[-2000:]}\n{served[-2000:]}"
    assert '"unauthorized": true' not in served and '"turn": 3' in served  # every call carried the real key

    with tarfile.open(trial / "workspace.tar") as archive:
        dumped = {Path(m.name).name: archive.extractfile(m).read().decode() for m in archive if m.isfile()}
    assert agent["placeholder"] in dumped["env.txt"] and "bench-proxy-placeholder" in dumped["proc-environ.txt"]
    probe = dict(line.split(" ", 1) for line in dumped["probe.txt"].splitlines())
    assert probe["absolute"].split()[1] == "400", probe  # the proxy refuses to name another host
    assert probe["direct"].startswith("refused"), probe  # and there is no route around it

    walked = 0
    for path in (tmp_path / "results").rglob("*"):
        if path.is_file():
            walked += 1
            assert not leaks(path.read_bytes(), key.encode()), f"{path} holds the key"
    assert walked >= 8
    requests = [json.loads(line) for line in (trial / "proxy.log").read_text().splitlines() if line.startswith("{")]
    assert [r for r in requests if r.get("status") == 200 and r["method"] == "POST"], requests
    assert all(set(r) <= {"t", "method", "path", "status", "bytes", "ms", "refused", "aborted"} for r in requests)
    left = docker_client.volumes.list(filters={"label": f"bench.run={result['run_id']}"})
    assert left == [], [v.name for v in left]


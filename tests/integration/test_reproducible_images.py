"""Every pinned image, built on a second Docker engine with an empty data root, is the same image.

The second engine shares nothing with the first but the host's download cache (files
named by their SHA-256, checked again on use): no image, layer or build cache. Builds
of layer images run without network, so its bridge routes nowhere (no iptables). The
test names every image whose content digest or image ID differs, and its first paths.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import docker
import pytest

from bench.images import Images
from bench.paths import Project

pytestmark = [pytest.mark.docker]
ROOT = Path(__file__).resolve().parents[2]
BRIDGE = "bench-rb0"


def _answers(address: str) -> bool:
    try:
        return docker.DockerClient(base_url=address, timeout=5).ping()
    except Exception:
        return False


@pytest.fixture(scope="module")
def second_engine():
    """A dockerd of its own (socket, data root, exec root, containerd), offline; gone afterwards."""
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        pytest.fail("this test starts a second dockerd: it needs dockerd on PATH and root, as CI has")
    home = Path(f"/var/tmp/bench-second-engine-{os.getpid()}")
    (home / "data").mkdir(parents=True)
    address = f"unix://{home}/docker.sock"
    log = open(home / "dockerd.log", "wb")
    # A bridge of its own: with `--bridge none` dockerd deletes docker0, the default engine's bridge.
    subprocess.run(f"ip link add {BRIDGE} type bridge && ip addr add 10.215.0.1/24 dev {BRIDGE}", shell=True,
                   check=False, capture_output=True)
    process = subprocess.Popen(
        ["dockerd", "--data-root", str(home / "data"), "--exec-root", str(home / "exec"),
         "--pidfile", str(home / "docker.pid"), "--host", address, "--bridge", BRIDGE,
         "--iptables=false", "--ip-masq=false"], stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 60
    while not _answers(address):
        if time.monotonic() > deadline or process.poll() is not None:
            pytest.fail(f"the second dockerd did not start: {(home / 'dockerd.log').read_text()[-2000:]}")
        time.sleep(0.5)
    try:
        yield docker.DockerClient(base_url=address, timeout=600)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
        subprocess.run(f"grep -o ' {home}/[^ ]*' /proc/mounts | sort -r | xargs -r -n1 umount -l",
                       shell=True, check=False)
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run(["ip", "link", "del", BRIDGE], check=False, capture_output=True)


def _differences(first: Images, second: Images, name: str, a, b) -> str:
    paths_a = first.filesystem(name, a.id)["paths"]
    paths_b = second.filesystem(name, b.id)["paths"]
    differing = sorted(p for p in set(paths_a) | set(paths_b) if paths_a.get(p) != paths_b.get(p))
    return f"{name}: {a.id[7:19]} vs {b.id[7:19]}, paths {differing[:8]}"


def test_every_image_built_on_an_empty_engine_is_bit_identical(docker_client, second_engine):
    project = Project(ROOT)
    here, there = Images(docker_client, project), Images(second_engine, project)
    names = here.names()
    assert {"base", "toolchain", "seat", "shallot", "claude-code", "codex"} <= set(names)
    built = {name: (here.ensure(name), there.ensure(name)) for name in names}
    assert set(there.built) == set(names), "the empty engine must build every image itself"
    ours = docker_client.api.inspect_network("bridge")["Options"].get("com.docker.network.bridge.name")
    assert ours is None or subprocess.run(["ip", "link", "show", ours], capture_output=True).returncode == 0, \
        f"the second engine took the first engine's bridge {ours}"
    content = [_differences(here, there, n, a, b) for n, (a, b) in built.items() if a.content_digest != b.content_digest]
    assert not content, "content differs: " + "; ".join(content)
    bits = [f"{n}: {a.id[7:19]} vs {b.id[7:19]}" for n, (a, b) in built.items() if a.id != b.id]
    assert not bits, "same content, other image IDs (a non-deterministic config or layer): " + "; ".join(bits)
    for name, (a, _) in built.items():
        assert here.builder(name) in ("mmdebstrap", "layer") and a.tag == there.tag(name)

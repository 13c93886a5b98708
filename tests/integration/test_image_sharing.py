"""Locked images moved by digest: through a real OCI registry on 127.0.0.1, and through files.

The registry is Debian's `docker-registry` (distribution 2.8), started by the fixture
on a free loopback port with its own storage folder and stopped after the module. The
Docker engine treats 127.0.0.0/8 registries as insecure (plain HTTP) by default. Each
test moves a tiny image of its own (a file on base, unique content, locked in a scratch
project), so removing it locally never touches the images other tests share.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid
from pathlib import Path

import docker
import pytest

pytestmark = pytest.mark.docker

REGISTRY_CONFIG = """version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: %s}
http: {addr: "127.0.0.1:%d"}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def registry(tmp_path_factory, docker_client) -> str:
    """A running registry's host:port; CI without the binary is a failure, like a missing engine."""
    binary = shutil.which("docker-registry")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Debian's docker-registry (scripts/setup installs it) and it is not on PATH")
        pytest.skip("docker-registry not installed (apt-get install docker-registry)")
    folder = tmp_path_factory.mktemp("registry")
    port = free_port()
    config = folder / "config.yml"
    config.write_text(REGISTRY_CONFIG % (folder / "storage", port))
    log = open(folder / "registry.log", "wb")
    server = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(f"http://127.0.0.1:{port}/v2/", server, folder / "registry.log")
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def wait_for(url: str, server: subprocess.Popen, log: Path) -> None:
    for _ in range(100):
        if server.poll() is not None:
            pytest.fail(f"docker-registry exited {server.returncode}: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"docker-registry did not answer {url} in 10 s: {log.read_text()[-2000:]}")


@pytest.fixture(autouse=True)
def wide_table(monkeypatch):
    """`bench images list` renders one line per row only when the table is not squeezed to 80 columns."""
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture()
def tiny(project: Path, bench, docker_client):
    """A tiny image on base with unique content, locked in the scratch project; removed by ID afterwards."""
    folder = project / "images" / "share-probe"
    folder.mkdir()
    (folder / "image.toml").write_text('parent = "base"\n')
    (folder / "Dockerfile").write_text("ARG PARENT\nFROM ${PARENT}\nCOPY x.txt /opt/x.txt\n")
    (folder / "x.txt").write_text(f"shared by digest {uuid.uuid4()}\n")
    bench("images", "lock", "share-probe", root=project, check_rc=0)
    entry = lock_entry(project)
    yield entry
    remove_by_id(docker_client, entry["id"])


def lock_entry(project: Path) -> dict:
    return json.loads((project / "provenance" / "images.lock.json").read_text())["images"]["share-probe"]


def remove_by_id(client, image_id: str) -> None:
    """Every reference to the probe's own ID (lock tag, registry digest): it is this test's alone."""
    try:
        client.images.remove(image_id, force=True)
    except docker.errors.ImageNotFound:
        pass
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(image_id)


def listed_state(bench, project: Path, tag: str) -> str | None:
    """The lock column of `bench images list` for the row of ``tag``, or None when no row shows it."""
    shown = bench("images", "list", root=project, check_rc=0).stdout
    rows = [line for line in shown.splitlines() if tag.split(":")[1] in line and "share-probe" in line]
    return rows[0].split("│")[-2].strip() if rows else None


def test_push_remove_pull_gives_the_locked_image_id_bit_verified(docker_client, bench, project, registry, tiny):
    pushed = bench("images", "push", registry, "share-probe", root=project, check_rc=0)
    digest = lock_entry(project)["registry_digests"][registry]
    assert digest.startswith("sha256:") and digest in pushed.stdout, pushed.stdout
    assert listed_state(bench, project, tiny["tag"]) == "bit-verified"

    remove_by_id(docker_client, tiny["id"])
    assert listed_state(bench, project, tiny["tag"]) is None

    pulled = bench("images", "pull", registry, "share-probe", root=project, check_rc=0)
    print(pushed.stdout, pulled.stdout)
    assert docker_client.images.get(tiny["tag"]).id == tiny["id"]
    assert listed_state(bench, project, tiny["tag"]) == "bit-verified"


def test_pull_refuses_an_image_whose_id_is_not_the_locks(docker_client, bench, project, registry, tiny):
    bench("images", "push", registry, "share-probe", root=project, check_rc=0)
    remove_by_id(docker_client, tiny["id"])
    lock_file = project / "provenance" / "images.lock.json"
    lock = json.loads(lock_file.read_text())
    lock["images"]["share-probe"]["id"] = "sha256:" + "0" * 64
    lock_file.write_text(json.dumps(lock))
    refused = bench("images", "pull", registry, "share-probe", root=project, check_rc=1)
    assert "image share-probe:" in refused.stderr and "sha256:000000000000" in refused.stderr, refused.stderr
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(tiny["tag"])  # nothing was tagged
    remove_by_id(docker_client, tiny["id"])

    never = bench("images", "pull", "127.0.0.1:1", "share-probe", root=project, check_rc=2)
    assert "images.share-probe.registry_digests has no digest for 127.0.0.1:1" in never.stderr, never.stderr


def test_save_remove_load_is_bit_verified_and_a_tampered_archive_is_refused(
        docker_client, bench, project, tiny, tmp_path):
    folder = tmp_path / "saved"
    bench("images", "save", str(folder), "share-probe", root=project, check_rc=0)
    manifest = json.loads((folder / "bench-images.json").read_text())["images"]
    assert [(m["name"], m["tag"], m["id"]) for m in manifest] == [("share-probe", tiny["tag"], tiny["id"])]

    remove_by_id(docker_client, tiny["id"])
    bench("images", "load", str(folder), root=project, check_rc=0)
    assert docker_client.images.get(tiny["tag"]).id == tiny["id"]
    assert listed_state(bench, project, tiny["tag"]) == "bit-verified"

    remove_by_id(docker_client, tiny["id"])
    archive = folder / "share-probe.tar"
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    refused = bench("images", "load", str(folder), root=project, check_rc=2)
    assert f"{archive}: SHA-256" in refused.stderr and "altered or damaged" in refused.stderr, refused.stderr
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(tiny["id"])

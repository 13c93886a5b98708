"""Pinned images on the real engine: rebuilds reproduce or name their drift; prune is exact.

Every test works in a scratch copy of the project (its own lock) and removes the images
it made. Only the rebuilds of base take time (~25 s each: mmdebstrap from the mirror).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

import docker
import pytest

from bench.images import Images
from bench.paths import Project

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]

PROBE_DOCKERFILE = "ARG PARENT\nFROM ${PARENT}\nCOPY x.txt /opt/x.txt\n"


def read_lock(project: Path) -> dict:
    return json.loads((project / "provenance" / "images.lock.json").read_text())["images"]


def edit_lock(project: Path, edit) -> None:
    path = project / "provenance" / "images.lock.json"
    data = json.loads(path.read_text())
    edit(data["images"])
    path.write_text(json.dumps(data, indent=2))


def add_probe(project: Path, name: str, content: str) -> Path:
    """A tiny image on base whose only change is /opt/x.txt; unique content, so a fresh tag."""
    folder = project / "images" / name
    folder.mkdir()
    (folder / "image.toml").write_text('parent = "base"\n')
    (folder / "Dockerfile").write_text(PROBE_DOCKERFILE)
    (folder / "x.txt").write_text(content)
    return folder


def remove_images(client, *refs: str) -> None:
    for ref in refs:
        try:
            client.images.remove(ref)
        except docker.errors.ImageNotFound:
            pass


def test_rebuilding_base_twice_gives_the_same_digest_and_image_id(docker_client, project):
    """mmdebstrap with SOURCE_DATE_EPOCH and a hand-written archive: the same bytes, twice."""
    images = Images(docker_client, Project(project))
    tags = ["bench/base:rebuild-test-1", "bench/base:rebuild-test-2"]
    try:
        first, second = (images.rebuild("base", tag) for tag in tags)
        digests = [images.filesystem("base", image.id)["digest"] for image in (first, second)]
    finally:
        remove_images(docker_client, *tags)
    assert first.id == second.id
    assert digests[0] == digests[1]
    print(f"base rebuilt twice: image ID {first.id}, content digest {digests[0]}")


def test_a_changed_file_in_an_image_context_is_drift_naming_the_path(docker_client, bench, project):
    probe = add_probe(project, "probe", f"one {uuid.uuid4()}\n")
    bench("images", "lock", "probe", root=project, check_rc=0)
    locked = read_lock(project)["probe"]
    assert locked["builder"] == "dockerfile" and locked["verified"] is None
    made = [locked["tag"]]
    try:
        same = bench("images", "rebuild", "probe", "--check", root=project, check_rc=0)
        assert "probe: same — content-reproducible" in same.stdout, same.stdout
        assert read_lock(project)["probe"]["verified"] == "content"

        (probe / "x.txt").write_text("two\n")
        drift = bench("images", "rebuild", "probe", "--check", root=project, check_rc=1)
        print(drift.stdout)
        assert "probe: drifted" in drift.stdout
        assert "packages: none changed" in drift.stdout
        assert re.search(r"paths: 1 differ:\n\s+~ opt/x\.txt\n", drift.stdout), drift.stdout
        after = read_lock(project)["probe"]
        assert after["id"] == locked["id"] and after["verified"] is None
        assert docker_client.images.get(locked["tag"]).id == locked["id"], "--check moved a locked tag"
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get("bench/probe:rebuild")

        # Without --check the rebuild takes its tag; `lock` accepts it; a new check agrees.
        taken = bench("images", "rebuild", "probe", root=project, check_rc=1)
        tag = re.search(r"the rebuild now holds (\S+)", taken.stdout).group(1)
        made.append(tag)
        bench("images", "lock", "probe", root=project, check_rc=0)
        assert read_lock(project)["probe"]["tag"] == tag
        bench("images", "rebuild", "probe", "--check", root=project, check_rc=0)
    finally:
        remove_images(docker_client, *made)


def test_each_result_records_the_level_its_images_reached(docker_client, bench, project, tmp_path):
    """hello runs on base alone: the level follows what a rebuild verified in the lock."""
    bench("images", "lock", "base", root=project, check_rc=0)  # this machine's base, not the committed lock's
    levels = {}
    for verified, label in ((None, "pinned"), ("content", "content"), ("bit", "bit")):
        edit_lock(project, lambda images: images["base"].update(verified=verified))
        bench("run", "hello", "--agent", "oracle", "--label", label, root=project, check_rc=0)
        provenance = tmp_path / "results" / label / "hello" / "default" / "trial-1" / "provenance.json"
        levels[verified] = json.loads(provenance.read_text())["reproducibility"]
    assert levels == {None: "pinned", "content": "content-reproducible", "bit": "bit-reproducible"}
    shown = bench("verify-provenance", str(tmp_path / "results"), root=project)
    assert "(1 pinned, 1 content-reproducible, 1 bit-reproducible)" in shown.stdout, shown.stdout


def test_prune_removes_only_what_the_harness_made_and_nothing_needs(docker_client, bench, project, tmp_path):
    add_probe(project, "probe", f"prune me {uuid.uuid4()}\n" + "x" * (1 << 20))
    add_probe(project, "kept", f"a result names me {uuid.uuid4()}\n")
    # The test's own lock, from this engine: the committed lock's IDs exist only where it was written.
    bench("images", "lock", "probe", "kept", "base", "toolchain", root=project, check_rc=0)
    lock = read_lock(project)
    probe, kept = lock["probe"], lock["kept"]
    edit_lock(project, lambda images: [images.pop("probe"), images.pop("kept")])
    results = tmp_path / "kept-results"
    trial = results / "label" / "hello" / "default" / "trial-1"
    trial.mkdir(parents=True)
    (trial / "provenance.json").write_text(json.dumps({"images": {"agent": {"id": kept["id"]}}}))

    base = docker_client.images.get(lock["base"]["tag"])
    unrelated, _ = docker_client.images.build(
        fileobj=io.BytesIO(f"FROM {lock['base']['tag']}\nLABEL purpose=unrelated\n".encode()),
        tag="unrelated/test:1", rm=True)
    # The builder copies base's labels: the harness label alone cannot tell ours from theirs.
    assert unrelated.labels["bench.harness"] == "hermetic-bench"
    gone = subprocess.Popen(["true"])
    gone.wait()
    owner = {"bench.harness": "hermetic-bench", "bench.host": socket.gethostname()}
    dead = docker_client.containers.create(base.id, ["true"], labels={**owner, "bench.pid": str(gone.pid)})
    live = docker_client.containers.create(base.id, ["true"], labels={**owner, "bench.pid": str(subprocess.os.getpid())})
    try:
        planned = bench("images", "prune", "--dry-run", "--results", str(results), root=project, check_rc=0)
        assert "unrelated/test:1" not in planned.stdout
        assert not any(t in planned.stdout for t in (lock["base"]["tag"], lock["toolchain"]["tag"], kept["tag"]))
        assert docker_client.images.get(probe["id"])

        done = bench("images", "prune", "probe", "kept", "base", "--results", str(results), root=project, check_rc=0)
        print(done.stdout)
        assert f"removed image {probe['tag']}" in done.stdout
        assert re.search(r"^freed [\d.]+ MB \(\d+ bytes\)$", done.stdout, re.M)
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(probe["id"])
        for image_id in (unrelated.id, kept["id"], lock["base"]["id"], lock["toolchain"]["id"]):
            assert docker_client.images.get(image_id)
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(dead.id)
        assert docker_client.containers.get(live.id)
    finally:
        live.remove(force=True)
        try:  # a failed assertion must not leave a dead-owner container for the leftover check to trip on
            dead.remove(force=True)
        except docker.errors.NotFound:
            pass
        remove_images(docker_client, "unrelated/test:1", kept["tag"], probe["tag"])


def test_load_locks_a_deterministic_archive_as_bit_reproducible_capable(docker_client, bench, project, tmp_path):
    """A dockerTools-like archive (fixed config, one layer) is loaded and locked under --name."""
    from bench.images import write_docker_archive

    rootfs = tmp_path / "rootfs.tar"
    with tarfile.open(rootfs, "w") as tar:
        data = f"loaded {uuid.uuid4()}\n".encode()
        info = tarfile.TarInfo("etc/greeting")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    archive = tmp_path / "image.tar"
    labels = {"bench.harness": "hermetic-bench", "bench.image": "nixlike", "bench.builder": "dockertools"}
    image_id = write_docker_archive(rootfs, archive, "bench/nixlike:nix", 1735689600, labels)
    tag = f"bench/nixlike:{image_id[7:23]}"
    try:
        refused = bench("images", "load", str(archive), "--name", "base", root=project, check_rc=2)
        assert "images/base already builds" in refused.stderr
        done = bench("images", "load", str(archive), "--name", "nixlike", root=project, check_rc=0)
        assert "builder dockertools (bit-reproducible-capable)" in done.stdout
        entry = read_lock(project)["nixlike"]
        assert (entry["id"], entry["tag"], entry["builder"]) == (image_id, tag, "dockertools")
        assert entry["content_digest"].startswith("sha256:") and entry["packages"] == {}
        rebuild = bench("images", "rebuild", "nixlike", root=project, check_rc=2)
        assert "nix build .#nixlike" in rebuild.stderr
    finally:
        remove_images(docker_client, tag, "bench/nixlike:nix")


def test_a_loaded_deterministic_archive_is_an_image_cases_can_run_on(docker_client, bench, project, tmp_path):
    """The Nix path's level 3: an archive a deterministic layer writer made, loaded under --name, runs a case.

    The archive here is base's own filesystem written by the harness's one-layer writer
    (what dockerTools makes: a fixed config, no timestamps); hello is copied to a case
    naming it. The trial PASSes on exactly the loaded image ID, and the result says so.
    """
    from bench.images import write_docker_archive

    base = Images(docker_client, Project(project)).ensure("base")
    container = docker_client.containers.create(base.id, command=["true"], labels={"bench.harness": "hermetic-bench"})
    rootfs = tmp_path / "rootfs.tar"
    try:
        with open(rootfs, "wb") as out:
            for chunk in container.export():
                out.write(chunk)
    finally:
        container.remove(force=True)
    archive = tmp_path / "image.tar"
    labels = {"bench.harness": "hermetic-bench", "bench.image": "base-nix", "bench.builder": "dockertools",
              "bench.test": uuid.uuid4().hex}  # a fresh ID, so removing it afterwards touches nothing else
    image_id = write_docker_archive(rootfs, archive, "bench/base-nix:nix", 1735689600, labels)
    shutil.copytree(project / "cases" / "hello", project / "cases" / "hello-nix")
    shutil.copytree(project / "goldens" / "hello", project / "goldens" / "hello-nix")
    toml = project / "cases" / "hello-nix" / "case.toml"
    toml.write_text(toml.read_text().replace('image = "base"', 'image = "base-nix"'))
    try:
        unknown = bench("run", "hello-nix", "--agent", "oracle", root=project, check_rc=2)
        assert "no image 'base-nix'" in unknown.stderr
        bench("images", "load", str(archive), "--name", "base-nix", root=project, check_rc=0)
        bench("run", "hello-nix", "--agent", "oracle", "--label", "nix", root=project, check_rc=0)
        trial = tmp_path / "results/nix/hello-nix/default/trial-1"
        assert json.loads((trial / "result.json").read_text())["verdict"] == "PASS"
        used = json.loads((trial / "provenance.json").read_text())["images"]
        assert used["agent"]["id"] == used["grader"]["id"] == image_id
        assert used["agent"]["name"] == "base-nix"
    finally:
        remove_images(docker_client, f"bench/base-nix:{image_id[7:23]}", "bench/base-nix:nix")


def test_base_builds_with_its_tools_only_on_a_nonstandard_path(project, tmp_path):
    """As under `nix run`: mmdebstrap lives in a folder only PATH names, and the harness runs that one.

    The wrapper records the PATH it was started with, then hands over to the real tool;
    the rebuild must reproduce base bit for bit.
    """
    tools = tmp_path / "store" / "bin"
    tools.mkdir(parents=True)
    marker = tmp_path / "started-with-path"
    wrapper = tools / "mmdebstrap"
    wrapper.write_text(f"#!/bin/sh\necho \"$PATH\" > {marker}\nexec /usr/bin/mmdebstrap \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**{k: v for k, v in os.environ.items() if k != "PATH"}, "PATH": f"{tools}:{Path(sys.executable).parent}",
           "BENCH_ROOT": str(project), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench.cli", "images", "rebuild", "--check", "base"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.is_file(), "the harness ran another mmdebstrap than the one on its PATH"
    assert marker.read_text().startswith(f"{tools}:")
    assert "bit-reproducible" in done.stdout + done.stderr

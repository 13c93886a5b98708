"""Image build rules that need no engine: what a tag derives from, and tools that cannot start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.errors import CaseError, InfrastructureError
from bench.image_spec import ImageSpec
from bench.images import Images
from bench.paths import Project

ROOT = Path(__file__).resolve().parents[2]


def test_an_mmdebstrap_that_cannot_start_is_a_setup_fault_not_a_lost_engine(tmp_path, monkeypatch):
    ghost = tmp_path / "bin" / "mmdebstrap"  # on PATH per shutil.which, gone when started
    monkeypatch.setattr(shutil, "which", lambda name: str(ghost))
    images = Images(None, Project(ROOT))
    with pytest.raises(InfrastructureError, match="could not start mmdebstrap") as raised:
        images._mmdebstrap(ImageSpec(), tmp_path / "rootfs.tar")
    assert "engine" not in str(raised.value)


def test_no_host_input_reaches_a_tag(tmp_path, monkeypatch):
    """The CA bundle is trust for downloads, not content: two bundles, one tag."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "images", project / "images")
    (project / "images" / "probe").mkdir()
    (project / "images" / "probe" / "image.toml").write_text('parent = "base"\n')
    bundle_a, bundle_b = tmp_path / "a.pem", tmp_path / "b.pem"
    bundle_a.write_text("A"), bundle_b.write_text("B")
    tags = []
    for bundle in (bundle_a, bundle_b):
        images = Images(None, Project(project), ca=bundle)
        monkeypatch.setattr(images, "ensure", lambda name, force=False: type("R", (), {"id": "sha256:" + "0" * 64})())
        tags.append(images.tag("probe"))
    assert tags[0] == tags[1]


def test_debs_without_a_pin_name_the_command_that_writes_it(tmp_path):
    project = tmp_path / "project"
    (project / "images" / "probe").mkdir(parents=True)
    (project / "images" / "probe" / "image.toml").write_text('parent = "base"\ndebs = ["make"]\n')
    from bench.debs import read_inputs

    with pytest.raises(CaseError, match="bench images pin probe"):
        read_inputs(project / "images" / "probe", ImageSpec(parent="base", debs=["make"]))
    (project / "images" / "probe" / "inputs.lock.json").write_text(
        (ROOT / "images" / "toolchain" / "inputs.lock.json").read_text())
    with pytest.raises(CaseError, match="image.toml asks for \\['make'\\]"):
        read_inputs(project / "images" / "probe", ImageSpec(parent="base", debs=["make"]))


def test_base_must_get_exactly_its_pinned_versions():
    from bench.debs import check_installed
    from bench.image_spec import DebPin, InputsLock

    pin = lambda name, version: DebPin(package=name, version=version, file=f"{name}.deb", url="http://x/pool/" + name,
                                       sha256="0" * 64, size=1)
    pins = InputsLock(packages=["python3"], resolved_on="sha256:" + "1" * 64,
                      debs=[pin("bsdutils", "1:2.38.1-5+deb12u3"), pin("python3", "3.11.2-1+b1")])
    check_installed(pins, {"bsdutils": "1:2.38.1-5+deb12u3", "python3": "3.11.2-1+b1"})
    check_installed(pins, {"bsdutils": "2.38.1-5+deb12u3", "python3": "3.11.2-1+b1"})  # epoch-less file names
    with pytest.raises(InfrastructureError, match=r"python3 3.11.2-1\+b1 -> 3.11.2-2.*snapshot"):
        check_installed(pins, {"bsdutils": "1:2.38.1-5+deb12u3", "python3": "3.11.2-2"})
    with pytest.raises(InfrastructureError, match="bsdutils not installed; |extra unpinned -> 1"):
        check_installed(pins, {"python3": "3.11.2-1+b1", "extra": "1"})

"""Sharing images by digest, the parts that need no engine: what `images list` says, what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.archive import SavedImage, _checked
from bench.errors import UsageError
from bench.hashing import sha256_file
from bench.lock import carry_verification, listed_state
from bench.models import ImageLock, LockEntry
from bench.paths import Project
from bench.registry import check_registry, remote, selected

ID = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


def entry(**update) -> LockEntry:
    fields = dict(name="probe", tag="bench/probe:0123456789abcdef", id=ID, context_hash="sha256:c")
    return LockEntry(**{**fields, **update})


def test_images_list_calls_the_locked_id_under_the_locked_tag_bit_verified():
    locked = entry()
    assert listed_state(None, ID, locked.tag) == "-"
    assert listed_state(locked, OTHER, locked.tag) == "other ID than the lock's"
    assert listed_state(locked, ID, locked.tag) == "bit-verified"
    assert listed_state(locked, ID, "127.0.0.1:5000/bench/probe:0123456789abcdef") == "locked"
    assert listed_state(entry(verified="content"), ID, locked.tag) == "bit-verified (rebuild: content)"


def test_registry_digests_survive_relocking_the_same_id_only():
    old = entry(registry_digests={"127.0.0.1:5000": "sha256:d"})
    assert carry_verification(old, entry()).registry_digests == {"127.0.0.1:5000": "sha256:d"}
    assert carry_verification(old, entry(id=OTHER)).registry_digests == {}


@pytest.mark.parametrize("good", ["127.0.0.1:5000", "localhost:5000", "ghcr.io/team", "registry.local"])
def test_a_registry_is_host_port_and_an_optional_path(good):
    assert check_registry(good) == good
    assert remote(good, entry()) == (f"{good}/bench/probe", "0123456789abcdef")


@pytest.mark.parametrize("bad", ["http://127.0.0.1:5000", "127.0.0.1:5000/", "host:port", ""])
def test_a_registry_with_a_scheme_or_a_trailing_slash_is_refused(bad):
    with pytest.raises(UsageError, match="is not host\\[:port\\]\\[/path\\]"):
        check_registry(bad)


def test_an_image_the_lock_lacks_is_refused_naming_the_lock_file(tmp_path):
    lock = ImageLock(images={"probe": entry()})
    with pytest.raises(UsageError, match=r"images\.lock\.json: no entry for nope — lock it first"):
        selected(Project(tmp_path), lock, ["nope"])
    assert selected(Project(tmp_path), lock, []) == [entry()]


def saved(folder: Path, data: bytes = b"archive bytes", **update) -> SavedImage:
    (folder / "probe.tar").write_bytes(data)
    fields = dict(name="probe", tag=entry().tag, id=ID, file="probe.tar", sha256=sha256_file(folder / "probe.tar"))
    return SavedImage(**{**fields, **update})


def test_a_saved_archive_must_match_its_manifest_and_the_lock(tmp_path):
    project = Project(tmp_path)
    item = saved(tmp_path)
    assert _checked(project, entry(), tmp_path, item) == entry()

    (tmp_path / "probe.tar").write_bytes(b"archive bytez")
    with pytest.raises(UsageError, match=r"probe\.tar: SHA-256 .* altered or damaged"):
        _checked(project, entry(), tmp_path, item)
    with pytest.raises(UsageError, match=r"image probe is sha256:aaaaaaaaaaaa but .* locks sha256:bbbbbbbbbbbb"):
        _checked(project, entry(id=OTHER), tmp_path, saved(tmp_path))
    with pytest.raises(UsageError, match="has no entry for it"):
        _checked(project, None, tmp_path, saved(tmp_path))
    with pytest.raises(UsageError, match=r"images\.probe\.file '\.\./probe\.tar' is not a file in"):
        _checked(project, entry(), tmp_path, saved(tmp_path, file="../probe.tar"))

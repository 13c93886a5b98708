"""Each image a run uses, against the lock: locked / content-equal / drifted (naming packages) / unlocked."""

from __future__ import annotations

import pytest

from bench.errors import UsageError
from bench.lockcheck import check, enforce, package_changes
from bench.models import ImageLock, ImageRecord, LockEntry

LOCK = ImageLock(images={
    "base": LockEntry(name="base", tag="bench/base:1", id="sha256:" + "a" * 64, content_digest="sha256:c-base",
                      context_hash="h", packages={"curl": "7.88.1-10", "vim": "2:9.0"}, builder="mmdebstrap"),
    "toolchain": LockEntry(name="toolchain", tag="bench/toolchain:1", id="sha256:" + "b" * 64,
                           content_digest="sha256:c-tool", context_hash="h", packages={"gcc": "12"}, parent="base"),
})


def used(**ids_and_digests: tuple[str, str]) -> dict[str, ImageRecord]:
    return {name: ImageRecord(name=name, tag=f"bench/{name}:2", id=image_id, content_digest=digest)
            for name, (image_id, digest) in ids_and_digests.items()}


def states(images: dict[str, ImageRecord], packages: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    return [(found.name, found.state, found.detail) for found in check(LOCK, images, lambda record: packages or {})]


def test_same_id_is_locked_same_content_is_content_equal():
    images = used(base=("sha256:" + "a" * 64, "sha256:c-base"), toolchain=("sha256:" + "9" * 64, "sha256:c-tool"))
    assert states(images) == [("base", "locked", ""),
                              ("toolchain", "content-equal", "image ID 999999999999, lock has bbbbbbbbbbbb")]


def test_drift_names_the_packages_that_changed():
    images = used(base=("sha256:" + "1" * 64, "sha256:other"))
    [(name, state, detail)] = states(images, {"curl": "7.88.1-11", "jq": "1.6"})
    assert (name, state) == ("base", "drifted")
    assert detail == "content differs from the lock (packages changed: curl 7.88.1-10 -> 7.88.1-11, +jq 1.6, -vim 2:9.0)"


def test_drift_with_the_same_packages_says_other_files_differ():
    [(_, state, detail)] = states(used(base=("sha256:" + "1" * 64, "sha256:other")), {"curl": "7.88.1-10", "vim": "2:9.0"})
    assert state == "drifted" and "no package changed; other files differ" in detail


def test_an_image_without_an_entry_is_unlocked():
    assert states(used(seat=("sha256:" + "5" * 64, "sha256:s")))[0][1] == "unlocked"


def test_locked_refuses_every_difference_naming_image_and_fix():
    found = check(LOCK, used(base=("sha256:" + "a" * 64, "sha256:c-base"), toolchain=("sha256:" + "1" * 64, "x"),
                             seat=("sha256:" + "5" * 64, "s")), lambda record: {"gcc": "13"})
    said: list[str] = []
    with pytest.raises(UsageError) as raised:
        enforce(found, locked=True, say=said.append)
    assert raised.value.exit_code == 2
    lines = str(raised.value).splitlines()
    assert lines[0] == "--locked: 2 image(s) differ from provenance/images.lock.json; nothing was run"
    assert lines[1] == "image seat: unlocked — no entry in provenance/images.lock.json — record it with " \
                       "`bench images lock seat`"
    assert lines[2].startswith("image toolchain: drifted — content differs from the lock (packages changed: gcc 12 -> 13)")
    assert lines[2].endswith("or record the change with `bench images lock toolchain`")
    assert said[0] == "image base: locked"


def test_without_locked_every_state_is_said_and_returned():
    found = check(LOCK, used(base=("sha256:" + "1" * 64, "x")), lambda record: {})
    said: list[str] = []
    assert enforce(found, locked=False, say=said.append) == {"base": "drifted"}
    assert said[0].startswith("image base: drifted")


def test_long_package_drift_is_cut_and_counted():
    changes = package_changes({}, {f"p{i:02}": "1" for i in range(12)})
    assert changes.endswith(", and 4 more") and changes.count("+p") == 8

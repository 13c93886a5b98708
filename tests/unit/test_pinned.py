"""Pinned paths (bench/pinned.py): which changes are listed, which fail, what graders receive."""

from __future__ import annotations

import io
import tarfile

import pytest

from bench.case_spec import CaseSpec
from bench.pinned import changes, manifest, violations, without_pinned

PINNED = ("node_modules", "package.json", "bun.lock")


def tar_of(path, entries: dict[str, bytes | str | None], mode: int = 0o644):
    """A tar of regular files (bytes), symlinks (str: the target) and folders (None)."""
    with tarfile.open(path, "w") as archive:
        for name, what in entries.items():
            info = tarfile.TarInfo(name)
            info.mode = mode
            if what is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            elif isinstance(what, str):
                info.type, info.linkname = tarfile.SYMTYPE, what
                archive.addfile(info)
            else:
                info.size = len(what)
                archive.addfile(info, io.BytesIO(what))
    return tarfile.open(path)


def test_changes_name_what_was_added_changed_or_deleted_under_the_pinned_paths(tmp_path):
    image = manifest(tar_of(tmp_path / "a.tar", {"node_modules": None, "node_modules/a.js": b"a", "bun.lock": b"1",
                                                 "node_modules/link": "a.js", "node_modules/same.js": b"s"}), PINNED)
    agent = manifest(tar_of(tmp_path / "b.tar", {"workspace/node_modules": None, "workspace/node_modules/a.js": b"A",
                                                 "workspace/node_modules/link": "/etc/passwd",
                                                 "workspace/node_modules/same.js": b"s",
                                                 "workspace/node_modules/new.js": b"n",
                                                 "workspace/src/main.ts": b"mine"}), PINNED, strip="workspace")
    assert changes(image, agent) == ["D bun.lock", "C node_modules/a.js", "C node_modules/link", "A node_modules/new.js"]


def test_a_mode_change_alone_is_a_change(tmp_path):
    image = manifest(tar_of(tmp_path / "a.tar", {"package.json": b"{}"}), PINNED)
    agent = manifest(tar_of(tmp_path / "b.tar", {"package.json": b"{}"}, mode=0o755), PINNED)
    assert changes(image, agent) == ["C package.json"]


def test_violations_are_changes_under_an_unmodified_path():
    changes = ["A node_modules/evil.js", "C node_modules/eng/src/x.ts", "C node_modules/engine2/y.ts"]
    assert violations(("node_modules/eng",), changes) == ["C node_modules/eng/src/x.ts"]


def test_graders_get_the_workspace_without_the_pinned_paths(tmp_path):
    source = tmp_path / "workspace.tar"
    with tarfile.open(source, "w") as archive:
        for name in ["workspace/", "workspace/node_modules/", "workspace/node_modules/x.js", "workspace/package.json",
                     "workspace/src/", "workspace/src/main.ts", "workspace/bun.lockb"]:
            info = tarfile.TarInfo(name.rstrip("/"))
            data = name.encode()
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("workspace/node_modules/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    kept = without_pinned(source, tmp_path / "kept.tar", PINNED)
    with tarfile.open(kept) as archive:
        names = archive.getnames()
        assert names == ["workspace", "workspace/src", "workspace/src/main.ts", "workspace/bun.lockb"]
        assert archive.extractfile("workspace/src/main.ts").read() == b"workspace/src/main.ts"


@pytest.mark.parametrize("spec, words", [
    ({"pinned": ["../node_modules"]}, "not a plain workspace-relative path"),
    ({"pinned": ["/workspace/node_modules"]}, "not a plain workspace-relative path"),
    ({"pinned": ["node_modules"], "unmodified": ["src"]}, "unmodified path 'src' is not under a pinned path"),
])
def test_bad_pinned_paths_are_refused_naming_them(spec, words):
    with pytest.raises(ValueError, match=words):
        CaseSpec(title="t", **spec)


def test_the_image_side_is_read_once_per_image_and_kept_by_its_id(tmp_path, monkeypatch):
    """Read from a created container once; then from this process; then, in a new process, from the cache folder."""
    import bench.pinned as pinned
    from bench.models import Limits
    from tests.fakes import FakeEngine

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(pinned, "_IMAGES", {})
    engine = FakeEngine()
    real_create = engine.__call__

    def create(spec):
        box = real_create(spec)
        box.files["workspace/node_modules/a.js"] = b"a"
        return box

    read = lambda factory: pinned.image_manifest(factory, "sha256:img", PINNED, Limits(), {})
    first = read(create)
    assert [box.spec.role for box in engine.created] == ["pinned"] and engine.created[0].destroyed
    assert first == {"node_modules/a.js": first["node_modules/a.js"]} and first["node_modules/a.js"].startswith("file ")
    assert read(create) == first and len(engine.created) == 1  # this process remembers it
    monkeypatch.setattr(pinned, "_IMAGES", {})
    assert read(create) == first and len(engine.created) == 1  # a new process reads the cache folder
    monkeypatch.setattr(pinned, "_IMAGES", {})
    other = pinned.image_manifest(create, "sha256:other", PINNED, Limits(), {})
    assert other == first and len(engine.created) == 2  # another image ID is read from its own container

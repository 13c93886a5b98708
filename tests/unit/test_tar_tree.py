"""tar_tree: what goes into a container — links stay links, later layers win, one owner, modes kept."""

from __future__ import annotations

import io
import os
import tarfile

from bench.sandbox import tar_tree


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    """Last entry per name, as `tar x` leaves it (a later entry overwrites an earlier one)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {member.name: member for member in archive.getmembers()}


def _read(data: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        entries = [m for m in archive.getmembers() if m.name == name]
        return archive.extractfile(entries[-1]).read()


def test_symlinks_are_stored_as_links_never_followed(tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("SECRET\n")
    layer = tmp_path / "ws"
    layer.mkdir()
    (layer / "leak").symlink_to(secret)
    (layer / "dir-link").symlink_to(tmp_path)
    data = tar_tree([("workspace", layer)])
    members = _members(data)
    assert members["workspace/leak"].issym() and members["workspace/leak"].linkname == str(secret)
    assert members["workspace/dir-link"].issym()
    assert b"SECRET" not in data
    assert not any(name.startswith("workspace/dir-link/") for name in members)


def test_later_layers_win(tmp_path):
    first, second = tmp_path / "workspace", tmp_path / "context"
    for layer, text in ((first, "workspace"), (second, "context")):
        (layer / "sub").mkdir(parents=True)
        (layer / "sub" / "same.txt").write_text(text)
    (first / "only-first.txt").write_text("1")
    data = tar_tree([("workspace", first), ("workspace", second)], {"workspace/sub/same.txt": b"literal"})
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(tmp_path / "out", filter="tar")
    assert (tmp_path / "out" / "workspace" / "sub" / "same.txt").read_text() == "literal"
    without_files = tar_tree([("workspace", first), ("workspace", second)])
    with tarfile.open(fileobj=io.BytesIO(without_files)) as archive:
        archive.extractall(tmp_path / "out2", filter="tar")
    assert (tmp_path / "out2" / "workspace" / "sub" / "same.txt").read_text() == "context"
    assert (tmp_path / "out2" / "workspace" / "only-first.txt").read_text() == "1"


def test_everything_is_owned_by_uid_and_modes_are_kept(tmp_path):
    layer = tmp_path / "ws"
    layer.mkdir()
    (layer / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(layer / "run.sh", 0o755)
    (layer / "data.txt").write_text("x")
    os.chmod(layer / "data.txt", 0o600)
    data = tar_tree([("workspace", layer)], {"bench/plan.json": b"{}"}, uid=4242)
    members = _members(data)
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members.values()} == {(4242, 4242, "", "")}
    assert members["workspace/run.sh"].mode & 0o777 == 0o755
    assert members["workspace/data.txt"].mode & 0o777 == 0o600
    assert members["bench/plan.json"].mode == 0o644 and _read(data, "bench/plan.json") == b"{}"
    assert members["bench"].isdir() and members["workspace"].isdir()

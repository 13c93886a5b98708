"""A submission folder packed as an agent's exported workspace: hostile entries stay what they are, or are refused."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from bench.submission import pack_submission

ROOT = Path(__file__).resolve().parents[2]


def members(tar: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(tar) as archive:
        return {member.name: member for member in archive}


def test_layout_is_an_exported_workspace_owned_by_the_agent_uid(tmp_path):
    folder = tmp_path / "work"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "PROMPT.md").write_text("the task, laid here by bench setup")
    (folder / "src" / "PROMPT.md").write_text("the agent's own file")
    done = pack_submission(folder, tmp_path / "workspace.tar", 1)
    assert done.refused is None and done.bytes == (tmp_path / "workspace.tar").stat().st_size
    found = members(tmp_path / "workspace.tar")
    assert sorted(found) == ["workspace", "workspace/run.sh", "workspace/src", "workspace/src/PROMPT.md",
                             "workspace/src/main.c"]  # the top-level PROMPT.md is the task, not the work
    assert {(m.uid, m.gid) for m in found.values()} == {(1000, 1000)}
    assert found["workspace/run.sh"].mode == 0o755 and found["workspace/src/main.c"].isreg()
    with tarfile.open(tmp_path / "workspace.tar") as archive:
        assert archive.extractfile("workspace/src/main.c").read() == b"int main(void) { return 0; }\n"


def test_links_out_of_the_folder_stay_links_and_their_targets_are_never_read(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    os.symlink("/etc/passwd", folder / "passwd")
    os.symlink(ROOT / "goldens", folder / "goldens")
    os.symlink(ROOT / "goldens" / "hello" / "gate.toml", folder / "hello.txt")
    done = pack_submission(folder, tmp_path / "workspace.tar", 1)
    assert done.refused is None
    found = members(tmp_path / "workspace.tar")
    assert sorted(found) == ["workspace", "workspace/goldens", "workspace/hello.txt", "workspace/passwd"]
    assert found["workspace/passwd"].issym() and found["workspace/passwd"].linkname == "/etc/passwd"
    assert found["workspace/goldens"].issym() and found["workspace/goldens"].linkname == str(ROOT / "goldens")
    data = (tmp_path / "workspace.tar").read_bytes()
    assert b"root:" not in data and b"BENCH-GOLDEN-MARKER" not in data


def test_odd_names_and_fifos_pack_as_they_are(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    odd = os.fsdecode(b"line\nbreak \xff name")
    (folder / odd).write_text("x")
    os.mkfifo(folder / "pipe")  # packed as a FIFO, never opened: opening it would block the grader
    done = pack_submission(folder, tmp_path / "workspace.tar", 1)
    assert done.refused is None
    found = members(tmp_path / "workspace.tar")
    assert found[f"workspace/{odd}"].isreg() and found["workspace/pipe"].isfifo()


def test_past_the_export_budget_is_refused_without_reading_the_file(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    with open(folder / "huge.bin", "wb") as handle:
        handle.truncate(64 << 30)  # sparse: 64 GiB that would take minutes to read
    done = pack_submission(folder, tmp_path / "workspace.tar", 1)
    assert done.refused == "export budget: the submission passed 1 MiB and was stopped there"
    assert not (tmp_path / "workspace.tar").exists()


def test_a_device_file_is_refused_naming_it(tmp_path):
    folder = tmp_path / "work"
    (folder / "dev").mkdir(parents=True)
    try:
        os.mknod(folder / "dev" / "null", 0o666 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    done = pack_submission(folder, tmp_path / "workspace.tar", 1)
    assert done.refused == "submission: dev/null is a device file, which no workspace can hold — remove it"
    assert not (tmp_path / "workspace.tar").exists()

"""The compile check's host side: which workspace files become the submission, and the decision."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.compile_spec import CompileCheck
from bench.grading.typecheck import collect, decide
from bench.result_models import Diagnostic
from tests.fakes import workspace_tar


def workspace(tmp_path: Path, files: dict[str, bytes], links: dict[str, str] = {}) -> Path:
    return workspace_tar(tmp_path / "workspace.tar", files, links)


def check(**fields) -> CompileCheck:
    return CompileCheck(name="tsc", kind="compile", **fields)


def test_sources_are_regular_ts_files_outside_node_modules_and_dot_folders(tmp_path):
    tar = workspace(tmp_path, {"solution.ts": b"a", "lib/b.tsx": b"b", "c.mts": b"c", "d.cts": b"d", "e.js": b"e",
                               "node_modules/x/index.ts": b"x", ".cache/y.ts": b"y", "types.d.ts": b"t"})
    found = collect(tar, check())
    assert sorted(found.files) == ["c.mts", "d.cts", "lib/b.tsx", "solution.ts"]
    assert found.skipped == ["types.d.ts (a declaration file)"] and not found.refused


def test_a_symlinked_entry_is_refused_and_never_read(tmp_path):
    tar = workspace(tmp_path, {"real.ts": b"export {}"}, links={"solution.ts": "/etc/passwd"})
    found = collect(tar, check())
    assert found.refused == ["the entry solution.ts is not a regular file; it must be a regular file, never a symlink"]
    assert "solution.ts" not in found.files


def test_a_later_link_replaces_an_earlier_regular_member_of_the_same_name(tmp_path):
    path = tmp_path / "workspace.tar"
    with tarfile.open(path, "w") as archive:
        info = tarfile.TarInfo("workspace/solution.ts")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
        link = tarfile.TarInfo("workspace/solution.ts")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        archive.addfile(link)
    assert collect(path, check()).refused  # what extraction would leave is the link


def test_a_missing_entry_and_the_caps(tmp_path):
    assert collect(workspace(tmp_path, {"other.ts": b""}), check()).refused == ["the entry solution.ts is not in the workspace"]
    many = {f"f{i}.ts": b"x" for i in range(4)} | {"solution.ts": b""}
    assert "caps (3 files" in collect(workspace(tmp_path, many), check(max_files=3)).refused[0]
    big = {"solution.ts": b"x" * 3000}
    assert "2 KiB" in collect(workspace(tmp_path, big), check(max_kb=2)).refused[0]


def test_root_selects_a_folder_and_names_files_under_it(tmp_path):
    tar = workspace(tmp_path, {"sub/solution.ts": b"", "sub/h.ts": b"", "top.ts": b""})
    assert sorted(collect(tar, check(root="sub")).files) == ["h.ts", "solution.ts"]


def test_the_entry_must_be_a_typescript_source_inside_the_workspace():
    for entry in ("solution.js", "types.d.ts", "../solution.ts", "/solution.ts"):
        with pytest.raises(ValidationError):
            check(entry=entry)


def test_decide_errors_first_then_the_import_of_the_subject():
    error = Diagnostic(code="TS2339", file="solution.ts", line=3, column=1, message="Property 'x' does not exist")
    passed, detail = decide(check(), [error], [], "neverthrow")
    assert not passed and "solution.ts:3:1 TS2339" in detail
    assert not decide(check(), [], [{"file": "solution.ts", "module": "./helper"}], "neverthrow")[0]
    assert decide(check(), [], [{"file": "h.ts", "module": "neverthrow"}], "neverthrow")[0]
    assert decide(check(must_import=False), [], [], "neverthrow")[0]
    warning = Diagnostic(code="TS6133", category="warning", message="unused")
    assert decide(check(), [warning], [{"file": "a.ts", "module": "neverthrow/sub"}], "neverthrow")[0]

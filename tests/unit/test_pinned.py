"""Pinned paths (bench/pinned.py): which changes are listed, which fail, what graders receive."""

from __future__ import annotations

import io
import tarfile

import pytest

from bench.case_spec import CaseSpec
from bench.pinned import changes_under, violations, without_pinned

PINNED = ("node_modules", "package.json", "bun.lock")


def test_changes_are_kept_to_the_pinned_paths_and_name_files():
    diff = [("C", "/workspace/node_modules"), ("C", "/workspace/node_modules/a"), ("A", "/workspace/node_modules/a/b.js"),
            ("D", "/workspace/bun.lock"), ("C", "/workspace/package.json.bak"), ("A", "/workspace/node_modules_x"),
            ("C", "/etc/passwd"), ("A", "/workspace/src/node_modules/c.js")]
    assert changes_under(PINNED, diff) == ["A node_modules/a/b.js", "D bun.lock"]


def test_an_empty_changed_folder_is_listed():
    assert changes_under(PINNED, [("C", "/workspace/node_modules/pkg")]) == ["C node_modules/pkg"]


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

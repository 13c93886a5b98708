"""Published schemas, content hashes and the grader's own logic (no engine needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.errors import InfrastructureError
from bench.gates import runner
from bench.hashing import tree_digest
from bench.schemas import export, rendered
from bench.trial import parse_grader_output

ROOT = Path(__file__).resolve().parents[2]


def test_published_schemas_match_the_models():
    stale = export(ROOT / "provenance" / "schema", write=False)
    assert stale == [], f"run `bench schema` to refresh: {stale}"
    assert set(rendered()) == {p.name for p in (ROOT / "provenance" / "schema").glob("*.json")}


def test_tree_digest_sees_bytes_modes_and_links(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    first = tree_digest(tmp_path)
    assert tree_digest(tmp_path) == first
    (tmp_path / "a.txt").write_text("onE")
    changed = tree_digest(tmp_path)
    assert changed != first
    os.chmod(tmp_path / "a.txt", 0o755)
    assert tree_digest(tmp_path) != changed
    (tmp_path / "link").symlink_to("a.txt")
    linked = tree_digest(tmp_path)
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("elsewhere")
    assert tree_digest(tmp_path) != linked


def test_runner_grades_command_and_grep(tmp_path):
    (tmp_path / "hello.txt").write_text("Hello, world!\n")
    plan = {"checks": [
        {"kind": "command", "name": "exists", "run": "test -f hello.txt"},
        {"kind": "grep", "name": "greeting", "files": ["*.txt"], "pattern": "^Hello, world!$"},
        {"kind": "grep", "name": "no todo", "files": ["**/*"], "pattern": "TODO", "must_match": False},
        {"kind": "command", "name": "advisory", "run": "false", "gating": False},
    ]}
    result = runner.grade(plan, tmp_path)
    assert result["verdict"] == "PASS"
    assert [c["passed"] for c in result["checks"]] == [True, True, True, False]
    (tmp_path / "notes.md").write_text("TODO\n")
    failed = runner.grade(plan, tmp_path)
    assert failed["verdict"] == "FAIL"
    assert failed["reason"].startswith("check 'no todo' failed: /TODO/ must not match")


def test_command_check_output_patterns_and_timeout(tmp_path):
    check = {"kind": "command", "name": "c", "run": "echo built; echo warn >&2", "stdout_matches": ["^built$"],
             "stderr_matches": ["^error$"]}
    assert runner.run_check(check, tmp_path)["detail"].startswith("stderr of `echo built; echo warn >&2` does not match")
    slow = {"kind": "command", "name": "slow", "run": "sleep 5", "timeout_s": 1}
    assert runner.run_check(slow, tmp_path)["detail"].startswith("timeout")


def test_grep_never_follows_links_out_of_the_workspace(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("SECRET\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link.txt").symlink_to(outside)
    check = {"kind": "grep", "name": "g", "files": ["*.txt"], "pattern": "SECRET"}
    assert runner.run_check(check, workspace)["passed"] is False


def test_grader_output_must_hold_exactly_one_result():
    line = runner.MARK + json.dumps({"verdict": "PASS", "reason": "", "checks": []})
    verdict, _, _ = parse_grader_output(f"noise\n{line}\n")
    assert verdict.value == "PASS"
    with pytest.raises(InfrastructureError, match="0 result lines"):
        parse_grader_output("nothing\n")
    with pytest.raises(InfrastructureError, match="2 result lines"):
        parse_grader_output(f"{line}\n{line}\n")

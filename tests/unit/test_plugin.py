"""Plugin arms: a checkout packed once into a deterministic tar, recorded, laid read-only, handed to the agent."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from bench.agents import AgentOptions, make_agent
from bench.arms import parse_arm
from bench.cases import load_case
from bench.errors import UsageError
from bench.models import ArmSpec
from bench.paths import Project
from bench.plugin import PLUGIN_DIR, lay, pack, pack_arms
from bench.sandbox import SandboxSpec
from tests.fakes import FakeEngine

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests/fixtures/model-scripts"


def checkout(folder: Path, skill: str = "Distill carefully.\n") -> Path:
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin/plugin.json").write_text('{"name": "allium"}\n')
    (folder / "skills/distill").mkdir(parents=True)
    (folder / "skills/distill/SKILL.md").write_text(skill)
    (folder / "bin").mkdir()
    (folder / "bin/run").write_text("#!/bin/sh\n")
    (folder / "bin/run").chmod(0o775)
    return folder


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), "-c", "user.email=t@e", "-c", "user.name=t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {m.name: m for m in archive.getmembers()}


def test_packing_is_deterministic_and_one_changed_file_changes_the_hash(tmp_path):
    a, b = checkout(tmp_path / "a"), checkout(tmp_path / "b")
    os.utime(b / "skills/distill/SKILL.md", (1, 1))  # times and owners are not content
    assert pack(a).record.tarball_sha256 == pack(b).record.tarball_sha256
    (b / "skills/distill/SKILL.md").write_text("Distill quickly.\n")
    assert pack(a).record.tarball_sha256 != pack(b).record.tarball_sha256


def test_the_tar_is_root_owned_read_only_without_git_and_keeps_links_as_links(tmp_path):
    folder = checkout(tmp_path / "p")
    git(folder, "init", "-q")
    (folder / "secret-link").symlink_to("/etc/passwd")
    found = members(pack(folder).tar)
    assert not [name for name in found if "/.git" in name]
    assert {m.uid for m in found.values()} == {0} and {m.mtime for m in found.values()} == {0}
    assert not [m.name for m in found.values() if m.mode & 0o222 and not m.issym()]
    assert found["plugin/bin/run"].mode == 0o555 and found["plugin/skills/distill/SKILL.md"].mode == 0o444
    assert found["plugin/secret-link"].issym() and found["plugin/secret-link"].linkname == "/etc/passwd"


def test_a_git_checkout_records_its_commit_and_dirty_flag(tmp_path):
    folder = checkout(tmp_path / "p")
    plain = pack(folder).record
    assert (plain.source_sha, plain.dirty, plain.files, plain.origin) == (None, None, 3, str(folder))
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "one")
    clean = pack(folder).record
    assert clean.source_sha == git(folder, "rev-parse", "HEAD") and clean.dirty is False
    (folder / "skills/distill/SKILL.md").write_text("edited\n")
    assert pack(folder).record.dirty is True


def test_what_cannot_be_packed_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="not a folder"):
        pack(tmp_path / "absent")
    folder = checkout(tmp_path / "p")
    os.mkfifo(folder / "pipe")
    with pytest.raises(UsageError, match="neither a file, a folder nor a link"):
        pack(folder)


def test_each_arm_is_packed_once_and_its_path_made_absolute(tmp_path, monkeypatch):
    checkout(tmp_path / "p")
    monkeypatch.chdir(tmp_path)
    arm = parse_arm("cand=plugin:p,agent:command")
    assert arm.plugin == str(tmp_path / "p")
    packed = pack_arms([arm, arm, ArmSpec(name="base")])
    assert list(packed) == ["cand"]


def test_the_plugin_is_laid_read_only_at_its_folder(tmp_path):
    box = FakeEngine()(SandboxSpec(image="i", command=["true"], labels={}, limits=None, role="agent"))
    lay(box, pack(checkout(tmp_path / "p")))
    assert box.files[f"{PLUGIN_DIR.strip('/')}/skills/distill/SKILL.md"] == b"Distill carefully.\n"
    assert "opt/bench" in box.dirs


def test_claude_code_gets_plugin_dir_and_codex_refuses_a_plugin():
    case = load_case(Project(ROOT), "hello")
    options = AgentOptions(model_script=SCRIPTS / "hello-solve.toml", plugin_dir=PLUGIN_DIR)
    assert f"--plugin-dir {PLUGIN_DIR}" in make_agent("claude-code", options=options).plan(case, "default").command[-1]
    plain = make_agent("claude-code", options=AgentOptions(model_script=SCRIPTS / "hello-solve.toml"))
    assert "--plugin-dir" not in plain.plan(case, "default").command[-1]
    with pytest.raises(UsageError, match="codex loads no plugin directory"):
        make_agent("codex", options=AgentOptions(model_script=SCRIPTS / "hello-solve-codex.toml",
                                                 plugin_dir=PLUGIN_DIR))

"""Skills land where the real Claude Code CLI discovers them, read-only, recorded by content hash.

The scripted model asks the pinned `claude` executable to invoke its Skill tool on
`count-words`; only a CLI that found `.claude/skills/count-words/SKILL.md` in its
project answers with the skill's text (its marker) in the transcript. The arm without
skills runs the same script and must not.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from bench.hashing import sha256_bytes
from bench.plugin import pack_tree
from tests.integration.test_agents import SCRIPTS, bench_run

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "tests/fixtures/skills"
MARKER = "SKILL-MARKER-7d1e"


def trial(tmp_path: Path, arm: str) -> Path:
    return tmp_path / "results/skills/hello" / arm / "trial-1"


def test_claude_code_finds_the_arms_skill_and_the_record_names_its_bytes(docker_client, tmp_path):
    bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--model-script", str(SCRIPTS / "use-skill.toml"),
              "--arm", f"with=skills:{SKILLS}", "--arm", "without=context:default", "--label", "skills", check_rc=None)
    with_skill = (trial(tmp_path, "with") / "transcript.jsonl").read_text()
    without = (trial(tmp_path, "without") / "transcript.jsonl").read_text()
    assert MARKER in with_skill and '"commandName":"count-words"' in with_skill  # the CLI loaded it as a skill
    assert MARKER not in without
    record = json.loads((trial(tmp_path, "with") / "provenance.json").read_text())["skills"]
    packed, files = pack_tree(SKILLS / "count-words", "count-words", "skill")
    assert record == [{"name": "count-words", "source": "arm", "origin": str(SKILLS / "count-words"),
                       "tarball_sha256": sha256_bytes(packed), "files": files}]
    assert json.loads((trial(tmp_path, "without") / "provenance.json").read_text())["skills"] == []
    run = json.loads((tmp_path / "results/skills/run.json").read_text())
    assert run["cases"]["hello"]["skills"] == {"with": {"count-words": sha256_bytes(packed)}}
    with tarfile.open(trial(tmp_path, "with") / "workspace.tar") as archive:
        skill = archive.getmember("workspace/.claude/skills/count-words/SKILL.md")
    assert skill.uid == 0 and not skill.mode & 0o222  # root's and read-only: the agent cannot rewrite its skill


def test_other_agents_get_skills_in_the_open_standards_folder(docker_client, tmp_path):
    command = "cat {workspace}/.agents/skills/count-words/SKILL.md > {workspace}/seen.txt; " \
              "echo tamper >> {workspace}/.agents/skills/count-words/SKILL.md; echo Hello, world! > {workspace}/hello.txt"
    bench_run(tmp_path, "run", "hello", "--agent", "command", "--agent-cmd", command,
              "--arm", f"with=skills:{SKILLS / 'count-words'}", "--label", "skills", check_rc=0)
    with tarfile.open(trial(tmp_path, "with") / "workspace.tar") as archive:
        seen = archive.extractfile("workspace/seen.txt").read().decode()
        skill = archive.extractfile("workspace/.agents/skills/count-words/SKILL.md").read().decode()
    assert MARKER in seen and "tamper" not in skill

"""Tracks: one language-blind case, several authoring tracks, each run and keyed as <case>@<track>."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.cases import case_ids, load_all, load_case, validate_all
from bench.errors import CaseError, UsageError
from bench.paths import Project
from bench.staging import stage_layers

ROOT = Path(__file__).resolve().parents[2]

CASE = """title = "Count words"
image = "base"
[tracks.zig]
description = "a Zig core"
image = "toolchain"
setup = ["echo zig"]
[tracks.ts]
description = "a TypeScript core"
"""
GATE = """[[checks]]
name = "shared"
kind = "grep"
files = ["*"]
pattern = "x"
[[tracks.zig.checks]]
name = "zig only"
kind = "grep"
files = ["*.zig"]
pattern = "fn"
"""


@pytest.fixture()
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "images", root / "images")
    shutil.copytree(ROOT / "provenance", root / "provenance")
    case, goldens = root / "cases/words", root / "goldens/words"
    (case / "workspace").mkdir(parents=True)
    (case / "tracks/zig/workspace").mkdir(parents=True)
    (goldens / "solution").mkdir(parents=True)
    (goldens / "tracks/zig/solution").mkdir(parents=True)
    (case / "case.toml").write_text(CASE)
    (case / "PROMPT.md").write_text("Count the words.\n")
    (case / "tracks/zig/PROMPT.md").write_text("Write it in src/core.zig.\n")
    (case / "workspace/README").write_text("shared\n")
    (case / "tracks/zig/workspace/core.zig").write_text("// starter\n")
    (goldens / "gate.toml").write_text(GATE)
    return Project(root)


def test_a_tracked_case_name_runs_every_track_and_track_picks_some(project):
    assert case_ids(project, ["words"]) == ["words@zig", "words@ts"]
    assert case_ids(project, ["words"], ["ts"]) == ["words@ts"]
    assert case_ids(project, ["words@zig", "words"]) == ["words@zig", "words@ts"]
    with pytest.raises(UsageError, match="has tracks zig, ts only"):
        case_ids(project, ["words"], ["rust"])
    assert [case.id for case in load_all(project)] == ["words@zig", "words@ts"]


def test_a_track_is_a_case_with_its_image_setup_prompt_starter_solution_and_checks(project):
    zig, ts = load_case(project, "words@zig"), load_case(project, "words@ts")
    assert (zig.name, zig.track, zig.spec.image, zig.spec.setup) == ("words", "zig", "toolchain", ["echo zig"])
    assert ts.spec.image == "base" and ts.spec.setup == []
    assert [c.name for c in zig.gate.checks] == ["shared", "zig only"] and [c.name for c in ts.gate.checks] == ["shared"]
    assert zig.prompt() == b"Count the words.\n\nWrite it in src/core.zig.\n" and ts.prompt() == b"Count the words.\n"
    layers, files = stage_layers(zig, None)
    assert [folder.name for _, folder in layers] == ["workspace", "workspace"] and layers[1][1].parent.name == "zig"
    assert stage_layers(ts, None)[0] == [("workspace", ts.workspace)]
    assert zig.solution.parent.name == "zig" and ts.solution == ts.goldens_dir / "solution"
    assert zig.record().track == "zig" and zig.record().id == "words@zig"
    assert zig.record().visible_hash != ts.record().visible_hash  # which track is part of what the agent was given


def test_a_tracked_case_needs_its_track_named_and_an_unknown_one_is_refused(project):
    with pytest.raises(UsageError, match="name one as words@zig, words@ts"):
        load_case(project, "words")
    with pytest.raises(UsageError, match="has no track 'rust'; its tracks: zig, ts"):
        load_case(project, "words@rust")


def test_gate_tracks_must_be_the_case_tracks(project):
    gate = project.goldens_dir("words") / "gate.toml"
    gate.write_text(GATE.replace("tracks.zig.checks", "tracks.go.checks"))
    with pytest.raises(CaseError, match="'go'"):
        load_case(project, "words@zig")
    assert any(problem and "tracks" in problem for _, problem in validate_all(project))


def test_a_track_without_any_check_is_refused(project):
    gate = project.goldens_dir("words") / "gate.toml"
    gate.write_text(GATE.split("[[tracks.zig.checks]]")[0].replace("[[checks]]", "[[tracks.zig.checks]]"))
    assert [c.name for c in load_case(project, "words@zig").gate.checks] == ["shared"]
    with pytest.raises(CaseError, match="no check for track 'ts'"):
        load_case(project, "words@ts")


def test_a_tracks_skills_are_checked_hashed_and_handed_out_once(project):
    from bench.skills import Skills

    toml = project.case_dir("words") / "case.toml"
    toml.write_text(CASE.replace('setup = ["echo zig"]', 'setup = ["echo zig"]\nskills = ["counting"]'))
    with pytest.raises(CaseError, match="no skill 'counting'"):
        load_case(project, "words@zig")
    skill = project.root / "skills/counting/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: counting\ndescription: count\n---\nSplit on whitespace.\n")
    before = load_case(project, "words@zig").record().visible_hash
    assert load_case(project, "words@ts").skill_folders() == []
    skill.write_text(skill.read_text() + "Ignore empty strings.\n")
    assert load_case(project, "words@zig").record().visible_hash != before  # the skill is part of what the agent sees
    skills = Skills(project.root)
    given = skills.for_trial(None, ["counting"])
    assert [s.record.name for s in given] == ["counting"] and given[0].record.source == "track"
    assert skills.for_trial(None, ["counting"])[0] is given[0]  # packed once per run
    with pytest.raises(UsageError, match="counting given by both the track and the arm"):
        skills.for_trial(str(skill.parent), ["counting"])

"""`bench cases validate` reports every problem of every file, in the file that declares it, with its fix."""

from __future__ import annotations

import shutil

import pytest

from bench.cases import load_case, validate_all
from bench.errors import CaseError
from bench.paths import Project


def problems(root, case=None):
    """(file, field, problem, fix) of every error, optionally of one case id (its whole case's too)."""
    return [(p.file, p.field, p.problem, p.fix) for p in validate_all(Project(root)).errors(case)]


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_every_schema_error_of_case_toml_and_gate_toml_is_reported_each_with_its_field_and_fix(project):
    edit(project / "cases/hello/case.toml", 'image = "base"', 'imagee = "base"\nseat = "laptop"')
    edit(project / "goldens/hello/gate.toml", 'run = "test -f hello.txt"', 'timeout_s = 0')
    edit(project / "goldens/hello/gate.toml", "pattern = '^Hello, world!$'", "pattern = '(unclosed'")
    found = problems(project, "hello")
    fields = [(file, field) for file, field, _, _ in found]
    assert fields == [("cases/hello/case.toml", "seat"), ("cases/hello/case.toml", "imagee"),
                      ("goldens/hello/gate.toml", "checks.0.command.run"),
                      ("goldens/hello/gate.toml", "checks.0.command.timeout_s"),
                      ("goldens/hello/gate.toml", "checks.1.grep.pattern")]
    assert "'laptop'" in found[0][2] and "remove it" in found[1][3] and found[2][3] == "add this field"
    assert "docs/cases.md" in found[3][3]
    assert problems(project, "c-rle") == []  # one case's problems are its own


def test_a_run_still_stops_at_the_first_problem_and_says_how_many_follow(project):
    edit(project / "cases/hello/case.toml", 'image = "base"', 'imagee = "base"\nseat = "laptop"')
    with pytest.raises(CaseError, match=r"field 'seat'.*1 more problem\(s\): `bench cases validate` lists them"):
        load_case(Project(project), "hello")


def test_a_bad_image_is_the_problem_of_the_file_that_names_it(project):
    edit(project / "goldens/hello/gate.toml", "[[checks]]", 'image = "nope"\n\n[[checks]]')
    edit(project / "cases/thermostat-core/case.toml", 'skills = ["update-core"]\n\n[tracks.ts]',
         'skills = ["update-core"]\nimage = "zag"\n\n[tracks.ts]')
    edit(project / "goldens/thermostat-core/gate.toml", "[[tracks.ts.checks]]", '[tracks.ts]\nimage = "tee"\n\n'
         "[[tracks.ts.checks]]")
    assert [(f, field, p) for f, field, p, _ in problems(project)] == [
        ("goldens/hello/gate.toml", "image", "no image 'nope' under images/ or loaded in the lock"),
        ("cases/thermostat-core/case.toml", "tracks.zig.image", "no image 'zag' under images/ or loaded in the lock"),
        ("goldens/thermostat-core/gate.toml", "tracks.ts.image", "no image 'tee' under images/ or loaded in the lock")]
    validation = validate_all(Project(project))
    assert [p.case for p in validation.errors()] == ["hello", "thermostat-core@zig", "thermostat-core@ts"]
    assert validation.errors("thermostat-core@zig") == validation.errors()[1:2]  # the other track is not blamed


@pytest.mark.parametrize("name", ["cases/hello/case.toml", "goldens/hello/gate.toml"])
def test_a_case_file_that_is_a_folder_says_so(project, name):
    (project / name).unlink()
    (project / name).mkdir()
    assert problems(project, "hello") == [(name, "(file)", "is a folder, not a file", f"replace it with a "
                                           f"{name.rsplit('/', 1)[1]} file")]


@pytest.mark.parametrize("name", ["cases/hello/case.toml", "goldens/hello/gate.toml"])
def test_a_case_file_that_is_not_utf8_says_so(project, name):
    (project / name).write_bytes((project / name).read_bytes() + "# caf\xe9\n".encode("latin-1"))
    [(file, field, problem, fix)] = problems(project, "hello")
    assert (file, field, fix) == (name, "(encoding)", "save it as UTF-8") and problem.startswith("not UTF-8 text")


def test_a_case_folder_without_case_toml_is_reported_not_skipped(project):
    (project / "cases/draft").mkdir()
    assert [(f, p) for f, _, p, _ in problems(project, "draft")] == [
        ("cases/draft/case.toml", "does not exist"), ("goldens/draft/gate.toml", "does not exist"),
        ("cases/draft/PROMPT.md", "does not exist")]
    assert problems(project, "draft")[0][3] == "create case.toml (docs/cases.md lists its fields)"


def test_a_missing_gate_and_a_missing_prompt_are_both_reported(project):
    (project / "goldens/hello/gate.toml").unlink()
    (project / "cases/hello/PROMPT.md").unlink()
    assert [(f, field, p) for f, field, p, _ in problems(project, "hello")] == [
        ("goldens/hello/gate.toml", "(file)", "does not exist"), ("cases/hello/PROMPT.md", "PROMPT.md", "does not exist")]


def test_the_oracles_solution_must_exist(project):
    shutil.rmtree(project / "goldens/hello/solution")
    [(file, field, problem, fix)] = problems(project, "hello")
    assert (file, field, problem) == ("goldens/hello/solution", "solution/", "does not exist")
    assert "--agent oracle" in fix


def test_each_track_needs_its_solution_or_the_shared_one(project):
    shutil.rmtree(project / "goldens/thermostat-core/tracks/ts/solution")
    assert problems(project, "thermostat-core@zig") == []
    [(file, _, problem, _)] = problems(project, "thermostat-core@ts")
    assert file == "goldens/thermostat-core/tracks/ts/solution"
    assert problem == "does not exist (nor is the shared thermostat-core/solution/ a folder)"
    (project / "goldens/thermostat-core/solution").mkdir()
    assert problems(project, "thermostat-core@ts") == []


def test_a_context_that_is_not_a_folder_and_a_missing_skill_and_withheld_file(project):
    (project / "cases/hello/context").mkdir()
    (project / "cases/hello/context/default").write_text("not a folder")
    edit(project / "cases/thermostat-core/case.toml", 'skills = ["update-core"]\n\n[tracks.ts]',
         'skills = ["update-core", "nope"]\n\n[tracks.ts]')
    edit(project / "goldens/thermostat-core/gate.toml", 'withheld = ["tracks/ts/core.test.ts"]',
         'withheld = ["tracks/ts/gone.test.ts"]')
    found = {(f, field): (p, fix) for f, field, p, fix in problems(project)}
    assert found[("cases/hello/context/default", "arms")][0] == "context for arm 'default' is not a folder"
    assert found[("cases/thermostat-core/case.toml", "tracks.zig.skills")][0].startswith("no skill 'nope'")
    assert found[("goldens/thermostat-core/gate.toml", "tracks.ts.checks.0.withheld")] == (
        "'tracks/ts/gone.test.ts' does not exist under thermostat-core/", "add the file or fix the path")
    assert len(found) == 3


def test_every_problem_of_every_answer_is_reported(project):
    answer = project / "goldens/hello/answers/correct"
    (answer / "answer.toml").write_text('expect = "MAYBE"\nreason = "(unclosed"\n')
    shutil.rmtree(answer / "submission")
    (project / "goldens/hello/answers/Bad Name").mkdir()
    found = [(f, field) for f, field, _, _ in problems(project, "hello")]
    assert found == [("goldens/hello/answers/Bad Name", "(folder name)"),
                     ("goldens/hello/answers/Bad Name/answer.toml", "(file)"),
                     ("goldens/hello/answers/Bad Name/submission", "submission/"),
                     ("goldens/hello/answers/correct/answer.toml", "expect"),
                     ("goldens/hello/answers/correct/answer.toml", "reason"),
                     ("goldens/hello/answers/correct/submission", "submission/")]


def test_problems_are_data_with_case_file_field_problem_fix_and_level(project):
    (project / "goldens/stray").mkdir()
    validation = validate_all(Project(project))
    [stray] = validation.errors("stray")
    assert (stray.case, stray.file, stray.field, stray.problem, stray.level) == (
        "stray", "goldens/stray", "(folder)", "goldens without a case", "error")
    [warning] = [p for p in validation.problems if p.level == "warning"]
    assert warning.case == "weed-courier" and warning.file == "goldens/weed-courier/divergences.toml"
    assert dict(validation)["stray"] == "goldens/stray: field '(folder)': goldens without a case — add cases/stray/ " \
        "or remove it"


def test_cli_prints_every_problem_on_its_own_line_and_exits_2(bench, project):
    edit(project / "cases/hello/case.toml", 'image = "base"', 'imagee = "base"\nseat = "laptop"')
    shutil.rmtree(project / "goldens/c-rle/solution")
    done = bench("cases", "validate", root=project)
    assert done.returncode == 2, done.stdout + done.stderr
    bad = [line for line in done.stdout.splitlines() if line.startswith("bad")]
    assert [line.split(": field")[0] for line in bad] == [
        "bad  c-rle: goldens/c-rle/solution", "bad  hello: cases/hello/case.toml", "bad  hello: cases/hello/case.toml"]
    assert "field 'seat': Input should be 'none', 'software' or 'gpu' (got 'laptop')" in bad[1]
    assert "ok   hello" not in done.stdout and "ok   red-box" in done.stdout
    assert "warn weed-courier: " in done.stdout  # a warning is printed and does not fail by itself


def _folder(path):
    path.unlink()
    path.mkdir()


BAD = {  # what to break -> the line `bench cases validate` must print for it
    "gate.toml a folder": (lambda p: _folder(p / "goldens/hello/gate.toml"),
                           "bad  hello: goldens/hello/gate.toml: field '(file)': is a folder, not a file"),
    "case.toml Latin-1": (lambda p: (p / "cases/hello/case.toml").write_bytes(b'title = "caf\xe9"\n'),
                          "bad  hello: cases/hello/case.toml: field '(encoding)': not UTF-8 text (byte 12) — save it as "
                          "UTF-8"),
    "gate image": (lambda p: edit(p / "goldens/hello/gate.toml", "[[checks]]", 'image = "nope"\n[[checks]]'),
                   "bad  hello: goldens/hello/gate.toml: field 'image': no image 'nope' under images/"),
    "no solution": (lambda p: shutil.rmtree(p / "goldens/hello/solution"),
                    "bad  hello: goldens/hello/solution: field 'solution/': does not exist — add the reference solution"),
    "context a file": (lambda p: (p / "cases/hello/context").mkdir() or (p / "cases/hello/context/default").touch(),
                       "bad  hello: cases/hello/context/default: field 'arms': context for arm 'default' is not a folder"),
    "missing skill": (lambda p: edit(p / "cases/thermostat-core/case.toml", '"update-core"', '"gone"'),
                      "bad  thermostat-core@zig: cases/thermostat-core/case.toml: field 'tracks.zig.skills': no skill "
                      "'gone'"),
    "missing withheld": (lambda p: (p / "goldens/thermostat-core/tracks/zig/harness.zig").unlink(),
                         "bad  thermostat-core@zig: goldens/thermostat-core/gate.toml: field "
                         "'tracks.zig.checks.0.withheld': 'tracks/zig/harness.zig' does not exist"),
    "answer.toml": (lambda p: (p / "goldens/hello/answers/correct/answer.toml").write_text('expect = "MAYBE"\n'),
                    "bad  hello: goldens/hello/answers/correct/answer.toml: field 'expect': Input should be 'PASS' or "
                    "'FAIL' (got 'MAYBE')"),
}


@pytest.mark.parametrize("bad", BAD)
def test_each_bad_input_is_one_line_naming_file_field_and_fix_and_exit_2(bad, project, monkeypatch):
    from click.testing import CliRunner

    from bench.cli import cli

    breaks, line = BAD[bad]
    breaks(project)
    monkeypatch.setenv("BENCH_ROOT", str(project))
    done = CliRunner().invoke(cli, ["cases", "validate"], catch_exceptions=False)
    assert done.exit_code == 2, done.output
    assert line in done.output, done.output

"""Case and gate validation: one error naming the file, the field and the fix."""

from __future__ import annotations

import pytest

from bench.cases import case_ids, known_cases, load_case, validate_all
from bench.errors import CaseError, UsageError
from bench.paths import Project


def test_shipped_cases_validate(project):
    ids = case_ids(Project(project), known_cases(Project(project)))
    validation = validate_all(Project(project))
    assert validation.cases == ids and validation.errors() == []
    assert list(validation) == [(case_id, None) for case_id in ids]
    assert {"hello", "c-rle", "thermostat-core@zig", "thermostat-core@ts"} <= set(ids)


def test_unknown_case_lists_the_known_ones(project):
    with pytest.raises(UsageError, match=r"unknown case 'helo'; known cases: .*hello"):
        load_case(Project(project), "helo")


def test_unknown_field_names_file_field_and_fix(project):
    path = project / "cases" / "hello" / "case.toml"
    path.write_text('imagee = "base"\n' + path.read_text())
    with pytest.raises(CaseError) as caught:
        load_case(Project(project), "hello")
    assert caught.value.path == str(path)
    assert caught.value.field == "imagee"
    assert "remove it" in str(caught.value)


def test_wrong_type_quotes_the_bad_value(project):
    path = project / "goldens" / "hello" / "gate.toml"
    path.write_text(path.read_text().replace('kind = "grep"', 'kind = "gerp"'))
    with pytest.raises(CaseError) as caught:
        load_case(Project(project), "hello")
    assert caught.value.path.endswith("goldens/hello/gate.toml")
    assert caught.value.field.startswith("checks.1")
    assert "'gerp'" in str(caught.value)


def test_bad_regex_and_toml_syntax_are_named(project):
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text().replace("pattern = '^Hello, world!$'", "pattern = '(unclosed'"))
    with pytest.raises(CaseError, match=r"field 'checks.1.grep.pattern'"):
        load_case(Project(project), "hello")
    gate.write_text("checks = [")
    with pytest.raises(CaseError, match=r"not valid TOML"):
        load_case(Project(project), "hello")


def test_missing_prompt_and_unknown_image(project):
    (project / "cases" / "hello" / "PROMPT.md").unlink()
    with pytest.raises(CaseError, match="PROMPT.md.*does not exist"):
        load_case(Project(project), "hello")
    (project / "cases" / "hello" / "PROMPT.md").write_text("x")
    case_toml = project / "cases" / "hello" / "case.toml"
    case_toml.write_text(case_toml.read_text().replace('image = "base"', 'image = "nope"'))
    with pytest.raises(CaseError, match=r"field 'image': no image 'nope' under images/ or loaded in the lock — use one of: base"):
        load_case(Project(project), "hello")


def test_validate_all_reports_every_problem_and_orphans(project):
    (project / "cases" / "hello" / "PROMPT.md").unlink()
    (project / "goldens" / "stray").mkdir()
    report = dict(validate_all(Project(project)))
    assert report["hello"] is not None and "PROMPT.md" in report["hello"]
    assert report["c-rle"] is None
    assert "goldens without a case" in report["stray"]


def test_cli_validate_and_list(bench, project):
    listed = bench("cases", root=project, check_rc=0)
    assert "hello" in listed.stdout and "toolchain" in listed.stdout
    (project / "cases" / "hello" / "PROMPT.md").unlink()
    done = bench("cases", "validate", root=project)
    assert done.returncode == 2
    assert "bad  hello" in done.stdout
    unknown = bench("run", "helo", root=project)
    assert unknown.returncode == 2
    assert f"known cases: {', '.join(known_cases(Project(project)))}" in unknown.stderr


def test_hashes_split_visible_from_withheld(project):
    case = load_case(Project(project), "hello")
    visible, withheld = case.visible_hash(), case.goldens_hash()
    (project / "goldens" / "hello" / "gate.toml").write_text(
        (project / "goldens" / "hello" / "gate.toml").read_text() + "\n")
    assert case.visible_hash() == visible and case.goldens_hash() != withheld

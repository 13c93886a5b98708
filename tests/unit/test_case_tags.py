"""Case tags: plain names in case.toml, selected by `bench run --tag`, listed by `bench cases`."""

from __future__ import annotations

import pytest

from bench.cases import load_case, with_tags
from bench.errors import CaseError, UsageError
from bench.paths import Project


def tag(project, case: str, tags: str) -> None:
    path = project / "cases" / case / "case.toml"
    lines = [line for line in path.read_text().splitlines() if not line.startswith("tags =")]
    path.write_text(f"tags = {tags}\n" + "\n".join(lines) + "\n")


def test_tags_select_beside_the_named_cases_in_id_order(project):
    tag(project, "hello", '["quick", "greeting"]')
    tag(project, "c-rle", '["quick"]')
    root = Project(project)
    assert with_tags(root, [], ["greeting"]) == ["hello"]
    assert with_tags(root, [], ["quick"]) == ["c-rle", "hello"]
    assert with_tags(root, ["hello"], ["quick", "greeting"]) == ["hello", "c-rle"]
    assert with_tags(root, ["red-box"], []) == ["red-box"]


def test_an_unknown_tag_lists_the_known_ones(project):
    tag(project, "hello", '["quick", "greeting"]')
    with pytest.raises(UsageError, match=r"--tag 'quik': no case carries it; known tags: .*greeting, (.*, )?quick"):
        with_tags(Project(project), [], ["quik"])


def test_a_tag_is_a_plain_lowercase_name(project):
    tag(project, "hello", '["Quick"]')
    with pytest.raises(CaseError, match=r"field 'tags': Value error, 'Quick' is not a plain lowercase name"):
        load_case(Project(project), "hello")


def test_cli_lists_tags_and_refuses_an_unknown_tag_or_nothing_to_run(bench, project):
    tag(project, "hello", '["greeting"]')
    listed = bench("cases", root=project, check_rc=0)
    assert "tags" in listed.stdout and "greeting" in listed.stdout
    unknown = bench("run", "--tag", "nope", root=project)
    assert unknown.returncode == 2 and "--tag 'nope': no case carries it; known tags: " in unknown.stderr
    assert "greeting" in unknown.stderr
    nothing = bench("run", root=project)
    assert nothing.returncode == 2 and "name the CASES to run, or --tag TAG" in nothing.stderr

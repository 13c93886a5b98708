"""docs/cases.md: generated from the models and its template, never stale, every example a file that validates."""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from bench import case_docs
from bench.answers import AnswerSpec
from bench.case_spec import CaseSpec
from bench.gatespec import Check, GateSpec, Predicate
from bench.paths import Project

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "cases.md"
MODELS = {"case.toml": CaseSpec, "gate.toml": GateSpec, "answer.toml": AnswerSpec}
EXAMPLE = re.compile(r"^```toml (\S+)\n(.*?)^```$", re.M | re.S)


def examples() -> list[tuple[str, dict]]:
    return [(file, tomllib.loads(body)) for file, body in EXAMPLE.findall(DOCS.read_text(encoding="utf-8"))]


def kinds(union) -> set[str]:
    return {typing.get_args(m.model_fields["kind"].annotation)[0] for m in typing.get_args(typing.get_args(union)[0])}


def test_docs_cases_md_is_what_the_models_and_template_give():
    assert DOCS.read_text(encoding="utf-8") == case_docs.render(Project(ROOT)), \
        "docs/cases.md is stale: run `bench docs` and commit it"


def test_every_example_validates_with_its_files_model():
    found = examples()
    assert {file for file, _ in found} == set(MODELS)
    for file, data in found:
        MODELS[file].model_validate(data)


def test_every_check_kind_and_predicate_has_a_worked_example():
    checks = [check for file, data in examples() if file == "gate.toml"
              for check in [*data.get("checks", []), *(c for t in data.get("tracks", {}).values() for c in t["checks"])]]
    assert {check["kind"] for check in checks} == kinds(Check)
    predicates = {p["kind"] for check in checks for p in check.get("predicates", [])}
    assert predicates >= {"region", "contrast", "still", "differ"}


def test_every_field_of_every_model_is_documented_and_every_link_lands():
    text = DOCS.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    for name, model in case_docs.documented_models().items():
        assert case_docs.anchor(name) in anchors, f"{name} has no table: add <!-- fields: {name} --> to the template"
        for field in model.model_fields:
            assert f"| `{field}` |" in text, f"{name}.{field} is not in docs/cases.md"
    assert set(re.findall(r"\]\(#([^)]+)\)", text)) <= anchors
    assert {f"model-{m.__name__.lower()}" for m in typing.get_args(typing.get_args(Predicate)[0])} <= anchors
    assert "[docs/cases.md](docs/cases.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_container_contract_names_the_paths_the_code_uses():
    from bench.agents.base import PROMPT_FILE
    from bench.sandbox import WORKSPACE
    from bench.agents.oracle import SOLUTION
    from bench.sandbox import USER

    text = DOCS.read_text(encoding="utf-8")
    for path in (PROMPT_FILE, WORKSPACE, SOLUTION, f"uid {USER.split(':')[0]}"):
        assert path in text
    for image in sorted(p.parent.name for p in (ROOT / "images").glob("*/image.toml")):
        assert f"| `{image}` |" in text


def test_a_wrong_example_fails_rendering(tmp_path, monkeypatch):
    template = tmp_path / "case_docs.md"
    template.write_text('# x\n\n```toml gate.toml\n[[checks]]\nkind = "grep"\nname = "g"\npattern = "x"\n```\n')
    monkeypatch.setattr(case_docs, "TEMPLATE", template)
    with pytest.raises(ValueError, match=r"the gate.toml example starting '\[\[checks\]\]' does not validate: "
                       r"checks.0.grep.files: Field required"):
        case_docs.render(Project(ROOT))


def test_a_field_without_a_description_fails_rendering():
    class Undocumented(BaseModel):
        said: int = Field(1, description="Described.")
        unsaid: int = 2

    with pytest.raises(ValueError, match="Undocumented.unsaid has no description"):
        case_docs.fields_table(Undocumented)


def test_types_defaults_and_cells_read_as_an_author_writes_them():
    table = case_docs.fields_table(CaseSpec)
    assert "| `title` | string | required |" in table
    assert '| `seat` | `"none"` \\| `"software"` \\| `"gpu"` | `"none"` |' in table
    assert "| `tracks` | table of name → [TrackSpec](#model-trackspec) | `{}` |" in table
    assert case_docs.cell("a <arm> | **b** `x<y>`") == "a &lt;arm&gt; \\| \\*\\*b\\*\\* `x<y>`"


def test_bench_docs_writes_and_check_says_when_stale(bench, project):
    stale = bench("docs", "--check", root=project)
    assert stale.returncode == 1 and "stale docs/cases.md: run `bench docs`" in stale.stdout
    bench("docs", root=project, check_rc=0)
    assert (project / "docs" / "cases.md").read_text(encoding="utf-8") == case_docs.render(Project(project))
    assert bench("docs", "--check", root=project, check_rc=0).stdout.startswith("ok")


def test_bench_docs_json(bench, project):
    import json

    stale = bench("docs", "--check", "--json", root=project)
    assert stale.returncode == 1 and json.loads(stale.stdout) == {"check": True, "path": "docs/cases.md", "stale": True}
    wrote = json.loads(bench("docs", "--json", root=project, check_rc=0).stdout)
    assert wrote == {"check": False, "wrote": str(project / "docs" / "cases.md")}
    assert json.loads(bench("docs", "--check", "--json", root=project, check_rc=0).stdout)["stale"] is False

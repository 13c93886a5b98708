"""`bench init`, --root / BENCH_ROOT and the results default, without a Docker engine.

The wheel-in-a-fresh-venv run of a new project is tests/integration/test_own_project.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cases import load_all
from bench.errors import UsageError
from bench.init import TEMPLATE, init_project
from bench.lock import read_lock
from bench.paths import Project, find_root

ROOT = Path(__file__).resolve().parents[2]
NO_PROJECT = "run `bench init DIR`, or pass --root / set BENCH_ROOT"


def bench(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """This checkout's CLI with no BENCH_ROOT or BENCH_RESULTS but those given."""
    base = {k: v for k, v in os.environ.items() if k not in ("BENCH_ROOT", "BENCH_RESULTS")}
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(ROOT), **env}, timeout=120)


def test_the_template_builds_the_repositorys_base_image_and_locks_it_as_the_repository_does():
    """A new project's base is this repository's pinned base: same recipe bytes (so the same tag) and the same
    lock entry. After `bench images pin base` or `bench images lock`, copy images/base/* into
    bench/template/images/base/ and the lock's base entry into bench/template/provenance/images.lock.json."""
    fix = "copy images/base/* into bench/template/images/base/"
    for name in ("image.toml", "inputs.lock.json"):
        assert (TEMPLATE / "images/base" / name).read_bytes() == (ROOT / "images/base" / name).read_bytes(), fix
    assert sorted(p.name for p in (TEMPLATE / "images/base").iterdir()) == ["image.toml", "inputs.lock.json"], fix
    ours, theirs = read_lock(Project(TEMPLATE)), read_lock(Project(ROOT))
    assert list(ours.images) == ["base"]
    assert ours.images["base"] == theirs.images["base"], "copy the lock's base entry into the template's lock"


def test_init_makes_a_project_whose_example_case_loads_with_its_gate_and_solution(tmp_path: Path):
    made = init_project(tmp_path / "new" / "proj")
    project = Project(tmp_path / "new" / "proj")
    assert find_root(start=project.root / "cases" / "hello") == project.root
    assert Path("README.md") in made and Path("provenance/images.lock.json") in made
    [case] = load_all(project)
    assert (case.id, case.spec.image) == ("hello", "base")
    assert [check.kind for check in case.gate.checks] == ["command", "grep"]
    assert (case.goldens_dir / "solution" / "hello.txt").read_text() == "Hello, world!\n"
    assert "BENCH-GOLDEN-MARKER" not in (case.goldens_dir / "gate.toml").read_text()


def test_init_prints_what_it_made_and_the_next_command(tmp_path: Path):
    done = bench(tmp_path, "init", "proj")
    assert done.returncode == 0, done.stderr
    assert "  cases/hello/case.toml" in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1] == "next: bench --root proj run hello --agent oracle"
    listed = bench(tmp_path, "--root", "proj", "cases")
    assert listed.returncode == 0 and "Write a greeting file" in listed.stdout


@pytest.mark.parametrize("existing", ["a file", "a folder with a file"])
def test_init_refuses_anything_but_a_new_or_empty_folder_and_leaves_it_alone(tmp_path: Path, existing: str):
    target = tmp_path / "proj"
    if existing == "a file":
        target.write_text("mine\n")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine\n")
    done = bench(tmp_path, "init", "proj")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "new or empty folder" in done.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["proj"] if existing == "a file" else ["notes.txt", "proj"])


def test_init_fills_an_existing_empty_folder_and_then_refuses_to_run_over_it(tmp_path: Path):
    target = tmp_path / "proj"
    target.mkdir()
    assert init_project(target)
    with pytest.raises(UsageError, match="is not empty"):
        init_project(target)


@pytest.mark.parametrize("verb", [["cases"], ["cases", "validate"], ["run", "hello"], ["hello"], ["images", "list"],
                                  ["schema", "--check"], ["verify-provenance"]])
def test_a_verb_that_needs_a_project_and_finds_none_says_so_in_one_line(tmp_path: Path, verb: list[str]):
    done = bench(tmp_path, *verb)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr == f"bench: no bench project here (no cases/ and images/ above {tmp_path.resolve()}); " \
                          f"{NO_PROJECT}\n"
    assert list(tmp_path.iterdir()) == []  # `schema --check` once made provenance/schema/ here


@pytest.mark.parametrize("given", [["--root", "/nonexistent"], ["BENCH_ROOT=/nonexistent"]])
def test_a_root_that_is_no_project_is_refused_naming_where_it_came_from(tmp_path: Path, given: list[str]):
    env = dict(item.split("=", 1) for item in given if "=" in item)
    done = bench(tmp_path, *[item for item in given if "=" not in item], "cases", **env)
    source = "--root" if not env else "BENCH_ROOT"
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"no bench project at /nonexistent ({source})" in done.stderr and "bench init /nonexistent" in done.stderr


def test_root_comes_from_the_flag_then_bench_root_then_the_folders_above(tmp_path: Path, monkeypatch):
    one, two = tmp_path / "one", tmp_path / "two"
    init_project(one), init_project(two)
    monkeypatch.setenv("BENCH_ROOT", str(two))
    assert find_root(one, start=tmp_path) == one.resolve()
    assert find_root(start=one / "cases") == two.resolve()
    monkeypatch.delenv("BENCH_ROOT")
    assert find_root(start=one / "cases" / "hello") == one.resolve()


def test_results_default_to_the_projects_results_folder_and_a_typed_path_is_from_here(tmp_path: Path):
    init_project(tmp_path / "proj")
    (tmp_path / "work").mkdir()
    by_root = bench(tmp_path / "work", "--root", "../proj", "report", "nosuch")
    assert f"{(tmp_path / 'proj').resolve()}/results/nosuch" in by_root.stderr, by_root.stderr
    by_variable = bench(tmp_path / "work", "--root", "../proj", "report", "nosuch", BENCH_RESULTS="mine")
    assert "looked at nosuch and mine/nosuch" in by_variable.stderr, by_variable.stderr
    by_flag = bench(tmp_path / "work", "--root", "../proj", "report", "nosuch", "--results", "r", BENCH_RESULTS="mine")
    assert "looked at nosuch and r/nosuch" in by_flag.stderr, by_flag.stderr


def test_the_shorthand_still_runs_a_case_after_the_groups_options(tmp_path: Path):
    init_project(tmp_path / "proj")
    done = bench(tmp_path, "--root", "proj", "nosuch")
    assert done.returncode == 2 and "unknown case 'nosuch'; known cases: hello" in done.stderr, done.stderr


def test_help_documents_root_and_bench_root():
    shown = bench(ROOT, "--help").stdout
    assert "--root DIR" in shown and "$BENCH_ROOT" in shown and "bench init DIR" in shown
    assert "BENCH_RESULTS" in bench(ROOT, "run", "--help").stdout


def test_the_grading_wheel_carries_no_template(tmp_path: Path):
    """The template is package data for `bench init`; the wheel graders import stays modules only."""
    import zipfile

    from bench.harness import build_wheel

    names = zipfile.ZipFile(build_wheel(tmp_path)).namelist()
    assert names and all(name.endswith(".py") for name in names)

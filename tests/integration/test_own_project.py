"""A project of one's own, as a new user meets it: the built wheel in a fresh venv, run from an empty folder.

Nothing of this checkout is on the path: the venv's `bench` has only what the wheel
shipped (the template included), so a template left out of the wheel, or a root found
by accident in a checkout, fails here. One venv for the module: building it takes a while.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the venv's `bench`, the wheel it was installed from): this checkout's package wheel, with its dependencies."""
    where = tmp_path_factory.mktemp("own-project")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(where / "wheels"), str(ROOT)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = (where / "wheels").glob("hermetic_bench-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(where / "venv")], check=True, timeout=120)
    subprocess.run([str(where / "venv/bin/python"), "-m", "pip", "install", "-q", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    return where / "venv/bin/bench", wheel


@pytest.fixture()
def user(installed, tmp_path: Path):
    """The venv's `bench` in an empty folder, with no BENCH_ROOT, BENCH_RESULTS or PYTHONPATH pointing anywhere."""
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("BENCH_ROOT", "BENCH_RESULTS", "PYTHONPATH")}

    def call(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(installed[0]), *args], cwd=empty, env=env, capture_output=True, text=True,
                              timeout=600)

    call.folder = empty
    return call


def test_the_wheel_ships_the_template(installed):
    names = set(zipfile.ZipFile(installed[1]).namelist())
    for path in ("README.md", "cases/hello/case.toml", "goldens/hello/gate.toml", "goldens/hello/solution/hello.txt",
                 "images/base/image.toml", "images/base/inputs.lock.json", "provenance/images.lock.json"):
        assert f"bench/template/{path}" in names, path


def test_an_empty_folder_is_no_project_and_says_how_to_make_one(user):
    done = user("cases")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"bench: no bench project here (no cases/ and images/ above {user.folder.resolve()}); "
                           "run `bench init DIR`, or pass --root / set BENCH_ROOT\n")


def test_init_then_run_then_verify_from_an_empty_folder(user, docker_client):
    made = user("init", "proj")
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[-1] == "next: bench --root proj run hello --agent oracle"

    passed = user("--root", "proj", "run", "hello", "--agent", "oracle", "--label", "mine", "--locked")
    assert passed.returncode == 0, passed.stderr[-3000:]
    assert "image base: locked" in passed.stderr
    trial = user.folder / "proj/results/mine/hello/default/trial-1"
    assert json.loads((trial / "result.json").read_text())["verdict"] == "PASS"
    assert not (user.folder / "results").exists()  # results land in the project, not where bench was started

    verified = user("--root", "proj", "verify-provenance", "mine", "--json")
    assert verified.returncode == 0, verified.stdout
    report = json.loads(verified.stdout)
    assert report["differences"] == [] and report["trials"] == 1

    failed = user("--root", "proj", "hello", "--agent", "null", "--label", "nothing")
    assert failed.returncode == 1, failed.stderr[-3000:]
    assert json.loads((user.folder / "proj/results/nothing/hello/default/trial-1/result.json").read_text())[
        "verdict"] == "FAIL"

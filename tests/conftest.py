"""Shared fixtures: the real Docker engine, a scratch copy of the project, the CLI.

Docker tests never skip in CI (CI=true): a missing engine there is a failure, not a
skip. Locally they skip with the reason, so unit tests still run on a laptop.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config, items):
    """Tests that stop the engine run last, so nothing else depends on their restart."""
    items.sort(key=lambda item: item.get_closest_marker("engine_restart") is not None)


@pytest.fixture(scope="session", autouse=True)
def config_dir(tmp_path_factory) -> Path:
    """The signing key's folder (BENCH_CONFIG_DIR) in a temporary place: no test touches the real home.

    Set in os.environ, so the `bench` subprocesses the tests start sign with the same key.
    """
    folder = tmp_path_factory.mktemp("bench-config")
    previous = os.environ.get("BENCH_CONFIG_DIR")
    os.environ["BENCH_CONFIG_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("BENCH_CONFIG_DIR", None)
    else:
        os.environ["BENCH_CONFIG_DIR"] = previous


@pytest.fixture(scope="session", autouse=True)
def results_here():
    """BENCH_RESULTS=results: a `bench` the tests start writes results/ in its own folder (the test's), never in
    the project it runs (this checkout). tests/integration/test_own_project.py clears it to test the default."""
    previous = os.environ.get("BENCH_RESULTS")
    os.environ["BENCH_RESULTS"] = "results"
    yield
    if previous is None:
        os.environ.pop("BENCH_RESULTS", None)
    else:
        os.environ["BENCH_RESULTS"] = previous


@pytest.fixture(scope="session")
def docker_client():
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a Docker engine and none answers: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    return client


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A scratch copy of cases/ (with its _fixtures/), goldens/, images/, provenance/ and skills/ that a test may change."""
    root = tmp_path / "project"
    for part in ("cases", "goldens", "images", "provenance", "skills"):
        shutil.copytree(ROOT / part, root / part, symlinks=True)
    return root


@pytest.fixture()
def bench(tmp_path: Path):
    """Run the real `bench` CLI in a subprocess; returns a callable giving CompletedProcess."""

    def call(*args: str, root: Path = ROOT, timeout: int = 600, check_rc: int | None = None, cwd: Path | None = None):
        env = {**os.environ, "BENCH_ROOT": str(root), "PYTHONPATH": str(ROOT)}  # this checkout's code
        done = subprocess.run([sys.executable, "-m", "bench.cli", *args], env=env, cwd=cwd or tmp_path,
                              capture_output=True, text=True, timeout=timeout)
        if check_rc is not None:
            assert done.returncode == check_rc, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    return call


@pytest.fixture(autouse=True)
def no_leftover_containers(request):
    """After every Docker test: no container of a finished bench process remains.

    Containers whose owning process is still alive belong to someone else's run in
    progress (a benchmark beside the tests) and are not this test's leftovers.
    """
    yield
    if request.node.get_closest_marker("docker") is None:
        return
    import docker

    from bench.engine import PID_LABEL, alive

    client = docker.from_env()
    left = [c for c in client.containers.list(all=True, filters={"label": "bench.harness"})
            if PID_LABEL in c.labels and not alive(c.labels[PID_LABEL])]
    assert not left, f"containers left behind: {[(c.name, c.labels) for c in left]}"


@pytest.fixture(scope="module")
def seat_tag(docker_client) -> str:
    """The seat image's tag, for tests that drive a real Chromium there (tests/seat_browser.py)."""
    from bench.images import Images
    from bench.paths import Project

    tag = Images(docker_client, Project(ROOT)).tag("seat")
    if not docker_client.images.list(name=tag):
        if os.environ.get("CI"):
            pytest.fail(f"CI builds every image first, and {tag} is missing")
        pytest.skip(f"{tag} is not built here: `bench images build seat`")
    return tag

"""The build container started with the trial: used while it waits, replaced once it has ended.

Through the real lifecycle (run_trial) on FakeSandbox: a browser check's build runs in
the container `prestarted` made, with the workspace copied in before the signal that
releases it; a container that ended while the agent worked (killed, or its wait ran out)
never builds, a fresh one does, and gate.log says so.
"""

from __future__ import annotations

import pytest

from bench.grading.browser import BUILD_GO
from bench.models import Verdict
from bench.sandbox import Outcome
from bench.trial import run_trial
from tests.fakes import FakeEngine
from tests.unit.test_trial_verdicts import built, observed_by, seat_line, trial_of

GO = BUILD_GO.lstrip("/")
OOM = observed_by(lambda box: Outcome(137, False, 0.1, oom_killed=True))  # the site reached the observer: a FAIL


@pytest.fixture(autouse=True)
def no_staging(monkeypatch):
    """Staging looks images up on the engine; these tests are about what comes after it."""
    monkeypatch.setattr("bench.trial.stage", lambda *args: None)


def build_seeing(order: list):
    """The build, noting which files were in its container, in the order they arrived, when it began."""
    def build(box):
        order.extend(box.files)
        return built(box)
    return build


def run(tmp_path, waiting: frozenset[str], order: list | None = None):
    engine = FakeEngine({**OOM, "build": build_seeing(order if order is not None else [])},
                        starts={"browser": seat_line("real", "nvidia")}, waiting=waiting)
    runctx, spec = trial_of(tmp_path, engine, "red-box")
    return run_trial(runctx, spec), spec.paths, engine


def test_the_build_runs_in_the_container_started_with_the_trial(tmp_path):
    order = []
    result, _, engine = run(tmp_path, frozenset({"build"}), order)
    assert result.verdict is Verdict.FAIL and "ran out of memory" in result.reason
    assert engine.roles().count("build") == 1
    assert engine.roles().index("build") < engine.roles().index("agent")  # started before the agent's container
    box = next(box for box in engine.created if box.spec.role == "build")
    assert box.spec.command[:3] == ["python3", "-I", "-c"] and box.spec.command[-1] == "bunx shallot build"
    assert "workspace/README.md" in order and order[-1] == GO  # the agent's files first, the signal last
    assert box.waited and box.destroyed


def test_a_build_container_that_ended_while_waiting_is_replaced_by_a_fresh_one(tmp_path):
    result, paths, engine = run(tmp_path, frozenset())
    assert result.verdict is Verdict.FAIL and "ran out of memory" in result.reason
    first, second = [box for box in engine.created if box.spec.role == "build"]
    assert not first.waited and GO not in first.files and first.destroyed
    assert second.waited and second.spec.command == ["sh", "-c", "bunx shallot build"]
    assert "had ended; building in a fresh one" in paths.gate_log.read_text()


def test_the_waiting_container_holds_nothing_of_the_agents_before_grading(tmp_path):
    seen = {}

    def agent(box):
        waiting = next(b for b in engine.created if b.spec.role == "build")
        seen.update(files=dict(waiting.files), waited=waiting.waited)
        return built(box)

    engine = FakeEngine({**OOM, "agent": agent}, starts={"browser": seat_line("real", "nvidia")},
                        waiting=frozenset({"build"}))
    runctx, spec = trial_of(tmp_path, engine, "red-box")
    run_trial(runctx, spec)
    assert seen == {"files": {}, "waited": False}

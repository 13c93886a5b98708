"""Engine faults are told apart by exception type, never by message text."""

from __future__ import annotations

import pytest
from docker.errors import APIError
from requests.exceptions import ConnectionError as RequestsConnectionError

from bench import seat
from bench.errors import EngineUnavailable, InfrastructureError, UsageError
from bench.models import Verdict, utcnow
from bench.result_models import TrialResult
from bench.run import _engine_lost
from bench.trial import run_trial


class FakeClient:
    def __init__(self, fault: Exception | None = None, runtimes: dict | None = None) -> None:
        self.fault, self.runtimes = fault, runtimes or {}

    def ping(self) -> bool:
        if self.fault:
            raise self.fault
        return True

    def info(self) -> dict:
        if self.fault:
            raise self.fault
        return {"Runtimes": self.runtimes}


def _result(verdict: Verdict, reason: str = "") -> TrialResult:
    return TrialResult(run_id="r", label="l", case="c", arm="a", trial=1, agent="null", verdict=verdict,
                       reason=reason, started_at=utcnow())


def lifecycle(tmp_path, fault: Exception, behaviours: dict | None = None):
    """One real run_trial whose grading container cannot be created, failing with ``fault``."""
    from tests.fakes import FakeEngine
    from tests.unit.test_trial_verdicts import trial_of, writes

    engine = FakeEngine({"agent": writes("Hello, world!\n"), **(behaviours or {})}, fail_create="check", fault=fault)
    run, spec = trial_of(tmp_path, engine)
    return run, run_trial(run, spec)


def test_an_engine_that_went_away_stops_the_run(tmp_path):
    run, result = lifecycle(tmp_path, EngineUnavailable("Docker engine went away while creating a container"))
    assert result.verdict is Verdict.ERROR and _engine_lost(run, result)


def test_an_engine_that_answers_with_an_error_is_not_lost(tmp_path):
    run, result = lifecycle(tmp_path, InfrastructureError("Docker engine refused creating a container: 500"))
    assert result.verdict is Verdict.ERROR and not _engine_lost(run, result)


def test_the_words_engine_went_away_do_not_stop_a_run(tmp_path):
    run, result = lifecycle(tmp_path, InfrastructureError("harness fault: the Docker engine went away, says a log"))
    assert "engine went away" in result.reason and not _engine_lost(run, result)


def test_only_error_trials_count(tmp_path):
    run, _ = lifecycle(tmp_path, EngineUnavailable("gone"))
    assert not _engine_lost(run, _result(Verdict.FAIL))


def test_seat_gpu_on_an_unreachable_engine_says_so_not_no_nvidia(monkeypatch):
    monkeypatch.setattr(seat, "NVIDIA_DEVICE", seat.Path("/nonexistent/nvidiactl"))
    with pytest.raises(EngineUnavailable, match="went away while asking the engine for its runtimes"):
        seat.check_mode("gpu", FakeClient(RequestsConnectionError("refused")))
    with pytest.raises(InfrastructureError, match="refused asking the engine"):
        seat.check_mode("gpu", FakeClient(APIError("500")))
    with pytest.raises(UsageError, match="no NVIDIA runtime"):
        seat.check_mode("gpu", FakeClient())
    seat.check_mode("gpu", FakeClient(runtimes={"nvidia": {}}))

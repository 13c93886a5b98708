"""Engine faults are told apart by exception type, never by message text."""

from __future__ import annotations

import pytest
from docker.errors import APIError
from requests.exceptions import ConnectionError as RequestsConnectionError

from bench import seat
from bench.errors import EngineUnavailable, InfrastructureError, UsageError
from bench.models import TrialResult, Verdict, utcnow
from bench.run import _engine_lost


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


class Context:
    def __init__(self, client: FakeClient) -> None:
        self.client = client


def _result(verdict: Verdict, reason: str = "") -> TrialResult:
    return TrialResult(run_id="r", label="l", case="c", arm="a", trial=1, agent="null", verdict=verdict,
                       reason=reason, started_at=utcnow())


def test_an_engine_that_cannot_be_reached_is_lost():
    assert _engine_lost(Context(FakeClient(RequestsConnectionError("refused"))), _result(Verdict.ERROR, "whatever"))


def test_the_words_engine_went_away_do_not_stop_a_run_whose_engine_answers():
    assert not _engine_lost(Context(FakeClient()), _result(Verdict.ERROR, "Docker engine went away while x"))


def test_an_engine_that_answers_with_an_error_is_not_lost():
    assert not _engine_lost(Context(FakeClient(APIError("500 Server Error"))), _result(Verdict.ERROR))


def test_only_error_trials_ask_the_engine():
    assert not _engine_lost(Context(FakeClient(RequestsConnectionError("refused"))), _result(Verdict.FAIL))


def test_seat_gpu_on_an_unreachable_engine_says_so_not_no_nvidia(monkeypatch):
    monkeypatch.setattr(seat, "NVIDIA_DEVICE", seat.Path("/nonexistent/nvidiactl"))
    with pytest.raises(EngineUnavailable, match="went away while asking the engine for its runtimes"):
        seat.check_mode("gpu", FakeClient(RequestsConnectionError("refused")))
    with pytest.raises(InfrastructureError, match="refused asking the engine"):
        seat.check_mode("gpu", FakeClient(APIError("500")))
    with pytest.raises(UsageError, match="no NVIDIA runtime"):
        seat.check_mode("gpu", FakeClient())
    seat.check_mode("gpu", FakeClient(runtimes={"nvidia": {}}))

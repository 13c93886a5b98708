"""Slow is not dead: a read timeout is retried, then called slow (ERROR); only a lost connection is "went away"."""

from __future__ import annotations

import pytest
from docker.errors import APIError
from requests.exceptions import ConnectionError as RequestsConnectionError, ReadTimeout
from urllib3.exceptions import ReadTimeoutError

from bench import engine
from bench.errors import EngineUnavailable, InfrastructureError


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(engine, "wait_exponential", lambda **kwargs: (lambda state: 0))


class Flaky:
    """A call that raises each of ``faults`` in turn, then answers."""

    def __init__(self, *faults: BaseException) -> None:
        self.faults, self.calls = list(faults), 0

    def __call__(self, client) -> str:
        self.calls += 1
        if self.faults:
            raise self.faults.pop(0)
        return "done"


def test_a_read_timeout_is_retried_and_the_call_succeeds():
    call = Flaky(ReadTimeout("read timed out"), ReadTimeout("read timed out"))
    assert engine.patient(object(), "remove", "untagging bench/x:1", call) == "done"
    assert call.calls == 3


def test_a_read_timeout_that_persists_is_a_slow_engine_not_a_lost_one():
    call = Flaky(*[ReadTimeout("read timed out")] * engine.ATTEMPTS)
    with pytest.raises(InfrastructureError) as raised:
        engine.patient(object(), "remove", "untagging bench/x:1", call)
    assert not isinstance(raised.value, EngineUnavailable)
    assert call.calls == engine.ATTEMPTS
    assert str(raised.value).startswith("Docker engine is slow: no answer within 300 s, 3 tries while untagging bench/x:1")


def test_a_streamed_body_that_times_out_is_slow_too():
    """requests wraps a read timeout in the middle of a stream (an export) in its ConnectionError."""
    wrapped = RequestsConnectionError(ReadTimeoutError(None, "/containers/x/export", "Read timed out."))
    call = Flaky(*[wrapped] * engine.ATTEMPTS)
    with pytest.raises(InfrastructureError, match="engine is slow") as raised:
        engine.patient(object(), "export", "exporting image base", call)
    assert not isinstance(raised.value, EngineUnavailable)


@pytest.mark.parametrize("fault", [RequestsConnectionError("Connection refused"), ConnectionRefusedError(111, "refused"),
                                   FileNotFoundError(2, "/var/run/docker.sock")])
def test_a_refused_connection_is_the_engine_going_away_and_is_not_retried(fault):
    call = Flaky(fault)
    with pytest.raises(EngineUnavailable, match="went away while removing"):
        engine.patient(object(), "remove", "removing container abc", call)
    assert call.calls == 1


def test_an_engine_that_answers_with_an_error_is_neither_slow_nor_gone():
    call = Flaky(APIError("conflict", explanation="image is being used"))
    with pytest.raises(InfrastructureError, match="refused removing image x: image is being used") as raised:
        engine.patient(object(), "remove", "removing image x", call)
    assert not isinstance(raised.value, EngineUnavailable) and call.calls == 1


def test_engine_faults_alone_calls_a_read_timeout_slow():
    with pytest.raises(InfrastructureError, match="engine is slow") as raised, engine.engine_faults("committing"):
        raise ReadTimeout("read timed out")
    assert not isinstance(raised.value, EngineUnavailable)


def test_the_timed_client_differs_only_in_its_timeout():
    import docker

    client = docker.DockerClient(base_url="unix:///nonexistent.sock", timeout=120, version="1.43")
    slow = engine.timed(client, "export")
    assert slow.api.timeout == engine.TIMEOUTS["export"] and client.api.timeout == 120
    assert slow.api.adapters is client.api.adapters and slow.api.base_url == client.api.base_url

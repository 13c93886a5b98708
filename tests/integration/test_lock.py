"""The lock, enforced, on the real engine: only `bench images lock` writes it; a run says and records where each
image stands; --locked refuses any difference. And a slow engine is called slow, not gone.

Each test writes its own lock into a scratch project copy, so nothing depends on the
image IDs of the machine that wrote the committed lock.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from docker.api import APIClient

from bench import engine
from bench.errors import EngineUnavailable, InfrastructureError
from bench.images import Images
from bench.paths import Project

pytestmark = pytest.mark.docker


def add_probe(project: Path, content: str) -> Path:
    """images/lock-probe (a name no other test uses): base plus one file; hello is pointed at it."""
    folder = project / "images" / "lock-probe"
    folder.mkdir()
    (folder / "image.toml").write_text('parent = "base"\n')
    (folder / "Dockerfile").write_text("ARG PARENT\nFROM ${PARENT}\nCOPY x.txt /opt/x.txt\n")
    (folder / "x.txt").write_text(content)
    case = project / "cases" / "hello" / "case.toml"
    case.write_text(case.read_text().replace('image = "base"', 'image = "lock-probe"'))
    return folder


def probe_tags(client) -> list[str]:
    return [tag for image in client.images.list(name="bench/lock-probe") for tag in image.tags]


def test_build_leaves_the_lock_byte_identical(docker_client, bench, project):
    lock = project / "provenance" / "images.lock.json"
    before = lock.read_bytes()
    done = bench("images", "build", "base", root=project, check_rc=0)
    assert lock.read_bytes() == before, "bench images build rewrote the lock"
    assert done.stdout.split()[0] == "base"


def test_locked_refuses_a_drifted_image_and_a_plain_run_records_the_drift(docker_client, bench, project, tmp_path):
    probe = add_probe(project, f"locked {uuid.uuid4()}\n")
    try:
        bench("images", "lock", "base", "lock-probe", root=project, check_rc=0)
        (probe / "x.txt").write_text(f"changed {uuid.uuid4()}\n")  # a deliberate change to the image's context

        refused = bench("run", "hello", "--agent", "oracle", "--label", "strict", "--locked", root=project)
        assert refused.returncode == 2, refused.stderr
        assert "image lock-probe: drifted — content differs from the lock (no package changed; other files differ)" \
            in refused.stderr
        assert "or record the change with `bench images lock lock-probe`" in refused.stderr
        assert "image base: locked" in refused.stderr and "image base: locked —" not in refused.stderr
        assert not (tmp_path / "results" / "strict" / "hello").exists(), "a refused run ran a trial"

        ran = bench("run", "hello", "--agent", "oracle", "--label", "loose", "--trials", "2", root=project)
        assert ran.returncode == 0, ran.stderr
        assert "image lock-probe: drifted" in ran.stderr
        for n in (1, 2):
            provenance = tmp_path / "results" / "loose" / "hello" / "default" / f"trial-{n}" / "provenance.json"
            assert json.loads(provenance.read_text())["lock"] == {"base": "locked", "lock-probe": "drifted"}
    finally:
        for tag in probe_tags(docker_client):
            docker_client.images.remove(tag)


def spy_export(monkeypatch, too_short: int | None) -> list[float]:
    """Each export call's timeout, recorded; the first ``too_short`` calls (all when None) get 1 ms instead.

    Only the clone patient() made for that attempt is changed; the shared client keeps its own.
    """
    monkeypatch.setattr(engine, "wait_exponential", lambda **kwargs: (lambda state: 0))
    calls: list[float] = []
    real_export = APIClient.export

    def export(api, container):
        calls.append(api.timeout)
        if too_short is None or len(calls) <= too_short:
            api.timeout = 0.001
        return real_export(api, container)

    monkeypatch.setattr(APIClient, "export", export)
    return calls


def test_a_read_timeout_on_an_export_is_retried_then_reported_as_a_slow_engine(docker_client, project, monkeypatch):
    """The real export call with a timeout far too short: retried, then "slow" — never "went away"."""
    images = Images(docker_client, Project(project))
    base = images.ensure("base")
    calls = spy_export(monkeypatch, too_short=None)
    with pytest.raises(InfrastructureError) as raised:
        images.inspect_filesystem("base", base.id)
    assert not isinstance(raised.value, EngineUnavailable)
    assert str(raised.value).startswith("Docker engine is slow: no answer within 900 s, 3 tries while exporting image "
                                        "base for its content digest")
    assert calls == [engine.TIMEOUTS["export"]] * engine.ATTEMPTS  # each retry gets the full sized timeout
    assert docker_client.api.timeout != 0.001


def test_a_read_timeout_that_passes_is_retried_to_success(docker_client, project, monkeypatch):
    images = Images(docker_client, Project(project))
    base = images.ensure("base")
    calls = spy_export(monkeypatch, too_short=1)
    data = images.inspect_filesystem("base", base.id)
    assert len(calls) == 2
    assert data["digest"] == images.filesystem("base", base.id)["digest"]
    assert docker_client.containers.list(all=True, filters={"label": f"bench.pid={os.getpid()}"}) == []

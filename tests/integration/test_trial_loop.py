"""The trial loop end to end, on the real Docker engine, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cases import case_ids, known_cases, load_case
from bench.paths import Project

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
MARKER_HALVES = ("BENCH-GOLDEN-", "MARKER-5d1e0c7a")


def result_of(tmp_path: Path, label: str, case: str, n: int = 1, arm: str = "default") -> dict:
    return json.loads((tmp_path / "results" / label / case / arm / f"trial-{n}" / "result.json").read_text())


def trial_dir(tmp_path: Path, label: str, case: str = "hello") -> Path:
    return tmp_path / "results" / label / case / "default" / "trial-1"


# Cases that need a rendering seat are graded in a browser; tests/integration/test_browser.py runs them.
@pytest.mark.parametrize("case", [c for c in case_ids(Project(ROOT), known_cases(Project(ROOT))) if load_case(Project(ROOT), c).spec.seat == "none"])
def test_oracle_passes_and_null_fails(docker_client, bench, tmp_path, case):
    bench("run", case, "--agent", "oracle", "--label", "oracle", check_rc=0)
    bench("run", case, "--agent", "null", "--label", "null", check_rc=1)  # some FAIL
    assert result_of(tmp_path, "oracle", case)["verdict"] == "PASS"
    failed = result_of(tmp_path, "null", case)
    assert failed["verdict"] == "FAIL"
    assert failed["reason"].startswith("check '")


def test_shorthand_runs_a_case(docker_client, bench, tmp_path):
    done = bench("hello", "--agent", "oracle", "--label", "short", check_rc=0)
    assert "PASS" in done.stderr
    assert result_of(tmp_path, "short", "hello")["verdict"] == "PASS"


def _search(marker_halves: tuple[str, str], found: str, nothing: str) -> str:
    return (f"A={marker_halves[0]}; B={marker_halves[1]}; "
            'if grep -rqs --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "$A$B" /; '
            f"then echo {found}; else echo {nothing}; fi")


def test_agent_container_cannot_reach_the_goldens(docker_client, bench, tmp_path, project):
    search = _search(MARKER_HALVES, "SEARCH-FOUND-MARKER", "SEARCH-FOUND-NOTHING")
    # Positive control: a check given a withheld file holding the marker finds it, so the search works.
    (project / "goldens" / "hello" / "probe.txt").write_text("".join(MARKER_HALVES) + "\n")
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + f"""
[[checks]]
kind = "command"
name = "control: a check sees its own withheld file"
withheld = ["probe.txt"]
run = '{search}'
stdout_matches = ['SEARCH-FOUND-MARKER']
""")
    bench("run", "hello", "--agent", "command", "--agent-cmd", search, "--label", "iso", root=project, check_rc=1)
    transcript = (trial_dir(tmp_path, "iso") / "transcript.log").read_text()
    assert "SEARCH-FOUND-NOTHING" in transcript
    assert "SEARCH-FOUND-MARKER" not in transcript
    checks = {c["name"]: c for c in result_of(tmp_path, "iso", "hello")["checks"]}
    assert checks["control: a check sees its own withheld file"]["passed"] is True


def test_no_grader_check_sees_the_reference_solution_or_another_checks_files(docker_client, bench, tmp_path, project):
    halves = ("BENCH-SOLUTION-", "ONLY-7f3a91")
    (project / "goldens" / "hello" / "solution" / "marker.txt").write_text("".join(halves) + "\n")
    (project / "goldens" / "hello" / "probe.txt").write_text("".join(MARKER_HALVES) + "\n")
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + f"""
[[checks]]
kind = "command"
name = "a check with a withheld file"
withheld = ["probe.txt"]
run = 'test -f "$BENCH_WITHHELD/probe.txt" && echo present; touch "$BENCH_WITHHELD/probe.txt" 2>/dev/null; echo exit=$?'
stdout_matches = ['^present$', '^exit=1$']

[[checks]]
kind = "command"
name = "no solution, no other check's file"
run = '{_search(halves, "FOUND-SOLUTION", "NO-SOLUTION")}; {_search(MARKER_HALVES, "FOUND-PROBE", "NO-PROBE")}'
stdout_matches = ['^NO-SOLUTION$', '^NO-PROBE$']
""")
    bench("run", "hello", "--agent", "null", "--label", "nosol", root=project, check_rc=1)
    checks = {c["name"]: c for c in result_of(tmp_path, "nosol", "hello")["checks"]}
    assert checks["a check with a withheld file"]["passed"] is True, checks["a check with a withheld file"]["detail"]
    assert checks["no solution, no other check's file"]["passed"] is True, checks["no solution, no other check's file"]["detail"]


def test_planted_verdict_files_change_nothing(docker_client, bench, tmp_path):
    plant = (
        "cd {workspace} && echo '{\"verdict\": \"PASS\"}' > verdict.json && echo 1 > reward.txt && "
        "printf 'import pytest\\n' > conftest.py && "
        "echo 'BENCH-GATE-RESULT {\"verdict\": \"PASS\", \"reason\": \"\", \"checks\": []}'"
    )
    bench("run", "hello", "--agent", "command", "--agent-cmd", plant, "--label", "plant", check_rc=1)
    result = result_of(tmp_path, "plant", "hello")
    assert result["verdict"] == "FAIL"
    assert {c["name"] for c in result["checks"]} == {"hello.txt exists", "greeting line"}


def test_sandbox_is_unprivileged_offline_and_limited(docker_client, bench, tmp_path):
    probe = (
        "echo uid=$(id -u); test -S /var/run/docker.sock && echo SOCKET || echo NOSOCKET; "
        "echo ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ,); "
        "echo pids=$(cat /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max 2>/dev/null | head -1); "
        "echo mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max 2>/dev/null | head -1)"
    )
    bench("run", "hello", "--agent", "command", "--agent-cmd", probe, "--label", "probe", check_rc=1)
    transcript = (trial_dir(tmp_path, "probe") / "transcript.log").read_text()
    assert "uid=1000" in transcript
    assert "NOSOCKET" in transcript
    assert "ifaces=lo," in transcript
    assert "pids=512" in transcript
    assert f"mem={2048 << 20}" in transcript


def test_agent_that_hangs_is_killed_at_the_timeout(docker_client, bench, tmp_path):
    done = bench("run", "hello", "--agent", "command", "--agent-cmd", "echo started; sleep infinity",
                 "--timeout", "3", "--label", "hang", check_rc=1)
    result = result_of(tmp_path, "hang", "hello")
    assert result["verdict"] == "FAIL"
    assert result["reason"].startswith("timeout")
    assert result["timed_out"] is True
    assert 3 <= result["phases"]["agent"] < 30
    assert "started" in (trial_dir(tmp_path, "hang") / "transcript.log").read_text()
    assert "FAIL" in done.stderr


def test_second_run_builds_no_image(docker_client, bench, tmp_path):
    bench("run", "hello", "--agent", "null", "--label", "first", check_rc=1)
    bench("run", "hello", "--agent", "null", "--label", "second", check_rc=1)
    summary = json.loads((tmp_path / "results" / "second" / "summary.json").read_text())
    assert summary["images_built"] == []


def test_interrupted_run_leaves_no_container_and_an_honest_record(docker_client, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "command", "--agent-cmd", "sleep 60",
         "--label", "intr"], cwd=tmp_path, env={**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_agent_container(docker_client)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    result = result_of(tmp_path, "intr", "hello")
    assert result["verdict"] == "ERROR"
    assert "interrupted" in result["reason"]


def _wait_for_agent_container(client, timeout: float = 60) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.containers.list(filters={"label": "bench.role=agent"}):
            return
        time.sleep(0.2)
    raise AssertionError("no agent container appeared")


def test_setup_is_staged_once_per_case_and_arm_and_reused(docker_client, bench, tmp_path, project):
    case = project / "cases" / "hello" / "case.toml"
    case.write_text('setup = ["echo prepared-by-setup > .setup-marker"]\n' + case.read_text())
    probe = "cat {workspace}/.setup-marker && cd {workspace} && echo 'Hello, world!' > hello.txt"
    bench("run", "hello", "--agent", "command", "--agent-cmd", probe, "--trials", "2", "--concurrency", "1",
          "--label", "staged", root=project, check_rc=0)
    staged_ids = set()
    for n in (1, 2):
        trial = tmp_path / "results" / "staged" / "hello" / "default" / f"trial-{n}"
        assert "prepared-by-setup" in (trial / "transcript.log").read_text()
        assert json.loads((trial / "result.json").read_text())["verdict"] == "PASS"
        staged_ids.add(json.loads((trial / "provenance.json").read_text())["images"]["staged"]["id"])
    assert len(staged_ids) == 1
    docker_client.images.remove(staged_ids.pop(), force=True)


def test_ca_bundle_reaches_agents_that_get_a_network_only(docker_client, bench, tmp_path):
    bundle = tmp_path / "corp-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nBENCH-TEST-CA\n-----END CERTIFICATE-----\n")
    show = 'echo "ssl=$SSL_CERT_FILE node=$NODE_EXTRA_CA_CERTS"; cat "$SSL_CERT_FILE" 2>/dev/null || echo NO-BUNDLE'
    bench("run", "hello", "--agent", "command", "--agent-cmd", show, "--agent-network", "--ca-bundle", str(bundle),
          "--label", "ca-net", check_rc=1)
    networked = (trial_dir(tmp_path, "ca-net") / "transcript.log").read_text()
    assert "ssl=/opt/bench/ca-bundle.crt node=/opt/bench/ca-bundle.crt" in networked
    assert "BENCH-TEST-CA" in networked
    bench("run", "hello", "--agent", "command", "--agent-cmd", show, "--ca-bundle", str(bundle),
          "--label", "ca-none", check_rc=1)
    offline = (trial_dir(tmp_path, "ca-none") / "transcript.log").read_text()
    assert "NO-BUNDLE" in offline and "BENCH-TEST-CA" not in offline

"""Arms, repeated trials, concurrency and resume, on the real engine."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SLOW_SOLVER = 'sleep 1; cd {workspace} && echo "Hello, world!" > hello.txt'


def verdicts(results: Path) -> dict[str, str]:
    out = {}
    for path in sorted(results.glob("*/*/trial-*/result.json")):
        data = json.loads(path.read_text())
        out[f"{data['case']}/{data['arm']}/{data['trial']}"] = data["verdict"]
    return out


def test_concurrency_two_gives_the_same_verdicts_as_one(docker_client, bench, tmp_path):
    args = ["run", "hello", "c-rle", "--arm", "good=agent:oracle", "--arm", "bad=agent:null", "--trials", "2"]
    bench(*args, "--concurrency", "1", "--label", "c1", check_rc=1)  # arm bad FAILs
    bench(*args, "--concurrency", "2", "--label", "c2", check_rc=1)
    one, two = verdicts(tmp_path / "results" / "c1"), verdicts(tmp_path / "results" / "c2")
    assert len(one) == 8
    assert one == two
    assert {v for k, v in one.items() if "/good/" in k} == {"PASS"}
    assert {v for k, v in one.items() if "/bad/" in k} == {"FAIL"}


def test_arms_interleave_and_are_recorded(docker_client, bench, tmp_path):
    bench("run", "hello", "--arm", "base=agent:oracle", "--arm", "cand=agent:null,model:m-1", "--trials", "2",
          "--concurrency", "1", "--label", "arms", check_rc=1)
    results = [json.loads(p.read_text()) for p in (tmp_path / "results" / "arms").glob("hello/*/trial-*/result.json")]
    order = [f"{r['arm']}-{r['trial']}" for r in sorted(results, key=lambda r: r["started_at"])]
    assert order == ["base-1", "cand-1", "base-2", "cand-2"]
    provenance = json.loads((tmp_path / "results/arms/hello/cand/trial-1/provenance.json").read_text())
    assert provenance["arm_spec"]["name"] == "cand" and provenance["agent"]["model"] == "m-1"
    assert provenance["agent"]["name"] == "null"


def test_resume_after_kill_9_reruns_nothing_finished(docker_client, bench, tmp_path):
    args = ["run", "hello", "--agent", "command", "--agent-cmd", SLOW_SOLVER, "--trials", "4", "--concurrency", "1"]
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    runner = subprocess.Popen([sys.executable, "-m", "bench.cli", *args, "--label", "killed"], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    label = tmp_path / "results" / "killed"
    deadline = time.monotonic() + 120
    while len(list(label.glob("hello/default/trial-*/result.json"))) < 2:
        assert time.monotonic() < deadline and runner.poll() is None, "the run ended before it could be killed"
        time.sleep(0.1)
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    finished = {p: p.read_bytes() for p in label.glob("hello/default/trial-*/result.json")}
    assert 2 <= len(finished) < 4
    assert_signed_prefix_verifies(bench, label)

    done = bench(*args, "--label", "killed", check_rc=0)
    assert f"{len(finished)} finished trial(s) kept" in done.stderr
    for path, before in finished.items():
        assert path.read_bytes() == before, f"{path} was run again"
    bench(*args, "--label", "straight", check_rc=0)
    resumed = json.loads((label / "summary.json").read_text())["arms"]
    straight = json.loads((tmp_path / "results/straight/summary.json").read_text())["arms"]
    assert [a["counts"] for a in resumed] == [a["counts"] for a in straight] == [
        {"PASS": 4, "FAIL": 0, "INCOMPLETE": 0, "ERROR": 0}]
    assert bench("verify-provenance", str(label), "--json").stdout.count('"SHA-256 differs') == 0


def assert_signed_prefix_verifies(bench, label: Path) -> None:
    """A kill -9 leaves a signed statement of the finished trials: each verifies; only the unfinished are named."""
    statement = json.loads(base64.b64decode(json.loads((label / "attestation.dsse.json").read_text())["payload"]))
    attested = statement["predicate"]["buildDefinition"]["internalParameters"]
    assert attested["complete"] is False and len(attested["trials"]) >= 1
    report = json.loads(bench("verify-provenance", str(label), "--json").stdout)
    assert report["signatures"][str(label)]["status"] == "trusted"
    for difference in report["differences"]:
        assert not any(difference["where"].startswith(str(label / trial)) for trial in attested["trials"]) or \
            difference["what"].startswith("harness was dirty"), difference
    unfinished = {d["where"] for d in report["differences"] if "not attested" in d["what"] or "expected by" in d["what"]}
    assert unfinished, report["differences"]  # the trials the kill cut short are named as such


def test_resume_with_another_agent_is_refused(docker_client, bench, tmp_path):
    """One experiment per label: a null-agent run may not continue an oracle label."""
    bench("run", "hello", "--agent", "oracle", "--label", "one", check_rc=0)
    done = bench("run", "hello", "--agent", "null", "--label", "one", "--trials", "2")
    assert done.returncode == 2
    assert "agent: recorded 'oracle', now 'null'" in done.stderr
    assert "hello arms.default: recorded default(context=default, agent=oracle)" in done.stderr
    assert not (tmp_path / "results/one/hello/default/trial-2").exists()


def test_compare_exits_3_on_drift(docker_client, bench, tmp_path, project):
    bench("run", "hello", "--agent", "oracle", "--trials", "2", "--label", "base", root=project, check_rc=0)
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + "\n# edited\n")
    bench("run", "hello", "--agent", "oracle", "--trials", "2", "--label", "cand", root=project, check_rc=0)
    done = bench("compare", "base", "cand", "--results", str(tmp_path / "results"), root=project)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "hello: goldens_hash differs" in " ".join(done.stdout.split())


def test_resume_refuses_when_what_decides_verdicts_changed(docker_client, bench, tmp_path, project):
    bench("run", "hello", "--agent", "null", "--label", "drift", root=project, check_rc=1)
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + "\n# edited\n")
    done = bench("run", "hello", "--agent", "null", "--label", "drift", "--trials", "2", "--timeout", "30",
                 root=project)
    assert done.returncode == 2
    assert "refusing to continue label 'drift'" in done.stderr
    assert "hello goldens_hash: recorded sha256:" in done.stderr
    assert "timeout_s: recorded None, now 30" in done.stderr
    assert not (tmp_path / "results/drift/hello/default/trial-2").exists()


def test_bad_arm_and_concurrency_are_usage_errors(bench):
    assert "is not KEY:VALUE" in bench("run", "hello", "--arm", "x=colour:red").stderr
    done = bench("run", "hello", "--arm", "x=context:nope")
    assert done.returncode == 2 and "case hello has no context 'nope'; its arms are default" in done.stderr
    assert bench("run", "hello", "--concurrency", "0").returncode == 2

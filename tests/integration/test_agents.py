"""Real agent CLIs in real containers, offline: Claude Code and Codex against the scripted endpoint.

Nothing inside the agent is mocked: the pinned `claude` (Messages API) or `codex`
(Responses API) executable runs headless in the agent container and talks HTTP to
bench.model_endpoint in its sidecar over their shared loopback. The images (claude-code, codex) are built once, by `bench images build` in CI
or by the first test that needs them, and shared by every test here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "tests" / "fixtures" / "model-scripts"
CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
                        "CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
PLANTED = "sk-ant-test-PLANTED-7f3a9c1e5b2d4f6a8c0e"


def bench_run(tmp_path: Path, *args: str, env: dict[str, str] | None = None, check_rc: int | None = 0):
    """The real CLI with no model credentials but those a test plants."""
    base = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARIABLES}
    done = subprocess.run([sys.executable, "-m", "bench.cli", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, env={**base, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT), **(env or {})})
    if check_rc is not None:
        assert done.returncode == check_rc, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def trial(tmp_path: Path, label: str, case: str = "hello") -> Path:
    return tmp_path / "results" / label / case / "default" / "trial-1"


def result(tmp_path: Path, label: str) -> dict:
    return json.loads((trial(tmp_path, label) / "result.json").read_text())


def endpoint_usage(trial_dir: Path) -> dict[str, int]:
    """Token totals the scripted server itself reported, from its request log."""
    totals: dict[str, int] = {}
    for line in (trial_dir / "endpoint.log").read_text().splitlines():
        if line.startswith("{") and (entry := json.loads(line)).get("usage"):
            for key, value in entry["usage"].items():
                totals[key] = totals.get(key, 0) + value
    return totals


def test_claude_code_solves_hello_under_a_script(docker_client, tmp_path):
    bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--model-script", str(SCRIPTS / "hello-solve.toml"),
              "--label", "solve")
    done = result(tmp_path, "solve")
    assert done["verdict"] == "PASS", done["reason"]
    assert done["agent_status"] == "completed" and done["session_id"]
    served = endpoint_usage(trial(tmp_path, "solve"))
    assert served == {"input_tokens": 4400, "output_tokens": 125, "cache_creation_input_tokens": 300,
                      "cache_read_input_tokens": 600}
    assert {key: int(done["usage"][key]) for key in served} == served
    assert done["usage"]["turns"] == 3 and done["usage"]["cost_usd"] > 0
    events = [json.loads(line) for line in (trial(tmp_path, "solve") / "transcript.jsonl").read_text().splitlines()]
    assert events[0]["type"] == "system" and events[-1]["type"] == "result"
    _provenance_names_the_real_binary(docker_client, trial(tmp_path, "solve"), events[0]["claude_code_version"])


def _provenance_names_the_real_binary(client, trial_dir: Path, version: str) -> None:
    provenance = json.loads((trial_dir / "provenance.json").read_text())
    agent, image = provenance["agent"], provenance["images"]["agent"]
    assert agent["name"] == "claude-code" and agent["version"] == version
    assert agent["model"].startswith("scripted:sha256:")
    out = client.containers.run(image["id"], ["sha256sum", "/opt/agent/claude-code/claude"], remove=True,
                                network_mode="none", labels={"bench.harness": "hermetic-bench"})
    assert out.decode().split()[0] == agent["binary_sha256"]


def test_claude_code_gives_up_under_another_script(docker_client, tmp_path):
    bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--model-script",
              str(SCRIPTS / "hello-give-up.json"), "--label", "give-up", check_rc=1)
    done = result(tmp_path, "give-up")
    assert done["verdict"] == "FAIL" and done["reason"].startswith("check 'hello.txt exists'")
    assert done["agent_status"] == "completed"
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (900, 15)
    assert endpoint_usage(trial(tmp_path, "give-up"))["input_tokens"] == 900


def test_a_scripted_run_never_hands_the_agent_a_real_key(docker_client, tmp_path):
    """A model key in the user's environment stays out of a scripted agent's container altogether."""
    bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--model-script", str(SCRIPTS / "leak-key.json"),
              "--label", "leak", env={"ANTHROPIC_API_KEY": PLANTED})
    trial_dir = trial(tmp_path, "leak")
    assert result(tmp_path, "leak")["verdict"] == "PASS"
    walked = 0
    for path in (tmp_path / "results" / "leak").rglob("*"):
        if path.is_file():
            walked += 1
            assert PLANTED.encode() not in path.read_bytes(), f"{path} holds the key"
            assert PLANTED not in path.name
    assert walked >= 8
    with tarfile.open(trial_dir / "workspace.tar") as archive:
        members = {m.name: m for m in archive}
        # The agent wrote what it held: the scripted placeholder, never the key (and nothing was redacted).
        assert archive.extractfile(members["workspace/leak.txt"]).read() == b"bench-scripted-endpoint\n"
        assert "workspace/name-bench-scripted-endpoint.txt" in members
    assert "key=bench-scripted-endpoint" in (trial_dir / "transcript.jsonl").read_text()


ENCODINGS = {
    "raw": 'printf %s "$T"',
    "base64": 'printf "xx%s" "$T" | base64 -w0',
    "base64-wrapped": 'printf "%s" "$T$T" | base64 -w 12',
    "hex": 'printf %s "$T" | od -An -tx1 | tr -d " \\n"',
    "reversed": 'printf %s "$T" | rev',
    "split": 'printf %s "$T" | fold -w 7',
    "url": 'python3 -c "import os,urllib.parse;print(urllib.parse.quote(os.environ[\'T\'],safe=\'\'))"',
    "json-u": 'python3 -c "import os;print(\'\'.join(chr(92)+\'u%04x\' % ord(c) for c in os.environ[\'T\']))"',
    "ansi": 'printf "%s\\033[31m%s\\033[0m%s" "$(echo "$T" | cut -c1-9)" "$(echo "$T" | cut -c10-17)" "$(echo "$T" | cut -c18-)"',
    "utf16": 'printf %s "$T" | iconv -t UTF-16LE',
}


def test_agent_env_secrets_are_redacted_in_names_and_encodings(docker_client, tmp_path):
    """A credential handed to a command agent, smuggled out by name and in each encoded form, is in no record."""
    token = "tok-PLANTED-5e8d1c9a7b3f"
    writes = " && ".join(f"({command}) > /workspace/enc-{name}.txt" for name, command in ENCODINGS.items())
    script = (f"export T=$BENCH_TEST_TOKEN && {writes} && mkdir -p \"/workspace/dir-$T\" && touch \"/workspace/dir-$T/f-$T\" && "
              'for f in /workspace/enc-*.txt; do cat "$f"; echo; done && echo "Hello, world!" > /workspace/hello.txt')
    bench_run(tmp_path, "run", "hello", "--agent", "command", "--agent-cmd", script, "--agent-env", "BENCH_TEST_TOKEN",
              "--label", "enc", env={"BENCH_TEST_TOKEN": token})
    assert result(tmp_path, "enc")["verdict"] == "PASS"
    forms = _forms(token)
    records = {p: p.read_bytes() for p in (tmp_path / "results" / "enc").rglob("*") if p.is_file()}
    with tarfile.open(trial(tmp_path, "enc") / "workspace.tar") as archive:
        names = archive.getnames()
        members = {m.name: archive.extractfile(m).read() for m in archive if m.isfile()}
    assert len([n for n in names if "enc-" in n]) == len(ENCODINGS), names  # every form was written
    assert any("[REDACTED:BENCH_TEST_TOKEN]" in n for n in names)
    for where, data in [*records.items(), *members.items()]:
        for form, needle in forms.items():
            assert needle not in data, f"{where} holds the token as {form}"
    for name in [*names, *(str(p) for p in records)]:
        assert token not in name


def _forms(token: str) -> dict[str, bytes]:
    import base64
    import urllib.parse

    return {"raw": token.encode(), "base64": base64.b64encode(b"xx" + token.encode())[4:-4],
            "hex": token.encode().hex().encode(), "reversed": token[::-1].encode(),
            "url": urllib.parse.quote(token, safe="").encode(), "utf16": token.encode("utf-16-le")}


def test_a_hanging_cli_is_killed_at_the_timeout(docker_client, tmp_path):
    bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--model-script", str(SCRIPTS / "hang.json"),
              "--timeout", "6", "--label", "hang", check_rc=1)
    done = result(tmp_path, "hang")
    assert done["verdict"] == "FAIL" and done["reason"].startswith("timeout")
    assert done["agent_status"] == "timeout" and done["timed_out"] is True
    assert 6 <= done["phases"]["agent"] < 40
    left = docker_client.containers.list(all=True, filters={"label": f"bench.run={done['run_id']}"})
    assert left == [], [c.labels for c in left]
    assert "turn" in (trial(tmp_path, "hang") / "endpoint.log").read_text()  # the CLI did reach the sidecar


def test_command_one_liner_solves_hello_with_a_redacted_credential(docker_client, tmp_path):
    one_liner = 'cd {workspace} && echo "token=$BENCH_TEST_TOKEN" && echo "Hello, world!" > hello.txt'
    bench_run(tmp_path, "run", "hello", "--agent", "command", "--agent-cmd", one_liner, "--agent-env",
              "BENCH_TEST_TOKEN", "--label", "cmd", env={"BENCH_TEST_TOKEN": "token-PLANTED-0123456789"})
    assert result(tmp_path, "cmd")["verdict"] == "PASS"
    assert "token=[REDACTED:BENCH_TEST_TOKEN]" in (trial(tmp_path, "cmd") / "transcript.log").read_text()


def test_missing_credentials_stop_before_anything_is_built(tmp_path):
    done = bench_run(tmp_path, "run", "hello", "--agent", "claude-code", "--label", "none", check_rc=2)
    assert "ANTHROPIC_API_KEY" in done.stderr and "--agent oracle" in done.stderr
    assert not (tmp_path / "results").exists()


def test_codex_solves_hello_under_a_script(docker_client, tmp_path):
    bench_run(tmp_path, "run", "hello", "--agent", "codex", "--model-script",
              str(SCRIPTS / "hello-solve-codex.toml"), "--label", "codex")
    done = result(tmp_path, "codex")
    assert done["verdict"] == "PASS", done["reason"]
    assert done["agent_status"] == "completed" and done["session_id"]
    trial_dir = trial(tmp_path, "codex")
    log = [json.loads(line) for line in (trial_dir / "endpoint.log").read_text().splitlines() if line.startswith("{")]
    assert [(entry["path"], entry["turn"]) for entry in log] == [("/v1/responses", n) for n in (1, 2, 3)]
    served = endpoint_usage(trial_dir)
    assert served == {"input_tokens": 4400, "output_tokens": 125, "cache_read_input_tokens": 2500}
    assert {key: int(done["usage"][key]) for key in served} == served
    events = [json.loads(line) for line in (trial_dir / "transcript.jsonl").read_text().splitlines()]
    commands = [e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == "command_execution"]
    assert len(commands) == 2 and all(item["exit_code"] == 0 for item in commands)
    assert events[0]["type"] == "thread.started" and events[-1]["type"] == "turn.completed"
    provenance = json.loads((trial_dir / "provenance.json").read_text())
    assert provenance["agent"]["name"] == "codex" and provenance["agent"]["model"].startswith("scripted:sha256:")


def test_codex_image_runs_its_pinned_binary(docker_client):
    from bench.agents.layer import installed
    from bench.images import Images
    from bench.paths import Project

    image = Images(docker_client, Project(ROOT)).ensure("codex")
    record = installed(docker_client, image)
    out = docker_client.containers.run(image.id, ["sh", "-c", "codex --version; sha256sum /opt/agent/codex/bin/codex"],
                                       remove=True, network_mode="none", user="1000:1000",
                                       labels={"bench.harness": "hermetic-bench"}).decode()
    assert f"codex-cli {record.version}" in out
    assert record.binary_sha256 in out

"""Usage from stored transcripts, the scripted endpoint's protocol, redaction, adapter plans (no engine)."""

from __future__ import annotations

import io
import json
import tarfile
import urllib.request
from pathlib import Path

import pytest

from bench.agents import AgentOptions, make_agent
from bench.errors import UsageError
from bench.model_endpoint import ScriptError, load_script, serve
from bench.redact import redact_tree
from bench.transcripts import claude_report, codex_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
SCRIPTS = FIXTURES / "model-scripts"


def test_claude_completed_run_sums_every_turn():
    report = claude_report(TRANSCRIPTS / "claude-code-completed.jsonl")
    assert report.status == "completed"
    assert report.session_id == "1b0a529b-13c7-4b5f-8fe3-8cf6c01c7f1c"
    # hello-solve.toml's three turns: input 1200 + 1500 + 1700, output 40 + 60 + 25,
    # cache creation 300 + 0 + 0, cache reads 0 + 300 + 300.
    assert report.usage == {"turns": 3, "input_tokens": 4400, "output_tokens": 125,
                            "cache_creation_input_tokens": 300, "cache_read_input_tokens": 600,
                            "cost_usd": 0.02172, "duration_s": 0.31}


def test_claude_run_stopped_by_max_turns_is_capped():
    report = claude_report(TRANSCRIPTS / "claude-code-capped.jsonl")
    assert report.status == "capped"
    assert report.usage["turns"] == 2
    assert (report.usage["input_tokens"], report.usage["output_tokens"]) == (1200, 40)


def test_claude_run_killed_before_its_result_is_a_timeout_or_an_error():
    path = TRANSCRIPTS / "claude-code-timeout.jsonl"
    assert claude_report(path, timed_out=True).status == "timeout"
    report = claude_report(path)
    assert report.status == "error"
    assert report.usage == {"turns": 0}
    assert report.session_id == "43abff71-55be-4f9a-acb3-335b8a15b9dd"


def test_missing_transcript_is_an_error_not_a_crash(tmp_path):
    assert claude_report(tmp_path / "absent.jsonl").status == "error"
    assert codex_report(tmp_path / "absent.jsonl").status == "error"


def test_codex_usage_and_recovered_errors():
    report = codex_report(TRANSCRIPTS / "codex-completed.jsonl")
    assert report.status == "completed"  # the "Reconnecting..." error event was recovered from
    assert report.session_id == "0199a213-81c0-7800-8aa1-bbab2a035a53"
    assert report.usage == {"turns": 1, "input_tokens": 8120, "output_tokens": 212, "cache_read_input_tokens": 6400}


def test_codex_failed_turn_is_an_error(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"type":"thread.started","thread_id":"t"}\nnot json\n{"type":"turn.failed","error":{"message":"x"}}\n')
    assert codex_report(path).status == "error"


# --- the scripted endpoint ---------------------------------------------------------------


def test_example_scripts_load_and_bad_ones_name_the_turn(tmp_path):
    assert [t.get("tool") for t in load_script(SCRIPTS / "hello-solve.toml")] == ["Bash", "Write", None]
    assert len(load_script(SCRIPTS / "hello-give-up.json")) == 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"text": "ok"}, {"tool": "Write", "input": {}, "usage": {"input_tokens": "many"}}]))
    with pytest.raises(ScriptError, match="turn 2: `usage`"):
        load_script(bad)
    bad.write_text(json.dumps([{"txt": "typo"}]))
    with pytest.raises(ScriptError, match="unknown field"):
        load_script(bad)


def _post(port: int, body: dict, route: str = "/v1/messages?beta=true") -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{route}", json.dumps(body).encode(),
                                     {"content-type": "application/json", "x-api-key": "k"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def test_endpoint_streams_tool_calls_then_text_and_side_calls_do_not_advance(capsys):
    server = serve(load_script(SCRIPTS / "hello-solve.toml"), 0)
    port = server.server_address[1]
    try:
        tools = [{"name": "Write"}]
        sse = _post(port, {"stream": True, "tools": tools, "messages": [{"role": "user", "content": "hi"}]}).decode()
        names = [line[len("event: "):] for line in sse.splitlines() if line.startswith("event: ")]
        assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
        data = [json.loads(line[len("data: "):]) for line in sse.splitlines() if line.startswith("data: ")]
        tool_start = next(d for d in data if d["type"] == "content_block_start" and d["content_block"]["type"] == "tool_use")
        assert tool_start["content_block"]["name"] == "Bash"
        deltas = [d["delta"] for d in data if d["type"] == "content_block_delta"]
        assert json.loads(deltas[-1]["partial_json"])["command"] == "ls -la /workspace"
        assert data[0]["message"]["usage"]["input_tokens"] == 1200 and data[-2]["usage"]["output_tokens"] == 40
        side = json.loads(_post(port, {"messages": [{"role": "user", "content": "title?"}]}))
        assert side["content"] == [{"type": "text", "text": "OK"}]
        history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"},
                   {"role": "user", "content": "r"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "r"}]
        final = json.loads(_post(port, {"tools": tools, "messages": history}))
        assert final["stop_reason"] == "end_turn" and "hello.txt" in final["content"][0]["text"]
    finally:
        server.shutdown()
    assert '"x-api-key"' not in capsys.readouterr().out  # the log never holds headers


def _sse(payload: bytes) -> list[dict]:
    return [json.loads(line[len("data: "):]) for line in payload.decode().splitlines() if line.startswith("data: ")]


def test_endpoint_speaks_the_responses_api_on_its_path(capsys):
    server = serve(load_script(SCRIPTS / "hello-solve-codex.toml"), 0)
    port = server.server_address[1]
    try:
        tools = [{"type": "function", "name": "exec_command"}]
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        data = _sse(_post(port, {"stream": True, "tools": tools, "input": [user]}, "/v1/responses"))
        names = [d["type"] for d in data]
        assert names[0] == "response.created" and names[-1] == "response.completed"
        assert [d["sequence_number"] for d in data] == list(range(len(data)))
        done = [d["item"] for d in data if d["type"] == "response.output_item.done"]
        assert [item["type"] for item in done] == ["message", "function_call"]
        assert done[1]["name"] == "exec_command" and json.loads(done[1]["arguments"]) == {"cmd": "ls -la /workspace"}
        assert data[-1]["response"]["usage"]["input_tokens"] == 1200
        # Two calls already made (each with its output): the third, final turn, with cached tokens.
        calls = [{"type": "function_call", "call_id": f"c{n}", "name": "exec_command", "arguments": "{}"} for n in (1, 2)]
        outputs = [{"type": "function_call_output", "call_id": f"c{n}", "output": "ok"} for n in (1, 2)]
        final = json.loads(_post(port, {"tools": tools, "input": [user, calls[0], outputs[0], calls[1], outputs[1]]},
                                 "/v1/responses"))
        assert [item["type"] for item in final["output"]] == ["message"]
        assert "hello.txt" in final["output"][0]["content"][0]["text"]
        assert final["usage"]["input_tokens_details"]["cached_tokens"] == 1400
        side = json.loads(_post(port, {"input": [user]}, "/v1/responses"))
        assert side["output"][0]["content"][0]["text"] == "OK"
    finally:
        server.shutdown()
    log = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [entry["turn"] for entry in log] == [1, 3, None]
    assert log[1]["usage"] == {"input_tokens": 1700, "output_tokens": 25, "cache_read_input_tokens": 1400}


# --- redaction ---------------------------------------------------------------------------


def test_redaction_reaches_text_json_and_tar_members(tmp_path):
    secret = 'sk-ant-test-PLANTED-"quoted"-0123456789'
    (tmp_path / "log.txt").write_text(f"key={secret}\n")
    (tmp_path / "t.jsonl").write_text(json.dumps({"out": secret}) + "\n")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in ((f"workspace/{secret[:20]}.txt", secret.encode() * 3), ("workspace/ok.txt", b"fine\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (tmp_path / "workspace.tar").write_bytes(buffer.getvalue())
    (tmp_path / "clean.txt").write_text("nothing here\n")
    changed = redact_tree(tmp_path, {"ANTHROPIC_API_KEY": secret, "SHORT_PREFIX": secret[:20]})
    assert {p.name for p in changed} == {"log.txt", "t.jsonl", "workspace.tar"}
    for path in tmp_path.iterdir():
        assert secret[:20].encode() not in path.read_bytes()
    assert "[REDACTED:ANTHROPIC_API_KEY]" in (tmp_path / "log.txt").read_text()
    assert json.loads((tmp_path / "t.jsonl").read_text())["out"] == "[REDACTED:ANTHROPIC_API_KEY]"
    with tarfile.open(tmp_path / "workspace.tar") as archive:
        members = {m.name: archive.extractfile(m).read() for m in archive}
    assert members["workspace/[REDACTED:SHORT_PREFIX].txt"] == b"[REDACTED:ANTHROPIC_API_KEY]" * 3
    assert members["workspace/ok.txt"] == b"fine\n"


# --- adapters ----------------------------------------------------------------------------


def test_claude_code_needs_credentials_or_a_script(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY.*--agent oracle"):
        make_agent("claude-code")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "short")
    with pytest.raises(UsageError, match="shorter than 8"):
        make_agent("claude-code")


def test_claude_code_plans(monkeypatch):
    from bench.cases import load_case
    from bench.paths import Project

    case = load_case(Project(FIXTURES.parents[1]), "hello")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    real = make_agent("claude-code", options=AgentOptions(model="claude-sonnet-4-5", max_turns=7)).plan(case, "default")
    assert real.network == "none" and real.endpoint is None and real.proxy is not None
    assert real.secrets == {} and real.env["ANTHROPIC_API_KEY"] == "bench-proxy-placeholder"
    assert real.redactions() == {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}
    for flag in ("--max-turns 7", "--model claude-sonnet-4-5", "--dangerously-skip-permissions",
                 "--output-format stream-json --verbose"):
        assert flag in real.command[-1]
    scripted = make_agent("claude-code", options=AgentOptions(model_script=SCRIPTS / "hello-solve.toml"))
    plan = scripted.plan(case, "default")  # the key is still set: a scripted run must not hand it on
    assert plan.endpoint is not None and plan.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8765"
    assert plan.secrets == {} and plan.env["ANTHROPIC_API_KEY"] == "bench-scripted-endpoint"
    assert f"--max-turns {case.spec.limits.max_turns}" in plan.command[-1]
    assert scripted.record().model.startswith("scripted:sha256:")


def test_codex_plan_and_refusals(monkeypatch):
    from bench.cases import load_case
    from bench.paths import Project

    case = load_case(Project(FIXTURES.parents[1]), "hello")
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UsageError, match="CODEX_API_KEY.*--model-script"):
        make_agent("codex")
    scripted = make_agent("codex", options=AgentOptions(model_script=SCRIPTS / "hello-solve-codex.toml"))
    offline = scripted.plan(case, "default")
    assert offline.network == "none" and offline.endpoint is not None and offline.secrets == {}
    assert offline.env["CODEX_API_KEY"] == "bench-scripted-endpoint"
    for flag in ("-m bench-scripted", "model_provider=\"bench\"", 'base_url = "http://127.0.0.1:8765/v1"',
                 'wire_api = "responses"', 'env_key = "CODEX_API_KEY"'):
        assert flag in offline.command[-1]
    assert scripted.record().model.startswith("scripted:sha256:")
    with pytest.raises(UsageError, match="--model-script"):
        make_agent("codex", options=AgentOptions(model_script=SCRIPTS / "absent.toml"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    plan = make_agent("codex", options=AgentOptions(model="gpt-5")).plan(case, "default")
    assert plan.secrets == {} and plan.env["CODEX_API_KEY"] == "bench-proxy-placeholder"
    assert plan.proxy.upstream == "https://api.openai.com/v1" and plan.network == "none" and plan.endpoint is None
    assert plan.redactions() == {"OPENAI_API_KEY": "sk-test-0123456789"}
    for flag in ("exec --json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-m gpt-5"):
        assert flag in plan.command[-1]


def test_command_agent_env_and_network(monkeypatch):
    monkeypatch.delenv("BENCH_TEST_TOKEN", raising=False)
    with pytest.raises(UsageError, match="BENCH_TEST_TOKEN"):
        make_agent("command", "true", AgentOptions(env=["BENCH_TEST_TOKEN"]))
    monkeypatch.setenv("BENCH_TEST_TOKEN", "token-0123456789")
    agent = make_agent("command", "true", AgentOptions(env=["BENCH_TEST_TOKEN"], network=True))
    plan = agent.plan(None, "default")
    assert plan.secrets == {"BENCH_TEST_TOKEN": "token-0123456789"} and plan.network == "bridge"
    assert make_agent("command", "true").plan(None, "default").network == "none"

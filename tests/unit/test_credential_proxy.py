"""The credential proxy in-process: a recording provider, the injector on a Unix socket, the forwarder on TCP.

The chain is the one the sidecars run (agent -> forwarder -> injector -> provider), only
without containers, so header handling, path joining, refusals and streaming are seen
on the wire the provider receives.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bench.agents.base import PLACEHOLDER
from bench.agents.claude_code import ClaudeCodeAgent
from bench.agents.codex import CodexAgent
from bench.cases import load_case
from bench.credential_proxy import ProxyError, Upstream, forward, inject, parse_upstream, target
from bench.errors import UsageError
from bench.model_endpoint import serve
from bench.paths import Project

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-test-UNIT-0123456789abcdef"


class Recorder(BaseHTTPRequestHandler):
    """A provider that answers with what it received; ``/stream`` sends SSE in two halves."""

    protocol_version = "HTTP/1.1"
    seen: list[dict] = []
    release = threading.Event()

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.seen.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
        if self.path.endswith("/stream"):
            self._stream()
            return
        payload = json.dumps({"path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST

    def _stream(self) -> None:
        """The first event, then nothing until the test has seen it through the proxy."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in (b"event: one\ndata: {}\n\n", b"event: two\ndata: {}\n\n"):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
            self.release.wait(10)
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture()
def provider():
    handler = type("Recording", (Recorder,), {"seen": [], "release": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield handler, server.server_address[1]
    handler.release.set()
    server.shutdown()


def chain(upstream: str, auth: str = "x-api-key") -> int:
    """Injector and forwarder for ``upstream``; returns the forwarder's port (the agent's view)."""
    socket_path = str(Path(tempfile.mkdtemp(prefix="bp-")) / "injector.sock")
    inject(socket_path, parse_upstream(upstream), auth, KEY)
    return forward(0, socket_path).server_address[1]


def post(port: int, path: str, headers: dict[str, str] | None = None, body: bytes = b"{}"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", path, body=body, headers=headers or {})
    return connection.getresponse()


def test_the_credential_replaces_whatever_the_agent_sent(provider):
    handler, port = provider
    agent = chain(f"http://127.0.0.1:{port}")
    answer = post(agent, "/v1/messages", {"x-api-key": PLACEHOLDER, "authorization": f"Bearer {PLACEHOLDER}",
                                          "anthropic-version": "2023-06-01"}, b'{"hi": 1}')
    assert answer.status == 200 and json.loads(answer.read()) == {"path": "/v1/messages"}
    seen = {k.lower(): v for k, v in handler.seen[-1]["headers"].items()}
    assert seen["x-api-key"] == KEY and "authorization" not in seen
    assert seen["anthropic-version"] == "2023-06-01" and seen["host"] == f"127.0.0.1:{port}"
    assert handler.seen[-1]["body"] == b'{"hi": 1}'


def test_a_bearer_credential_goes_in_authorization(provider):
    handler, port = provider
    agent = chain(f"http://127.0.0.1:{port}/v1", auth="bearer")
    post(agent, "/responses", {"authorization": f"Bearer {PLACEHOLDER}"}).read()
    seen = {k.lower(): v for k, v in handler.seen[-1]["headers"].items()}
    assert seen["authorization"] == f"Bearer {KEY}" and "x-api-key" not in seen


def test_the_request_path_is_appended_to_the_provider_base_path(provider):
    handler, port = provider
    agent = chain(f"http://127.0.0.1:{port}/openai/v1/")
    assert json.loads(post(agent, "/responses?stream=true").read()) == {"path": "/openai/v1/responses?stream=true"}
    base = Upstream("https", "api.example", 443, "/v1")
    assert target(base, "/models") == "/v1/models"
    assert target(Upstream("https", "api.example", 443, ""), "/v1/messages?beta=true") == "/v1/messages?beta=true"


@pytest.mark.parametrize("request_line", ["GET http://evil.example/steal HTTP/1.1", "GET https://evil.example/ HTTP/1.1",
                                          "CONNECT evil.example:443 HTTP/1.1", "OPTIONS * HTTP/1.1"])
def test_requests_naming_another_host_are_refused(provider, request_line):
    handler, port = provider
    agent = chain(f"http://127.0.0.1:{port}")
    with socket.create_connection(("127.0.0.1", agent), timeout=10) as raw:
        raw.sendall(f"{request_line}\r\nHost: evil.example\r\nContent-Length: 0\r\n\r\n".encode())
        answer = raw.makefile("rb").readline()
    assert answer.split()[1] in (b"400", b"405"), answer
    assert handler.seen == []


def test_server_sent_events_stream_through_unbuffered(provider):
    handler, port = provider
    answer = post(chain(f"http://127.0.0.1:{port}"), "/v1/stream")
    assert answer.status == 200 and answer.getheader("content-type") == "text/event-stream"
    first = answer.read1(1024)  # arrives while the provider still holds back the second event
    assert first == b"event: one\ndata: {}\n\n"
    handler.release.set()
    assert answer.read() == b"event: two\ndata: {}\n\n"


def test_the_log_names_requests_never_headers_or_bodies(provider, capsys):
    handler, port = provider
    post(chain(f"http://127.0.0.1:{port}"), "/v1/messages?beta=true", {"x-api-key": PLACEHOLDER},
         b'{"secret-body": 1}').read()
    out, deadline = "", time.monotonic() + 5
    while '"/v1/messages"' not in out and time.monotonic() < deadline:  # logged just after the answer is sent
        out += capsys.readouterr().out
        time.sleep(0.05)
    lines = [json.loads(line) for line in out.splitlines() if '"/v1/messages"' in line]
    assert [(e["method"], e["path"], e["status"], e["bytes"]) for e in lines] == [("POST", "/v1/messages", 200, 34)]
    text = out
    assert KEY not in text and PLACEHOLDER not in text and "secret-body" not in text


def test_an_unreachable_provider_is_a_502_not_a_hang():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    answer = post(chain(f"http://127.0.0.1:{port}"), "/v1/messages")
    assert answer.status == 502 and b"provider unreachable" in answer.read()


def test_the_scripted_endpoint_can_require_a_key():
    server = serve([{"text": "Done."}], 0, key_sha256=hashlib.sha256(KEY.encode()).hexdigest())
    port = server.server_address[1]
    try:
        assert post(port, "/v1/messages", {"x-api-key": PLACEHOLDER}).status == 401
        assert post(port, "/v1/messages", {"authorization": f"Bearer {KEY}"}).status == 200
        assert post(chain(f"http://127.0.0.1:{port}"), "/v1/messages", {"x-api-key": PLACEHOLDER}).status == 200
    finally:
        server.shutdown()


@pytest.mark.parametrize("url", ["ftp://host/", "https://", "https://user:pw@host/", "https://host/?q=1",
                                 "https://host:99999/"])
def test_malformed_provider_urls_are_refused(url):
    with pytest.raises(ProxyError):
        parse_upstream(url)


def test_claude_code_holds_only_a_placeholder():
    plan = ClaudeCodeAgent(environ={"ANTHROPIC_API_KEY": KEY}).plan(load_case(Project(ROOT), "hello"), "default")
    assert KEY not in json.dumps(plan.env) and plan.secrets == {}
    assert plan.env["ANTHROPIC_API_KEY"] == PLACEHOLDER and plan.env["ANTHROPIC_BASE_URL"] == plan.proxy.url
    assert (plan.proxy.upstream, plan.proxy.auth) == ("https://api.anthropic.com", "x-api-key")
    assert plan.redactions() == {"ANTHROPIC_API_KEY": KEY} and plan.network == "none"


def test_an_oauth_token_is_injected_as_bearer_to_the_users_base_url():
    environ = {"CLAUDE_CODE_OAUTH_TOKEN": KEY, "ANTHROPIC_BASE_URL": "https://gateway.example/anthropic"}
    plan = ClaudeCodeAgent(environ=environ).plan(load_case(Project(ROOT), "hello"), "default")
    assert plan.env["CLAUDE_CODE_OAUTH_TOKEN"] == PLACEHOLDER and "ANTHROPIC_API_KEY" not in plan.env
    assert (plan.proxy.upstream, plan.proxy.auth) == ("https://gateway.example/anthropic", "bearer")


def test_codex_holds_only_a_placeholder():
    plan = CodexAgent(environ={"OPENAI_API_KEY": KEY}).plan(load_case(Project(ROOT), "hello"), "default")
    assert KEY not in json.dumps(plan.env) + json.dumps(plan.command) and plan.secrets == {}
    assert plan.env["CODEX_API_KEY"] == PLACEHOLDER
    assert f'base_url = "{plan.proxy.url}"' in plan.command[-1]
    assert (plan.proxy.upstream, plan.proxy.auth, plan.proxy.variable) == ("https://api.openai.com/v1", "bearer",
                                                                           "OPENAI_API_KEY")


def test_a_malformed_base_url_stops_the_run_before_anything_is_built():
    with pytest.raises(UsageError, match="OPENAI_BASE_URL"):
        CodexAgent(environ={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "api.openai.com/v1"})

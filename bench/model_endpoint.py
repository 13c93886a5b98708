"""A scripted model endpoint: the Anthropic Messages API and the OpenAI Responses API,
answered from one script file.

Why it exists: to watch a *real* agent CLI run a real case offline, with nothing
mocked inside the agent. The harness runs this server in a sidecar container with
network ``none``; the agent's container joins the sidecar's network namespace, so the
CLI reaches ``http://127.0.0.1:PORT`` on their shared loopback and has no route out.

It runs inside the container from the harness wheel on PYTHONPATH (like the gate
runner), so it uses the standard library only.

A script is JSON or TOML: a list of turns (or a table ``turns = [...]``). Each turn is
either a tool call or a final text::

    [[turns]]                         # a tool call; the CLI runs it and asks again
    text = "Writing the file."        # optional text before the call
    tool = "Write"
    input = { file_path = "/workspace/hello.txt", content = "Hello, world!\\n" }
    usage = { input_tokens = 120, output_tokens = 30 }   # optional, reported as-is

    [[turns]]                         # a final answer ends the run
    text = "Done."
    delay_s = 0                       # optional: wait before answering (a hung model)

Two dialects, chosen by the request path: ``/v1/messages`` (Anthropic Messages, for
Claude Code) and ``/v1/responses`` (OpenAI Responses, for Codex). A turn means the same
in both; in the Responses dialect ``tool`` is the function's name and ``input`` its JSON
arguments (Codex's shell tool: ``tool = "exec_command"``, ``input = { cmd = "..." }``),
and usage is reported as ``input_tokens``, ``output_tokens`` and
``input_tokens_details.cached_tokens`` (the script's ``cache_read_input_tokens``; the
Responses API has no cache-creation count).

Which turn answers a request is decided by the request alone: the number of assistant
messages (Messages) or function calls (Responses) already in its conversation.
Retries therefore get the same answer, and no state is kept. Requests without tools
(the CLI's side calls: titles, summaries, quota probes) get a short text that does not
advance the script. Once the script is exhausted, the last turn's text (or "Done.") is
repeated as a final answer. ``judge = true`` turns are never an agent's: a request without
tools (a judge's, bench/judge_client.py) gets the first whose ``match`` (default: any) is in its body.

With ``--require-key-sha256 HEX`` it plays a provider that checks credentials: a request
whose ``x-api-key`` or ``Authorization: Bearer`` value does not hash (SHA-256) to HEX is
answered 401. Tests use it behind the credential proxy, to prove the proxy injected the
real key without the key itself ever being written into the test's files.

Each request is logged as one JSON line on stdout (path, turn, usage reported, in the
Messages API's key names for both dialects) and nothing else: never headers, never
bodies, so no credential is printed (``--log-prompts``: a judge's prompt too, no key).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
import threading
import time
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

READY = "BENCH-ENDPOINT-READY"
DEFAULT_PORT = 8765
MODEL = "claude-scripted"
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
SIDE_USAGE = {"input_tokens": 1, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
TURN_KEYS = {"text", "tool", "input", "usage", "delay_s", "judge", "match"}
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")


class ScriptError(ValueError):
    """A script that cannot be served; the message names the turn and the field."""


def load_script(path: Path) -> list[dict]:
    """Parse and validate a script file (``.toml`` as TOML, anything else as JSON)."""
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode()) if path.suffix == ".toml" else json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ScriptError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list) or not turns:
        raise ScriptError(f"{path}: expected a non-empty list of turns (or a table with `turns = [...]`)")
    return [_check_turn(path, n, turn) for n, turn in enumerate(turns, 1)]


def _check_turn(path: Path, n: int, turn: object) -> dict:
    where = f"{path}: turn {n}"
    if not isinstance(turn, dict):
        raise ScriptError(f"{where}: expected a table, got {turn!r}")
    if unknown := set(turn) - TURN_KEYS:
        raise ScriptError(f"{where}: unknown field(s) {sorted(unknown)}; known: {sorted(TURN_KEYS)}")
    if "tool" not in turn and "text" not in turn:
        raise ScriptError(f"{where}: give `tool` (+ `input`) for a tool call, or `text` for a final answer")
    if turn.get("judge") and ("tool" in turn or not isinstance(turn.get("text"), str)):
        raise ScriptError(f"{where}: a judge turn answers with `text` (the judge's JSON object), never a tool")
    if "tool" in turn and not isinstance(turn.get("input", {}), dict):
        raise ScriptError(f"{where}: `input` must be a table of the tool's arguments")
    usage = turn.get("usage", {})
    if not isinstance(usage, dict) or any(k not in USAGE_KEYS or not isinstance(v, int) for k, v in usage.items()):
        raise ScriptError(f"{where}: `usage` takes integer {', '.join(USAGE_KEYS)}")
    return turn


# --- answering -----------------------------------------------------------------------


def choose(script: list[dict], request: dict) -> tuple[int | None, dict]:
    """(turn number or None for a side call, the turn to answer with), for a Messages request."""
    if not request.get("tools"):
        judged = (n for n, t in enumerate(script, 1) if t.get("judge") and t.get("match", "") in json.dumps(request))
        return next(((n, script[n - 1]) for n in judged), (None, {"text": "OK", "usage": SIDE_USAGE}))
    agent = [turn for turn in script if not turn.get("judge")]
    return _pick(agent, sum(1 for m in request.get("messages", []) if m.get("role") == "assistant"))


def choose_response(script: list[dict], request: dict) -> tuple[int | None, dict]:
    """The same choice for a Responses request, which counts the calls already made.

    Function calls rather than assistant messages: a turn with text before its call
    leaves two items in the history, but always exactly one call.
    """
    if not request.get("tools"):
        return None, {"text": "OK", "usage": SIDE_USAGE}
    items = request.get("input") if isinstance(request.get("input"), list) else []
    calls = sum(1 for item in items if isinstance(item, dict) and item.get("type") in CALL_ITEMS)
    return _pick([turn for turn in script if not turn.get("judge")], calls)


def _pick(script: list[dict], done: int) -> tuple[int, dict]:
    """The next turn after ``done`` answered ones; past the end, a final answer repeating the last text."""
    if done < len(script):
        return done + 1, script[done]
    last = script[-1] if script else {}  # a judge's script has no agent turns
    return len(script) + 1, {"text": last.get("text") or "Done.", "usage": last.get("usage", {})}


def blocks(turn: dict, turn_no: int | None) -> list[dict]:
    """The content blocks of an answer: optional text, then the tool call if any."""
    content = [{"type": "text", "text": turn["text"]}] if turn.get("text") else []
    if "tool" in turn:
        content.append({"type": "tool_use", "id": f"toolu_bench_{turn_no or 0:04d}", "name": turn["tool"],
                        "input": turn.get("input", {})})
    return content


def usage_of(turn: dict) -> dict:
    return {**DEFAULT_USAGE, **turn.get("usage", {})}


def message(turn: dict, turn_no: int | None, model: str) -> dict:
    """A whole (non-streaming) Messages API response."""
    content = blocks(turn, turn_no)
    stop = "tool_use" if "tool" in turn else "end_turn"
    return {"id": f"msg_bench_{turn_no or 0:04d}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage_of(turn)}


def events(turn: dict, turn_no: int | None, model: str) -> list[tuple[str, dict]]:
    """The SSE events of a streamed response, in the Messages API's order.

    Input and cache tokens are announced in message_start, output tokens in
    message_delta, as the real API does; a client that sums them gets usage_of(turn).
    """
    whole = message(turn, turn_no, model)
    usage = whole["usage"]
    start_usage = {**usage, "output_tokens": 0}
    out = [("message_start", {"type": "message_start",
                              "message": {**whole, "content": [], "stop_reason": None, "usage": start_usage}})]
    for index, block in enumerate(whole["content"]):
        out += _block_events(index, block)
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                                  "usage": {"output_tokens": usage["output_tokens"]}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def _block_events(index: int, block: dict) -> list[tuple[str, dict]]:
    if block["type"] == "text":
        first = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        first = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": first}),
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


# --- the Responses dialect -------------------------------------------------------------


def output_items(turn: dict, turn_no: int | None) -> list[dict]:
    """The output items of a Responses answer: optional message, then the function call if any."""
    n = turn_no or 0
    items = []
    if turn.get("text"):
        items.append({"type": "message", "id": f"msg_bench_{n:04d}", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": turn["text"], "annotations": []}]})
    if "tool" in turn:
        items.append({"type": "function_call", "id": f"fc_bench_{n:04d}", "call_id": f"call_bench_{n:04d}",
                      "name": turn["tool"], "arguments": json.dumps(turn.get("input", {})), "status": "completed"})
    return items


def response_usage(turn: dict) -> dict:
    """usage_of(turn) in the Responses API's shape (cached tokens are part of input_tokens there too)."""
    usage = usage_of(turn)
    return {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
            "input_tokens_details": {"cached_tokens": usage["cache_read_input_tokens"]},
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"]}


def logged_usage(turn: dict) -> dict:
    """What a Responses answer reported, in the Messages key names the request log uses."""
    usage = usage_of(turn)
    return {key: usage[key] for key in ("input_tokens", "output_tokens", "cache_read_input_tokens")}


def response(turn: dict, turn_no: int | None, model: str) -> dict:
    """A whole (non-streaming) Responses API response."""
    return {"id": f"resp_bench_{turn_no or 0:04d}", "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": model, "output": output_items(turn, turn_no),
            "usage": response_usage(turn)}


def response_events(turn: dict, turn_no: int | None, model: str) -> list[tuple[str, dict]]:
    """The SSE events of a streamed Responses answer, numbered as the real API does.

    Codex builds its history from ``response.output_item.done`` and reads usage from
    ``response.completed``; the added/delta events are there for clients that stream.
    """
    whole = response(turn, turn_no, model)
    out = [("response.created", {"response": {**whole, "status": "in_progress", "output": [], "usage": None}})]
    for index, item in enumerate(whole["output"]):
        out += _item_events(index, item)
    out.append(("response.completed", {"response": whole}))
    return [(name, {"type": name, "sequence_number": seq, **data}) for seq, (name, data) in enumerate(out)]


def _item_events(index: int, item: dict) -> list[tuple[str, dict]]:
    """One output item's events: added (empty), its text or arguments streamed whole, done."""
    at = {"item_id": item["id"], "output_index": index}
    if item["type"] == "function_call":
        middle = [("response.function_call_arguments.delta", {**at, "delta": item["arguments"]}),
                  ("response.function_call_arguments.done", {**at, "arguments": item["arguments"]})]
        first = {**item, "arguments": "", "status": "in_progress"}
    else:
        part, text = item["content"][0], item["content"][0]["text"]
        at_part = {**at, "content_index": 0}
        middle = [("response.content_part.added", {**at_part, "part": {**part, "text": ""}}),
                  ("response.output_text.delta", {**at_part, "delta": text}),
                  ("response.output_text.done", {**at_part, "text": text}),
                  ("response.content_part.done", {**at_part, "part": part})]
        first = {**item, "content": [], "status": "in_progress"}
    return [("response.output_item.added", {"output_index": index, "item": first}), *middle,
            ("response.output_item.done", {"output_index": index, "item": item})]


# --- the server ----------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    script: list[dict] = []
    key_sha256: str | None = None  # answer 401 unless the request's key hashes to this
    log_prompts = False  # log a judge request's system prompt and messages
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def _refused_key(self) -> bool:
        """Answer 401 (and say so) when a key is required and this request lacks it."""
        if self.key_sha256 is None:
            return False
        bearer = self.headers.get("authorization", "")
        key = self.headers.get("x-api-key") or (bearer[7:] if bearer.lower().startswith("bearer ") else "")
        if hmac.compare_digest(hashlib.sha256(key.encode()).hexdigest(), self.key_sha256.lower()):
            return False
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._log({"method": self.command, "path": self.path.split("?")[0], "unauthorized": True})
        self._json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
        return True

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default access log: it would print request lines, never needed."""

    def do_HEAD(self) -> None:
        self._json(200, {}, body=False)

    def do_GET(self) -> None:
        if self._refused_key():
            return
        self._log({"method": "GET", "path": self.path})
        if self.path.split("?")[0].rstrip("/") == "/v1/models":
            self._json(200, {"data": [{"id": MODEL, "type": "model", "display_name": MODEL}], "has_more": False})
        else:
            self._json(200, {})

    def do_POST(self) -> None:
        if self._refused_key():
            return
        length = int(self.headers.get("content-length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            request = {}
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": DEFAULT_USAGE["input_tokens"]})
        elif path.endswith("/v1/messages"):
            self._answer(request, "/v1/messages")
        elif path.endswith("/v1/responses"):
            self._answer(request, "/v1/responses")
        else:
            self._log({"method": "POST", "path": path, "unknown": True})
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}})

    def _answer(self, request: dict, route: str) -> None:
        """Answer in the route's dialect; the turn chosen and the usage are the same either way."""
        responses = route == "/v1/responses"
        turn_no, turn = (choose_response if responses else choose)(self.script, request)
        model = request.get("model") or MODEL
        prompt = {key: request.get(key) for key in ("system", "messages") if turn.get("judge") and self.log_prompts}
        self._log({"method": "POST", "path": route, "turn": turn_no, "stream": bool(request.get("stream")),
                   "kind": "judge" if turn.get("judge") else "side" if turn_no is None else "main",
                   "tool": turn.get("tool"), "usage": logged_usage(turn) if responses else usage_of(turn), **prompt})
        time.sleep(float(turn.get("delay_s", 0)))
        if not request.get("stream"):
            self._json(200, (response if responses else message)(turn, turn_no, model))
            return
        stream = (response_events if responses else events)(turn, turn_no, model)
        payload = b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in stream)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, status: int, data: dict, body: bool = True) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _log(self, entry: dict) -> None:
        with self.lock:
            print(json.dumps({"t": round(time.time(), 3), **entry}), flush=True)


def serve(script: list[dict], port: int, host: str = "127.0.0.1", key_sha256: str | None = None,
          log_prompts: bool = False) -> ThreadingHTTPServer:
    """A started server (in a daemon thread) answering from ``script``; for tests and main."""
    handler = type("ScriptedHandler", (Handler,), dict(script=script, key_sha256=key_sha256, log_prompts=log_prompts))
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m bench.model_endpoint", description=__doc__.split("\n")[0])
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (a test's fake provider: 0.0.0.0)")
    parser.add_argument("--require-key-sha256", metavar="HEX", help="answer 401 unless the key hashes to HEX")
    parser.add_argument("--log-prompts", action="store_true", help="log judge requests' system prompt and messages")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except (ScriptError, OSError) as exc:
        print(f"model endpoint: {exc}", file=sys.stderr, flush=True)
        return 2
    server = serve(script, args.port, args.host, args.require_key_sha256, args.log_prompts)
    print(f"{READY} port={server.server_address[1]} turns={len(script)}", flush=True)
    return serve_until_stopped()


def serve_until_stopped() -> int:
    """A sidecar's main thread after its ready line: its servers run on threads until the container goes."""
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

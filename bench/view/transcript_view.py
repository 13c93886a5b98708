"""A trial's transcript as a conversation a person reads: messages, and tool calls folded with their results.

Why a neutral list of entries rather than a template per CLI: Claude Code's stream-json and Codex's
JSONL (bench/transcripts.py describes both) say the same things in different shapes; turning both
into ``Entry`` objects here keeps the page's template one loop, and a third CLI is one more reader.

Every string here is the agent's own output, hostile input: it is kept as text and escaped by the
template (autoescape), never marked safe. Long texts are clipped with a note saying how much was
left out, so a 50 MB tool output cannot make the page unusable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..transcripts import events

MESSAGE_MAX_CHARS = 20_000
TOOL_MAX_CHARS = 6_000
PLAIN_MAX_BYTES = 400_000
CODEX_EVENTS = ("thread.started", "turn.started", "turn.completed", "turn.failed", "item.completed")


@dataclass
class Entry:
    """One thing shown: a message (user, assistant, thinking, note) or a tool call with its result."""

    kind: str  # message | tool | note
    role: str = ""
    text: str = ""
    clipped: str = ""  # the note saying what was left out, or ""
    name: str = ""  # a tool's name
    input: str = ""
    output: str = ""
    output_clipped: str = ""
    is_error: bool = False
    call_id: str = ""


@dataclass
class Transcript:
    """What the page shows: the entries of a JSON-lines transcript, or a plain log's text."""

    format: str  # claude-code | codex | plain | none
    entries: list[Entry] = field(default_factory=list)
    plain: str = ""
    plain_clipped: str = ""
    source: str = ""


def clip(text: str, limit: int) -> tuple[str, str]:
    """The text cut to ``limit`` characters, and a note saying how much was cut ("" when nothing)."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], f"… {len(text) - limit:,} more characters not shown ({len(text):,} in all)"


def load(trial_dir: Path) -> Transcript:
    """The trial's transcript: transcript.jsonl read as a conversation, else transcript.log as text."""
    jsonl, log = trial_dir / "transcript.jsonl", trial_dir / "transcript.log"
    if jsonl.is_file():
        found = list(events(jsonl))
        if any(event.get("type") in CODEX_EVENTS for event in found):
            return Transcript("codex", codex_entries(found), source=jsonl.name)
        return Transcript("claude-code", claude_entries(found), source=jsonl.name)
    if log.is_file():
        with open(log, "rb") as handle:
            data = handle.read(PLAIN_MAX_BYTES + 1)
        note = f"… only the first {PLAIN_MAX_BYTES:,} bytes are shown" if len(data) > PLAIN_MAX_BYTES else ""
        return Transcript("plain", plain=data[:PLAIN_MAX_BYTES].decode("utf-8", "replace"), plain_clipped=note,
                          source=log.name)
    return Transcript("none")


def _message(role: str, text: str) -> Entry:
    shown, note = clip(text, MESSAGE_MAX_CHARS)
    return Entry("message", role=role, text=shown, clipped=note)


def _tool(name: str, call_id: str, given: object) -> Entry:
    text = given if isinstance(given, str) else json.dumps(given, indent=2, ensure_ascii=False)
    shown, _ = clip(text, TOOL_MAX_CHARS)
    return Entry("tool", name=name, call_id=call_id, input=shown)


def _attach(entry: Entry, output: str, is_error: bool) -> None:
    entry.output, entry.output_clipped = clip(output, TOOL_MAX_CHARS)
    entry.is_error = is_error


# --- Claude Code stream-json ---------------------------------------------------------------


def claude_entries(found: list[dict]) -> list[Entry]:
    """system init -> a note; assistant text/thinking/tool_use blocks; user text and tool_result blocks,
    each result folded into the call it answers (by tool_use_id); the final result event -> a note."""
    entries: list[Entry] = []
    calls: dict[str, Entry] = {}
    for event in found:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            entries.append(Entry("note", text=f"session started: model {event.get('model', '?')}, "
                                 f"cwd {event.get('cwd', '?')}"))
        elif kind in ("assistant", "user"):
            content = (event.get("message") or {}).get("content")
            if isinstance(content, str):
                entries.append(_message(kind, content))
                continue
            for block in content if isinstance(content, list) else []:
                _claude_block(kind, block, entries, calls)
        elif kind == "result":
            entries.append(Entry("note", text=_claude_result(event)))
    return entries


def _claude_block(role: str, block: object, entries: list[Entry], calls: dict[str, Entry]) -> None:
    if not isinstance(block, dict):
        return
    kind = block.get("type")
    if kind == "text":
        entries.append(_message(role, str(block.get("text", ""))))
    elif kind == "thinking":
        entries.append(_message("thinking", str(block.get("thinking", ""))))
    elif kind == "tool_use":
        entry = _tool(str(block.get("name", "tool")), str(block.get("id", "")), block.get("input"))
        calls[entry.call_id] = entry
        entries.append(entry)
    elif kind == "tool_result":
        output = _result_text(block.get("content"))
        entry = calls.get(str(block.get("tool_use_id", "")))
        if entry is None:  # a result whose call is not in the transcript: shown on its own
            entry = _tool("result", str(block.get("tool_use_id", "")), "(call not in the transcript)")
            entries.append(entry)
        _attach(entry, output, bool(block.get("is_error")))


def _result_text(content: object) -> str:
    """A tool_result's content: a string, or a list of blocks whose text parts are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", f"[{b.get('type', '?')} block]")) for b in content if isinstance(b, dict))
    return "" if content is None else json.dumps(content)


def _claude_result(event: dict) -> str:
    parts = [f"run ended: {event.get('subtype', '?')}"]
    if event.get("num_turns") is not None:
        parts.append(f"{event['num_turns']} turns")
    if event.get("total_cost_usd") is not None:
        parts.append(f"${event['total_cost_usd']:.4g}" if isinstance(event["total_cost_usd"], (int, float))
                     else f"${event['total_cost_usd']}")
    return ", ".join(parts)


# --- Codex exec --json ---------------------------------------------------------------------


def codex_entries(found: list[dict]) -> list[Entry]:
    """Completed items: agent_message and reasoning as messages, command_execution and the rest as tool
    calls with their output; turn.failed and error events as notes (errors include recovered retries)."""
    entries: list[Entry] = []
    for event in found:
        kind = event.get("type")
        if kind == "thread.started":
            entries.append(Entry("note", text=f"session started: thread {event.get('thread_id', '?')}"))
        elif kind in ("turn.failed", "error"):
            error = event.get("error") if kind == "turn.failed" else event
            message = error.get("message") if isinstance(error, dict) else error
            entries.append(Entry("note", text=f"{kind}: {message}"))
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            entries.append(_codex_item(event["item"]))
    return entries


def _codex_item(item: dict) -> Entry:
    kind = item.get("type")
    if kind == "agent_message":
        return _message("assistant", str(item.get("text", "")))
    if kind == "reasoning":
        return _message("thinking", str(item.get("text", "")))
    if kind == "command_execution":
        entry = _tool("shell", str(item.get("id", "")), str(item.get("command", "")))
        exit_code = item.get("exit_code")
        _attach(entry, str(item.get("aggregated_output", "")) + f"\n[exit {exit_code}]", exit_code not in (0, None))
        return entry
    rest = {key: value for key, value in item.items() if key not in ("id", "type")}
    return _tool(str(kind or "item"), str(item.get("id", "")), rest)

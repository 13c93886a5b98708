"""What the agent did, step by step, from its stored JSON-lines transcript: commands, edits, tool output.

bench/transcripts.py reads a transcript's totals (status, usage); this module reads
its steps, for `bench metrics` (bench/authoring_metrics.py). Both formats the harness
records are read into one shape, in the order the agent asked for each step:

* Claude Code (``--output-format stream-json``): each ``tool_use`` block of an
  ``assistant`` event, paired by id with the ``tool_result`` of a later ``user`` event.
  ``Bash`` is a command that passed unless its result is an error (the CLI marks a
  nonzero exit ``is_error``); ``Write``, ``Edit``, ``MultiEdit`` and ``NotebookEdit``
  are edits, whose lines are those of the text written (``content``, ``new_string``,
  ``new_source``). An edit the CLI refused (an error result, or none: cut off) touched
  nothing and wrote no line.
* Codex (``codex exec --json``): ``item.completed`` items. ``command_execution`` is a
  command that passed when its ``exit_code`` is 0; ``file_change`` is an edit whose
  lines Codex does not report (``lines`` None).

Every tool result's text is kept (capped) for pattern searches. The transcript holds
what the agent's tools printed, so it is hostile input: anything that is not the shape
above is skipped, never trusted, and no text is longer than TEXT_MAX characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .transcripts import events

TEXT_MAX = 256 * 1024  # characters of one tool result kept for pattern searches
EDIT_TOOLS = {"Write": ("content",), "Edit": ("new_string",), "NotebookEdit": ("new_source",)}


@dataclass(frozen=True)
class Step:
    """One tool call and its outcome. kind: command (``text`` is the command line) or edit (``text`` the path)."""

    kind: str
    text: str
    ok: bool  # a command exited 0; an edit was applied
    output: str = ""  # the tool result's text, capped
    lines: int | None = None  # an edit's written lines (None: the format does not say)


@dataclass(frozen=True)
class Steps:
    format: str | None  # claude-code | codex | None (no event of either)
    steps: tuple[Step, ...]
    outputs: tuple[str, ...]  # every tool result's text, in order, capped


def read_steps(path: Path) -> Steps:
    """The steps of one transcript, in the order the agent asked for them."""
    calls: dict[str, tuple[int, dict]] = {}  # Claude tool_use id -> (order, block)
    replies: dict[str, dict] = {}
    codex: list[Step] = []
    outputs: list[str] = []
    kinds: set[str] = set()
    for event in events(path):
        kind = event.get("type")
        if kind in ("assistant", "user"):
            kinds.add("claude-code")
            for block in _blocks(event):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    calls.setdefault(block["id"], (len(calls), block))
                elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    replies[block["tool_use_id"]] = block
                    outputs.append(_text(block.get("content")))
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            kinds.add("codex")
            step = _codex_step(event["item"])
            if step is not None:
                codex.append(step)
                outputs.extend([step.output] if step.kind == "command" else [])
    claude = [_claude_step(block, replies.get(call_id)) for call_id, (_, block) in sorted(calls.items(),
                                                                                       key=lambda item: item[1][0])]
    steps = [step for step in claude if step is not None] + codex
    return Steps("+".join(sorted(kinds)) or None, tuple(steps), tuple(outputs))


def _blocks(event: dict) -> list[dict]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _text(content: object) -> str:
    """A tool result's text: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content[:TEXT_MAX]
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(parts)[:TEXT_MAX]
    return ""


def count_lines(text: str) -> int:
    """Lines of a written text: a last line without its newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _claude_step(call: dict, reply: dict | None) -> Step | None:
    name, given = call.get("name"), call.get("input")
    given = given if isinstance(given, dict) else {}
    ok = reply is not None and reply.get("is_error") is not True
    output = _text(reply.get("content")) if reply else ""
    if name == "Bash" and isinstance(given.get("command"), str):
        return Step("command", given["command"], ok, output)
    if name == "MultiEdit":
        edits = given.get("edits") if isinstance(given.get("edits"), list) else []
        written = [e.get("new_string") for e in edits if isinstance(e, dict) and isinstance(e.get("new_string"), str)]
        return Step("edit", str(given.get("file_path", "")), ok, output, sum(map(count_lines, written)) if ok else 0)
    if name in EDIT_TOOLS:
        text = given.get(EDIT_TOOLS[name][0])
        lines = count_lines(text) if ok and isinstance(text, str) else 0
        return Step("edit", str(given.get("file_path") or given.get("notebook_path") or ""), ok, output, lines)
    return None


def _codex_step(item: dict) -> Step | None:
    if item.get("type") == "command_execution" and isinstance(item.get("command"), str):
        output = item.get("aggregated_output")
        return Step("command", item["command"], item.get("exit_code") == 0,
                    output[:TEXT_MAX] if isinstance(output, str) else "")
    if item.get("type") == "file_change":
        changes = item.get("changes") if isinstance(item.get("changes"), list) else []
        paths = [c.get("path") for c in changes if isinstance(c, dict) and isinstance(c.get("path"), str)]
        return Step("edit", ", ".join(paths), item.get("status", "completed") == "completed", "", None)
    return None

"""Status and usage from an agent CLI's JSON-lines transcript.

Why parse the transcript rather than ask the model provider: the transcript is the
record the trial keeps, so anyone can recompute these numbers from the stored file,
and a scripted endpoint and a real API are read the same way.

Status is one of:
  * ``completed`` — the CLI finished its run by itself;
  * ``capped``    — it stopped at a limit it was given (max turns, budget);
  * ``timeout``   — the harness killed it at the wall clock;
  * ``error``     — anything else: an API error, a crash, no final event.

Usage keys (numbers, only those the CLI reports): ``turns``, ``input_tokens``,
``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``,
``cost_usd``, ``duration_s``. A run cut short (timeout, crash) has no final event,
so only ``turns`` is counted, from the assistant messages seen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import orjson


TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
CAPPED_SUBTYPES = ("error_max_turns", "error_max_budget_usd")



@dataclass
class AgentReport:
    """What an agent's transcript says about its run: read here, carried by the agent's plan."""

    status: str | None = None  # completed | capped | timeout | error
    usage: dict[str, float] = field(default_factory=dict)
    session_id: str | None = None

def events(path: Path) -> Iterator[dict]:
    """Every JSON object line of a transcript; other lines (a stray stderr line) are skipped.

    orjson parses them: a long agent run's transcript is tens of thousands of lines, read
    once per trial and again by every `bench metrics`. A line it refuses is skipped like any
    other that is not JSON."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event


# --- Claude Code: `claude -p --output-format stream-json --verbose` -----------------------


def claude_report(path: Path, timed_out: bool = False) -> AgentReport:
    """Claude Code's final ``result`` event carries totals for the whole session.

    Its shape (verified against CLI 2.1.332): ``{"type": "result", "subtype": "success" |
    "error_max_turns" | ..., "is_error", "num_turns", "total_cost_usd", "duration_ms",
    "usage": {input_tokens, output_tokens, cache_creation_input_tokens,
    cache_read_input_tokens, ...}, "session_id"}``; the usage is the sum over every
    model response of the session.
    """
    session_id, result, messages = None, None, set()
    for event in events(path):
        session_id = event.get("session_id") or session_id
        if event.get("type") == "assistant":
            messages.add((event.get("message") or {}).get("id") or event.get("uuid"))
        elif event.get("type") == "result":
            result = event
    if result is None:
        return AgentReport("timeout" if timed_out else "error", {"turns": float(len(messages))}, session_id)
    return AgentReport("timeout" if timed_out else _claude_status(result), _claude_usage(result), session_id)


def _claude_status(result: dict) -> str:
    subtype = result.get("subtype")
    if subtype in CAPPED_SUBTYPES:
        return "capped"
    if subtype == "success" and not result.get("is_error"):
        return "completed"
    return "error"


def _claude_usage(result: dict) -> dict[str, float]:
    usage = {"turns": result.get("num_turns")}
    reported = result.get("usage") or {}
    usage.update({key: reported.get(key) for key in TOKEN_KEYS})
    usage["cost_usd"] = result.get("total_cost_usd")
    if result.get("duration_ms") is not None:
        usage["duration_s"] = result["duration_ms"] / 1000
    return {key: float(value) for key, value in usage.items() if isinstance(value, (int, float))}


# --- Codex: `codex exec --json` ----------------------------------------------------------


def codex_report(path: Path, timed_out: bool = False) -> AgentReport:
    """Codex prints ``thread.started`` (the session id), then per turn ``turn.completed``
    with ``usage`` ({input_tokens, cached_input_tokens, output_tokens}) or ``turn.failed``
    (event names checked against CLI 0.171.0). ``error`` events also announce retries it
    recovers from ("Reconnecting... 2/5"), so only a failed or missing turn is an error.
    Codex reports no cost.
    """
    session_id, turns, failed, completed = None, 0, False, False
    totals = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_input_tokens"), 0.0)
    for event in events(path):
        kind = event.get("type")
        if kind == "thread.started":
            session_id = event.get("thread_id") or session_id
        elif kind == "turn.completed":
            completed, turns = True, turns + 1
            usage = event.get("usage") or {}
            totals["input_tokens"] += float(usage.get("input_tokens") or 0)
            totals["output_tokens"] += float(usage.get("output_tokens") or 0)
            totals["cache_read_input_tokens"] += float(usage.get("cached_input_tokens") or 0)
        elif kind == "turn.failed":
            failed = True  # `error` events alone are not: Codex prints them for retries it recovers from
    status = "timeout" if timed_out else ("completed" if completed and not failed else "error")
    usage = {"turns": float(turns), **totals} if completed else {"turns": float(turns)}
    return AgentReport(status, usage, session_id)

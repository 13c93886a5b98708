"""The run's progress region: finished trials above it on a terminal, plain lines elsewhere.

The real-terminal run is tests/integration/test_terminal_progress.py; these drive
RunProgress directly, with a console writing to a buffer that says it is (or is not) a
terminal, and read the bytes back as a terminal would (tests/terminal.py).
"""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

from rich.console import Console

from bench.models import Verdict
from bench.progress import RunProgress
from tests.terminal import screen, writes

FINISHED = re.compile(r"hello/default/trial-\d: (PASS|FAIL)")
NAMES = [f"hello/default/trial-{n}" for n in (1, 2, 3)]


def _drive(progress: RunProgress) -> None:
    with progress:
        for name in NAMES:
            progress.started(name)
        for name, verdict in zip(NAMES, (Verdict.PASS, Verdict.FAIL, Verdict.PASS)):
            progress.finished(name, SimpleNamespace(verdict=verdict), f"{name}: {verdict.value} (1.0 s)")


def _terminal(buffer: io.StringIO) -> Console:
    return Console(file=buffer, force_terminal=True, width=100, highlight=False, soft_wrap=True)


def test_finished_trials_land_above_the_region_and_no_bar_stays():
    buffer = io.StringIO()
    console = _terminal(buffer)
    _drive(RunProgress(3, lambda line: console.print(line, markup=False), console=console))
    raw = buffer.getvalue()
    assert "running hello/default/trial-" in raw  # the region did name the running trials
    assert not [w for w in writes(raw) if FINISHED.search(w) and ("━" in w or "running" in w)]
    shown = screen(raw)
    assert [line for line in shown if FINISHED.search(line)] == [
        "hello/default/trial-1: PASS (1.0 s)", "hello/default/trial-2: FAIL (1.0 s)", "hello/default/trial-3: PASS (1.0 s)"]
    assert not [line for line in shown if line.startswith("trials ") or "running" in line]  # the region is erased


def test_a_line_printed_past_the_region_is_caught():
    """Why one console: a second console writing to the same terminal puts its line on the bar's line."""
    buffer = io.StringIO()
    other = _terminal(buffer)
    _drive(RunProgress(3, lambda line: other.print(line, markup=False), console=_terminal(buffer)))
    assert [w for w in writes(buffer.getvalue()) if FINISHED.search(w) and "━" in w]


def test_not_a_terminal_gives_one_plain_line_per_finished_trial():
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=100, highlight=False, soft_wrap=True)
    _drive(RunProgress(3, lambda line: console.print(line, markup=False), console=console))
    assert buffer.getvalue().splitlines() == [
        "hello/default/trial-1: PASS (1.0 s)", "hello/default/trial-2: FAIL (1.0 s)", "hello/default/trial-3: PASS (1.0 s)"]

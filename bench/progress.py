"""Live progress for long runs: the running trials, done / failed / error counts and an ETA, on stderr.

Everything bench writes to stderr goes through the one console here (``STDERR``; the CLI's
``err`` is the same object). That is what keeps a terminal tidy: rich prints a line above a
live region only when the line goes through the console that owns the region; a second
console would write onto the bar's line and leave old bars on screen. On a terminal the
region is one bar with the counts and a line naming the running trials, erased at the end;
each finished trial's line scrolls above it. When stderr is not a terminal (CI logs) rich
draws no region at all and only the plain lines appear, one per finished trial.
"""

from __future__ import annotations

import threading
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from .models import Verdict
from .result_models import TrialResult

STDERR = Console(stderr=True, highlight=False, soft_wrap=True)


class _TrialBar(Progress):
    """A progress bar with a line under it naming the trials that are running now."""

    def __init__(self, *columns, running: Callable[[], list[str]], **options) -> None:
        self._running_names = running  # before Progress.__init__, which renders once
        super().__init__(*columns, **options)

    def get_renderables(self):
        yield from super().get_renderables()
        names = self._running_names()
        if names:
            yield Text(f"  running {', '.join(names)}", style="dim", no_wrap=True, overflow="ellipsis")


class RunProgress:
    """Thread-safe counters behind a rich progress region; ``say`` prints each finished trial's line."""

    def __init__(self, total: int, say: Callable[[str], None], console: Console = STDERR) -> None:
        self.console = console
        self.say = say
        self.failed = self.errors = 0
        self._running: list[str] = []
        self._lock = threading.Lock()
        self._bar = _TrialBar(
            TextColumn("trials"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[state]}"), TimeRemainingColumn(),
            console=self.console, transient=True, running=self._names,
        )
        self._task = self._bar.add_task("trials", total=total, state="")

    def __enter__(self) -> "RunProgress":
        if self.console.is_terminal:  # elsewhere (a CI log) rich would draw nothing but a stray blank line
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar.live.is_started:
            self._bar.stop()

    @property
    def running(self) -> int:
        return len(self._running)

    def started(self, name: str) -> None:
        with self._lock:
            self._running.append(name)
            self._refresh()

    def finished(self, name: str, result: TrialResult, line: str) -> None:
        with self._lock:
            if name in self._running:
                self._running.remove(name)
            self.failed += result.verdict is Verdict.FAIL
            self.errors += result.verdict in (Verdict.ERROR, Verdict.INCOMPLETE)
            self._bar.advance(self._task)
            self._refresh()
        self.say(line)

    def withdrawn(self, name: str) -> None:
        """A trial that was sent but never started (its Ray node went away first): no longer running, not done."""
        with self._lock:
            if name in self._running:
                self._running.remove(name)
            self._refresh()

    def _names(self) -> list[str]:
        return list(self._running)  # read by rich's refresh thread: a copy, without the lock the updates hold

    def _refresh(self) -> None:
        state = f"{self.running} running · {self.failed} failed · {self.errors} error/incomplete"
        self._bar.update(self._task, state=state, refresh=True)  # now, not at the next tick: a short trial shows too

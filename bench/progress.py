"""Live progress for long runs: done / running / failed and an ETA, on stderr.

One line per finished trial scrolls above the bar, so a log of a non-interactive run
(CI) still shows every verdict as it happens.
"""

from __future__ import annotations

import threading
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .models import Verdict

from .result_models import TrialResult


class RunProgress:
    """Thread-safe counters behind a rich progress bar."""

    def __init__(self, total: int, say: Callable[[str], None]) -> None:
        self.console = Console(stderr=True, highlight=False, soft_wrap=True)
        self.say = say
        self.running = self.failed = self.errors = 0
        self._lock = threading.Lock()
        self._bar = Progress(
            TextColumn("trials"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[state]}"), TimeRemainingColumn(),
            console=self.console, transient=True,
        )
        self._task = self._bar.add_task("trials", total=total, state="")

    def __enter__(self) -> "RunProgress":
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def started(self) -> None:
        with self._lock:
            self.running += 1
            self._refresh()

    def finished(self, result: TrialResult, line: str) -> None:
        with self._lock:
            self.running -= 1
            self.failed += result.verdict is Verdict.FAIL
            self.errors += result.verdict in (Verdict.ERROR, Verdict.INCOMPLETE)
            self._bar.advance(self._task)
            self._refresh()
        self.say(line)

    def _refresh(self) -> None:
        state = f"{self.running} running · {self.failed} failed · {self.errors} error/incomplete"
        self._bar.update(self._task, state=state)

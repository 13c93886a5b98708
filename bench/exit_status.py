"""Exit status that scripts can use, for `run`, `grade` and `assess`: one rule, one place.

0  every trial PASS, and no assessed expectation failed
1  some trial FAIL, or an assessed expectation failed (charged to the agent)
2  invalid configuration or usage (nothing ran; bench/errors.py UsageError)
3  no FAIL, but some trial ERROR or INCOMPLETE: nothing charged to the agent, but no verdict either

Why 3 apart from 1: a CI job that gates a release on `bench run` must not read a dead
Docker engine or a refused GPU seat as "the agent got worse", nor as "all good".
"""

from __future__ import annotations

from typing import Iterable

from .models import Verdict

ALL_PASS = 0
FAILED = 1
USAGE = 2
NO_VERDICT = 3

HELP = ("Exit status: 0 every trial PASS (and no assessed expectation failed); 1 some trial FAIL; "
        "2 invalid configuration or usage; 3 no FAIL, but some ERROR or INCOMPLETE.")


def exit_status(verdicts: Iterable[Verdict], assessment_failed: bool = False) -> int:
    """The exit status for these trials' verdicts (a run that recorded no trial at all is 3: no verdict)."""
    seen = [Verdict(v) for v in verdicts]
    if assessment_failed or Verdict.FAIL in seen:
        return FAILED
    if not seen or any(v in (Verdict.ERROR, Verdict.INCOMPLETE) for v in seen):
        return NO_VERDICT
    return ALL_PASS

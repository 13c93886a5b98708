"""The `command` check's decision: exit code, output patterns and the closing nonce.

The command itself runs in a fresh container of its own (bench/grading/command.py), as
the graded code's uid, with only the check's withheld files; what it printed and how it
ended are observations the host collects. This module turns them into (passed, detail)
by the rules in gate.toml, so nothing the graded code prints can decide anything but
whether a pattern matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAIL = 2000


@dataclass(frozen=True)
class Observation:
    """How the check's container ended, and what it printed (each stream within the budget)."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    budget: str | None = None  # "disk" or "check-output": the container was killed for crossing it
    budget_mb: int = 0
    oom_killed: bool = False
    memory_mb: int = 0
    nonce: str | None = None  # the line the withheld test must print once it has passed


def stopped(run: str, seen: Observation, timeout_s: float, output: str) -> str | None:
    """Why the container was stopped before ``run`` ended on its own (a budget, its wall clock, its memory),
    or None: one wording for every check kind that runs a command; ``output`` is the tail to show."""
    if seen.budget == "disk":
        return f"disk budget: `{run}` wrote more than {seen.budget_mb} MiB and was stopped"
    if seen.budget:
        return f"output budget: `{run}` printed more than {seen.budget_mb} MiB and was stopped\n{output}"
    if seen.timed_out:
        return f"timeout: `{run}` ran past {timeout_s:.0f} s"
    if seen.oom_killed:
        return f"`{run}` ran out of memory ({seen.memory_mb} MiB) and was killed\n{output}"
    return None


def decide(check: dict, seen: Observation) -> tuple[bool, str]:
    """(passed, detail); every failure names what failed, with the output's tail."""
    run = check["run"]
    output = f"stdout:\n{seen.stdout[-TAIL:]}\nstderr:\n{seen.stderr[-TAIL:]}"
    if why := stopped(run, seen, check.get("timeout_s", 120), output):
        return False, why
    expected = check.get("expect_exit", 0)
    if seen.exit_code != expected:
        return False, f"`{run}` exited {seen.exit_code}, expected {expected}\n{output}"
    for stream, text in (("stdout", seen.stdout), ("stderr", seen.stderr)):
        for pattern in check.get(f"{stream}_matches", []):
            if not re.search(pattern, text, re.MULTILINE):
                return False, f"{stream} of `{run}` does not match /{pattern}/\n{output}"
    if seen.nonce is not None and seen.nonce not in seen.stdout.splitlines():
        return False, (f"`{run}` never printed its closing nonce line: the withheld test did not run to its "
                       f"end (linked code that exits early, or output faked before main?)\n{output}")
    return True, f"`{run}` exited {seen.exit_code}"

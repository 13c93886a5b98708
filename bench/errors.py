"""The exception types that decide exit codes and verdicts.

Every failure the harness can meet belongs to one of three families, because each
is handled differently: a user's mistake (exit 2, nothing run), an infrastructure
fault (verdict ERROR, never charged to the agent), and a refused observation
(verdict INCOMPLETE). Messages always say what to do next.
"""

from __future__ import annotations


class BenchError(Exception):
    """Base of every error the harness raises on purpose; printed without traceback."""

    exit_code = 1


class UsageError(BenchError):
    """Bad input from the user: a flag, a case name, a malformed file. Exit 2."""

    exit_code = 2


class CaseError(UsageError):
    """A case, gate or image file that does not validate.

    The message names the file, the field, what is wrong and how to fix it.
    """

    def __init__(self, path: object, field: str, problem: str, fix: str = "") -> None:
        self.path, self.field, self.problem, self.fix = str(path), field, problem, fix
        message = f"{self.path}: field '{field}': {problem}"
        super().__init__(message + (f" — {fix}" if fix else ""))


class RecordError(CaseError):
    """A record the harness wrote (result.json, run.json, ...) that does not read back.

    Same shape as CaseError — file, field, problem, fix — because the user meets it
    the same way: a file on disk to repair, replace or remove.
    """


class InfrastructureError(BenchError):
    """The engine, an image build or the harness itself failed: the trial is ERROR."""


class EngineUnavailable(InfrastructureError):
    """The Docker engine cannot be reached (never started, or gone mid-run)."""


class SeatRefused(BenchError):
    """The grading seat cannot observe what the case needs: the trial is INCOMPLETE."""

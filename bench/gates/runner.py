"""The grader's entry point: run a gate plan against /workspace, print the verdict.

Invoked inside the grader container as ``python3 -m bench.gates.runner PLAN`` with
the harness wheel on PYTHONPATH. It prints exactly one result line, prefixed by
``MARK``, on stdout; the host reads only that line from the runner's own stream, so
no file the agent wrote (a planted verdict.json or reward.txt) can decide the verdict.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import command, grep

MARK = "BENCH-GATE-RESULT "
KINDS = {"command": command.run, "grep": grep.run}


def run_check(check: dict, workspace: Path) -> dict:
    started = time.monotonic()
    try:
        passed, detail = KINDS[check["kind"]](check, workspace)
    except Exception as exc:  # a check that crashes the grader fails, and says why
        passed, detail = False, f"check crashed: {type(exc).__name__}: {exc}"
    return {
        "name": check["name"], "kind": check["kind"], "gating": check.get("gating", True),
        "passed": passed, "detail": detail, "duration_s": round(time.monotonic() - started, 3),
    }


def grade(plan: dict, workspace: Path) -> dict:
    """Every check runs (so the record shows each one); gating failures decide FAIL."""
    results = [run_check(check, workspace) for check in plan["checks"]]
    failed = [r for r in results if r["gating"] and not r["passed"]]
    reason = ""
    if failed:
        first = failed[0]
        reason = f"check '{first['name']}' failed: {first['detail'].splitlines()[0]}"
    return {"verdict": "FAIL" if failed else "PASS", "reason": reason, "checks": results}


def _undumpable() -> None:
    """Hide this process's /proc entries (and so its stdout) from the checks it runs.

    Checks run code the agent wrote, as the same user; a non-dumpable process cannot
    have its file descriptors opened through /proc by them.
    """
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    _undumpable()
    plan = json.loads(Path(argv[1]).read_text())
    result = grade(plan, Path(plan.get("workspace", "/workspace")))
    for check in result["checks"]:
        state = "pass" if check["passed"] else "FAIL"
        print(f"[{state}] {check['name']} ({check['kind']}, {check['duration_s']} s)\n{check['detail']}\n", file=sys.stderr)
    sys.stdout.write(MARK + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

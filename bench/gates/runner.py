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
import traceback
from pathlib import Path

from . import command, grep

MARK = "BENCH-GATE-RESULT "


def _browser(check: dict, workspace: Path, plan: dict) -> tuple[bool, str, dict]:
    """Imported on use: Playwright and Pillow exist only in the seat image, and this module
    must import with the standard library alone in any grader."""
    from . import browser

    return browser.run(check, workspace, plan)


KINDS = {"command": command.run, "grep": grep.run, "browser": _browser}
PLAN_AWARE = {"browser"}  # kinds that also read the plan: the seat the case needs, the artifacts folder


def run_check(check: dict, workspace: Path, plan: dict | None = None) -> dict:
    """One check's result; a kind may add fields (seat, predicates, incomplete) after (passed, detail)."""
    started = time.monotonic()
    extra: dict = {}
    try:
        kind = KINDS[check["kind"]]
        outcome = kind(check, workspace, plan or {}) if check["kind"] in PLAN_AWARE else kind(check, workspace)
        passed, detail, *rest = outcome
        extra = rest[0] if rest else {}
    except Exception as exc:  # a check that crashes the grader fails, and says why
        passed, detail = False, f"check crashed: {type(exc).__name__}: {exc}"
        traceback.print_exc(file=sys.stderr)  # into gate.log, for whoever fixes the check
    return {
        "name": check["name"], "kind": check["kind"], "gating": check.get("gating", True),
        "passed": passed, "detail": detail, "duration_s": round(time.monotonic() - started, 3), **extra,
    }


def grade(plan: dict, workspace: Path) -> dict:
    """Every check runs (so the record shows each one); gating failures decide FAIL.

    A gating check that could not observe (its seat refused) makes the trial INCOMPLETE,
    even beside a failure: the seat is part of the case, so a refused seat refuses the
    whole trial rather than charging a partial observation to the agent.
    """
    results = [run_check(check, workspace, plan) for check in plan["checks"]]
    refused = [r for r in results if r["gating"] and r.get("incomplete")]
    failed = [r for r in results if r["gating"] and not r["passed"]]
    verdict, reason = "PASS", ""
    if refused:
        verdict, reason = "INCOMPLETE", f"check '{refused[0]['name']}' could not observe: {refused[0]['detail'].splitlines()[0]}"
    elif failed:
        verdict, reason = "FAIL", f"check '{failed[0]['name']}' failed: {failed[0]['detail'].splitlines()[0]}"
    seat = next((r["seat"] for r in results if r.get("seat")), None)
    return {"verdict": verdict, "reason": reason, "checks": results, **({"seat": seat} if seat else {})}


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
    if plan.get("artifacts"):
        Path(plan["artifacts"]).mkdir(parents=True, exist_ok=True)
    result = grade(plan, Path(plan.get("workspace", "/workspace")))
    for check in result["checks"]:
        state = "pass" if check["passed"] else "FAIL"
        print(f"[{state}] {check['name']} ({check['kind']}, {check['duration_s']} s)\n{check['detail']}\n", file=sys.stderr)
    sys.stdout.write(MARK + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

"""The browser observer's entry point inside a grader container: run a plan, print one report.

Started by the host as ``python3 -I -c BOOT /opt/bench/plan.json``: isolated mode
ignores PYTHONPATH, the user's site and the working directory, so no module the agent
wrote can stand in for one this imports; BOOT puts only the root-owned, read-only
harness wheel on the path. It prints exactly one line, prefixed by ``MARK``, on
stdout. That line is an observation, never a verdict: the host checks that it names
the check it asked about, decodes the frames itself and decides.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MARK = "BENCH-GATE-RESULT "
WHEEL = "/opt/bench/harness.whl"
PLAN = "/opt/bench/plan.json"
BOOT = (f"import sys; sys.path.insert(0, {WHEEL!r}); "
        "from bench.gates.runner import main; raise SystemExit(main(sys.argv))")


def _undumpable() -> None:
    """Hide this process's /proc entries (and so its stdout) from anything else in the container."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    _undumpable()
    plan = json.loads(Path(argv[1]).read_text())
    from . import browser

    report = browser.probe(plan) if plan.get("mode") == "probe" else browser.observe_check(plan)
    sys.stdout.write(MARK + json.dumps(report) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

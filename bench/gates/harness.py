"""The `harness` check's decision: verified runner records in, per-test counts and a verdict out.

The graded code runs inside the test process, so anything the process prints could be
the graded code's: a fake "All 12 tests passed.", fake TAP, an early exit(0) after
either. The host therefore counts nothing but records that carry an HMAC under the
check's one-time key (bench/grading/harness_runners.py), and accepts a run only when
the runner's end record is there and every record it announces came in. A record the
key does not verify is ignored and counted; a missing end record is the run's failure.

What remains trusted is named in bench/grading/harness.py.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

from .command import Observation, stopped  # how a check's container ended: one record, one wording

TAIL = 2000
TEST, END = "BENCH-TEST", "BENCH-END"
STATUSES = ("pass", "fail", "skip")


@dataclass(frozen=True)
class Test:
    index: int
    status: str  # pass, fail or skip
    name: str


@dataclass
class Report:
    """What the verified records say: the tests, and the end record's count (None: it never came)."""

    tests: dict[int, Test] = field(default_factory=dict)
    end: int | None = None
    unverified: int = 0  # lines shaped like records that the key does not verify


def read(stdout: str, key: bytes) -> Report:
    """Every verified record in the output; anything else, however it looks, is output."""
    report = Report()
    for line in stdout.splitlines():
        if not line.startswith((TEST + " ", END + " ")):
            continue
        body, _, mac = line.rpartition(" ")
        expected = hmac.new(key, body.encode("utf-8", "replace"), hashlib.sha256).hexdigest()
        parsed = _parse(body) if hmac.compare_digest(mac.encode(), expected.encode()) else None
        if parsed is None:
            report.unverified += 1
        elif isinstance(parsed, Test):
            report.tests.setdefault(parsed.index, parsed)
        elif report.end is None:
            report.end = parsed
    return report


def _parse(body: str) -> Test | int | None:
    parts = body.split(" ")
    try:
        if parts[0] == END and len(parts) == 2:
            return int(parts[1])
        if parts[0] == TEST and len(parts) == 4 and parts[2] in STATUSES:
            return Test(int(parts[1]), parts[2], bytes.fromhex(parts[3]).decode("utf-8", "replace"))
    except ValueError:
        pass
    return None  # verified but malformed: only a runner bug writes this


@dataclass(frozen=True)
class Decision:
    passed: bool
    detail: str
    metrics: dict[str, float] = field(default_factory=dict)
    review: dict[str, list[str]] = field(default_factory=dict)


def decide(command: str, timeout_s: float, min_pass: int | None, seen: Observation, report: Report) -> Decision:
    """PASS needs the end record, every announced record, at least one harness test, and min_pass (default: all)."""
    review = _review(report)
    ended = _ended(command, timeout_s, seen, report)
    if ended:
        return Decision(False, ended, review=review)
    tests = list(report.tests.values())
    counts = {status: sum(t.status == status for t in tests) for status in STATUSES}
    metrics = {"tests_passed": float(counts["pass"]), "tests_failed": float(counts["fail"]),
               "tests_total": float(len(tests))}
    summary = f"{counts['pass']}/{len(tests)} harness tests passed" + (
        f", {counts['fail']} failed" if counts["fail"] else "") + (f", {counts['skip']} skipped" if counts["skip"] else "")
    if not tests:
        return Decision(False, f"no harness test ran: `{command}` finished its run with 0 tests", metrics, review)
    if min_pass is None and (counts["fail"] or counts["skip"]):
        named = review.get("failed") or review.get("skipped")
        return Decision(False, f"{summary}; every one must pass; first: {named[0]}\n{_output(seen)}", metrics, review)
    if min_pass is not None and counts["pass"] < min_pass:
        return Decision(False, f"{summary}; at least {min_pass} must pass\n{_output(seen)}", metrics, review)
    return Decision(True, summary, metrics, review)


def _ended(command: str, timeout_s: float, seen: Observation, report: Report) -> str | None:
    """Why the run gives no complete set of records, or None when it does."""
    if why := stopped(command, seen, timeout_s, _output(seen)):
        recorded = f" ({len(report.tests)} harness tests recorded by then)" if seen.timed_out else ""
        return why + recorded
    forged = f"; {report.unverified} line(s) shaped like runner records were not the runner's" if report.unverified else ""
    if report.end is None:
        return (f"the test run never reached its end (exit {seen.exit_code}, {len(report.tests)} harness tests recorded"
                f"{forged}): a compile error, a crash, or linked code that exits early or prints its own summary\n"
                f"{_output(seen)}")
    missing = sorted(set(range(report.end)) - set(report.tests))
    extra = sorted(set(report.tests) - set(range(report.end)))
    if missing or extra:
        return (f"the runner announced {report.end} harness tests but the records of "
                f"{len(missing) + len(extra)} never arrived whole{forged} (output the test process swallowed?)\n"
                f"{_output(seen)}")
    return None


def _review(report: Report) -> dict[str, list[str]]:
    tests = [report.tests[i] for i in sorted(report.tests)]
    lists = {"passed": [t.name for t in tests if t.status == "pass"],
             "failed": [t.name for t in tests if t.status == "fail"],
             "skipped": [t.name for t in tests if t.status == "skip"]}
    return {name: items for name, items in lists.items() if items}


def _output(seen: Observation) -> str:
    """The output's tails, without the records (they are in the review, and only noise here)."""
    def strip(text: str) -> str:
        kept = [line for line in text.splitlines() if not line.startswith((TEST + " ", END + " ")) and line.strip()]
        return "\n".join(kept)[-TAIL:]

    return f"stdout:\n{strip(seen.stdout)}\nstderr:\n{strip(seen.stderr)}"

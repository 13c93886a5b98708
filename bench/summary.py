"""The per-arm statistics behind every summary.json and every side of `bench compare`.

Only valid trials (PASS or FAIL) carry outcomes and metrics: ERROR is the harness's
fault and INCOMPLETE a refused observation, so counting either as a failure, or their
shorter wall time as a saving, would charge the agent for the infrastructure. Check
pass counts are the exception: they cover every trial that ran the check, because
they say how the check behaved, not how the agent did. A skipped check (another lane's,
or a model's in a dry run) was not run: it is counted apart, never as a failure.
"""

from __future__ import annotations

import math

from .models import Verdict

from .result_models import TrialResult
from .stat_models import ArmSummary, CheckTally, MetricSpread
from .stats import pass_at_k, spread, wilson_interval

VALID = (Verdict.PASS, Verdict.FAIL)
PASS_AT = (1, 3, 5, 10)


def summarize_arm(case: str, arm: str, results: list[TrialResult]) -> ArmSummary:
    """Counts, Wilson interval, pass@k, per-check tallies and metric spreads of one case x arm."""
    counts = {verdict: 0 for verdict in Verdict}
    for result in results:
        counts[result.verdict] += 1
    passed, graded = counts[Verdict.PASS], counts[Verdict.PASS] + counts[Verdict.FAIL]
    valid = [r for r in results if r.verdict in VALID]
    return ArmSummary(
        case=case, arm=arm, counts=counts,
        pass_rate=passed / graded if graded else None,
        pass_interval=wilson_interval(passed, graded) if graded else None,
        pass_at_k={k: pass_at_k(graded, passed, k) for k in PASS_AT if graded >= k},
        checks=_check_tallies(results),
        metrics=_spreads([trial_metrics(r) for r in valid]),
    )


def trial_metrics(result: TrialResult) -> dict[str, float]:
    """Cost-side metrics of one trial: wall time (sum of its phases) and whatever usage it recorded."""
    # phases are recorded to the millisecond; rounding keeps float noise out of the report
    metrics = {"wall_s": round(sum(result.phases.values()), 3)} if result.phases else {}
    return {**metrics, **result.usage}


def quality(result: TrialResult) -> dict[str, float]:
    """Quality metrics of one valid trial, the ones the guardrail floor holds: pass and check metrics."""
    metrics = {"pass": 1.0 if result.verdict is Verdict.PASS else 0.0}
    for check in result.checks:
        metrics.update({f"{check.name}/{key}": value for key, value in check.metrics.items()})
    return metrics


def directions(results: list[TrialResult]) -> dict[str, str]:
    """Quality metric name (as ``quality`` names it) -> higher or lower, as the checks declared it.

    A metric no check gave a direction for is higher-is-better (pass, recalls); a check
    that declares both for one name would be a grader bug, and the last one read wins.
    """
    found: dict[str, str] = {}
    for result in results:
        for check in result.checks:
            found.update({f"{check.name}/{key}": way for key, way in check.directions.items()})
    return found


def _check_tallies(results: list[TrialResult]) -> list[CheckTally]:
    """Pass counts over every trial that ran the check, skips apart; its metrics over valid trials only."""
    names = list(dict.fromkeys(check.name for r in results for check in r.checks))
    tallies = []
    for name in names:
        seen = [(r, check) for r in results for check in r.checks if check.name == name]
        ran = [(r, check) for r, check in seen if not check.skipped]
        tallies.append(CheckTally(
            name=name, gating=seen[0][1].gating, passed=sum(check.passed for _, check in ran), total=len(ran),
            skipped=len(seen) - len(ran), metrics=_spreads([check.metrics for r, check in ran if r.verdict in VALID]),
        ))
    return tallies


def check_marks(tallies: list[CheckTally]) -> str:
    """Per check, in gate order: passed/ran (``2/3``), ``s`` when skipped in every trial, ``2/2+1s`` when in some."""
    marks = []
    for tally in tallies:
        if not tally.total:
            marks.append("s" if tally.skipped else "-")
        else:
            marks.append(f"{tally.passed}/{tally.total}" + (f"+{tally.skipped}s" if tally.skipped else ""))
    return " ".join(marks)


def _spreads(rows: list[dict[str, float]]) -> dict[str, MetricSpread]:
    """Median (min-max) of every key any row has, over the rows that have it; NaN is no value."""
    spreads = {}
    for key in dict.fromkeys(key for row in rows for key in row):
        found = spread(row[key] for row in rows if key in row and not math.isnan(row[key]))
        if found is not None:
            spreads[key] = found
    return spreads

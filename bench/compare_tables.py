"""How `bench compare` is shown: pass rates with the paired test, metric spreads, the floor.

Apart from bench/compare.py so the comparison itself (what is refused, what holds)
reads on its own; nothing here decides anything.
"""

from __future__ import annotations

from rich.table import Table

from .compare import CompareReport, PairComparison, _num
from .models import Verdict
from .stat_models import ArmSummary, MetricSpread


def tables(report: CompareReport) -> list[Table]:
    """Pass rates with the paired test, metric spreads, and the floor; nothing when none was compared."""
    if not report.comparisons:
        return []
    rates = Table("case", "arm", "baseline", "candidate", "Δ [paired 95% CI]", "McNemar p (pairs)",
                  title="pass rate over PASS+FAIL [Wilson 95%]")
    metrics = Table("case", "arm", "metric", "baseline", "candidate", "Δ%", title="median (min–max), valid trials")
    floors = Table("case", "arm", "metric", "better", "baseline worst", "candidate worst", "floor",
                   title="guardrail floor")
    for p in report.comparisons:
        rates.add_row(p.case, p.arm, _rate(p.baseline), _rate(p.candidate), _delta(p),
                      f"{p.mcnemar_p:.3g} ({p.pairs})")
        for m in p.metrics:
            change = "—" if m.change_pct is None else f"{m.change_pct:+.1f}%"
            metrics.add_row(p.case, p.arm, m.metric, _spread(m.baseline), _spread(m.candidate), change)
        for f in p.floors:
            floors.add_row(p.case, p.arm, f.metric, f.direction, _num(f.baseline_worst), _num(f.candidate_worst),
                           "holds" if f.holds else "[red]BROKEN[/]")
    return [rates, metrics, floors]


def _rate(s: ArmSummary) -> str:
    passed, graded = s.counts[Verdict.PASS], s.counts[Verdict.PASS] + s.counts[Verdict.FAIL]
    if not graded or s.pass_interval is None:
        return "—"
    low, high = s.pass_interval
    return f"{passed}/{graded} [{low:.0%}–{high:.0%}]"


def _delta(p: PairComparison) -> str:
    """Difference of the rates in points, then the bootstrap interval of the paired difference."""
    if p.baseline.pass_rate is None or p.candidate.pass_rate is None:
        return "—"
    delta = f"{(p.candidate.pass_rate - p.baseline.pass_rate) * 100:+.0f} pts"
    if p.diff_interval is None:
        return delta
    return f"{delta} [{p.diff_interval[0] * 100:+.0f}, {p.diff_interval[1] * 100:+.0f}]"


def _spread(s: MetricSpread | None) -> str:
    return "—" if s is None else f"{_num(s.median)} ({_num(s.low)}–{_num(s.high)})"

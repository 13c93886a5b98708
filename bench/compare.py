"""`bench compare`: two sides (labels, or arms of one), refused unless comparable, then paired per case x arm.

A comparison is only evidence when both sides are what they claim and graded the same
thing the same way, so two things come first. Each label must verify: signed by a
trusted key, every file as signed, consistent with itself (bench/label_check.py);
else the comparison is refused, every finding named, unless ``--allow-unsigned``.
Then comparability (bench/comparability.py): for every case both sides share, the
case, fixture and goldens hashes, the grader image's content digest, the harness, the
seat class and the judge (model and endpoint) must agree, and no arm may mix plugin checkouts or subject tarballs, or
the comparison is refused with every difference named; ``--allow-drift`` compares
anyway and still names them. Subjects that differ as the arms declared them
(``subject:``, --subject) are the experiment: named in the report as declared, never
refused. Finally a case x arm with no valid trial on a side has nothing to judge:
refused, never "holds".

Only valid trials (PASS or FAIL) carry outcomes and metrics. ERROR is the harness's
fault and INCOMPLETE a refused observation; counting either as a failure, or their
shorter wall time as a saving, would charge the agent for the infrastructure.

Trials pair by number (trial n of the baseline with trial n of the candidate, per
case x arm): runs interleave arms trial by trial, so pairs share the drift of their
moment. The guardrail floor compares worst trials, because a regression that shows
only in the tail hides behind every average. Quality metrics are PASS itself (1/0)
and every numeric metric a check reports, each floored in the direction the check
declares: a recall's worst may not fall, a false-positive count's worst may not rise.

Exit codes (DESIGN.md): 0 comparable and every floor holds; 1 a guardrail broken;
3 refused as not comparable (drift, an unverifiable label, a side without valid
trials, a dry run); 2 bad usage (a missing or empty label folder).

A side holding a dry run (`bench run --dry-run`: no agent ran, the untouched scaffold
was graded) is refused whatever the flags: its verdicts describe the harness path, not
an agent, so they are never evidence for or against one.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, computed_field

from .comparability import Drift, Groups, find_drift, load_side, resolve_label
from .errors import UsageError
from .keys import trusted_keys as default_trust
from .label_check import integrity
from .models import Verdict
from .result_models import TrialResult
from .stat_models import ArmSummary, FloorRow, MetricSpread
from .paths import RunPaths
from .stats import guardrail_floor, mcnemar_exact, paired_bootstrap_diff, percent_change
from .summary import VALID, directions, quality, summarize_arm

MIN_VALID = 3
__all__ = ["CompareReport", "compare_labels", "resolve_label"]


# --- pairing ---------------------------------------------------------------------------


def pair_arms(base: Groups, cand: Groups) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(case, baseline arm, candidate arm) by arm name; a lone arm on each side pairs whatever its name."""
    pairs: list[tuple[str, str, str]] = []
    warnings: list[str] = []
    for case in sorted(base.keys() | cand.keys()):
        if case not in base or case not in cand:
            warnings.append(f"case {case} is only in the {'baseline' if case in base else 'candidate'}; not compared")
            continue
        b_arms, c_arms = sorted(base[case]), sorted(cand[case])
        shared = [arm for arm in b_arms if arm in c_arms]
        if not shared and len(b_arms) == len(c_arms) == 1:
            pairs.append((case, b_arms[0], c_arms[0]))
            continue
        pairs += [(case, arm, arm) for arm in shared]
        for arm in sorted(set(b_arms) ^ set(c_arms)):
            side = "baseline" if arm in b_arms else "candidate"
            warnings.append(f"{case}/{arm} is only in the {side}; not compared")
    return pairs, warnings


def paired_outcomes(base: list[TrialResult], cand: list[TrialResult]) -> list[tuple[float, float]]:
    """(baseline, candidate) pass as 1.0/0.0 for every trial number valid on both sides."""
    b = {r.trial: r for r in base if r.verdict in VALID}
    c = {r.trial: r for r in cand if r.verdict in VALID}
    return [(_passed(b[n]), _passed(c[n])) for n in sorted(b.keys() & c.keys())]


def _passed(result: TrialResult) -> float:
    return 1.0 if result.verdict is Verdict.PASS else 0.0


# --- the comparison --------------------------------------------------------------------


class MetricRow(BaseModel):
    metric: str
    baseline: MetricSpread | None
    candidate: MetricSpread | None
    change_pct: float | None = None


class PairComparison(BaseModel):
    """One case x arm pair: both sides' statistics, the paired test and the floor."""

    case: str
    baseline_arm: str
    candidate_arm: str
    baseline: ArmSummary
    candidate: ArmSummary
    pairs: int
    discordant: tuple[int, int] = (0, 0)
    mcnemar_p: float = 1.0
    diff_interval: tuple[float, float] | None = None
    metrics: list[MetricRow] = []
    floors: list[FloorRow] = []

    @property
    def arm(self) -> str:
        return self.baseline_arm if self.baseline_arm == self.candidate_arm else \
            f"{self.baseline_arm}→{self.candidate_arm}"


def compare_pair(case: str, b_arm: str, c_arm: str, base: list[TrialResult], cand: list[TrialResult]) -> PairComparison:
    """Statistics of both sides, exact McNemar and a seeded bootstrap over the pairs, and the floor."""
    pairs = paired_outcomes(base, cand)
    discordant = (sum(b > c for b, c in pairs), sum(c > b for b, c in pairs))
    b_sum, c_sum = summarize_arm(case, b_arm, base), summarize_arm(case, c_arm, cand)
    return PairComparison(
        case=case, baseline_arm=b_arm, candidate_arm=c_arm, baseline=b_sum, candidate=c_sum,
        pairs=len(pairs), discordant=discordant, mcnemar_p=mcnemar_exact(*discordant),
        diff_interval=paired_bootstrap_diff(pairs) if pairs else None,
        metrics=_metric_rows(b_sum, c_sum), floors=_floor_rows(base, cand),
    )


def _metric_rows(base: ArmSummary, cand: ArmSummary) -> list[MetricRow]:
    """Median (min-max) of every metric either side has, and the change of the medians."""
    b, c = _all_spreads(base), _all_spreads(cand)
    rows = []
    for name in dict.fromkeys([*b, *c]):
        low, high = b.get(name), c.get(name)
        change = percent_change(low.median, high.median) if low and high else None
        rows.append(MetricRow(metric=name, baseline=low, candidate=high, change_pct=change))
    return rows


def _all_spreads(summary: ArmSummary) -> dict[str, MetricSpread]:
    checks = {f"{t.name}/{key}": value for t in summary.checks for key, value in t.metrics.items()}
    return {**summary.metrics, **checks}


def _floor_rows(base: list[TrialResult], cand: list[TrialResult]) -> list[FloorRow]:
    """The floor for pass and for every check metric that both sides reported, each in its direction."""
    b = [quality(r) for r in base if r.verdict in VALID]
    c = [quality(r) for r in cand if r.verdict in VALID]
    names = [n for n in dict.fromkeys(k for row in b for k in row) if any(n in row for row in c)]
    lower = {name for name, way in directions(base + cand).items() if way == "lower"}
    return [guardrail_floor(n, [row[n] for row in b if n in row], [row[n] for row in c if n in row],
                            higher_is_better=n not in lower) for n in names]


class CompareReport(BaseModel):
    """What `bench compare` found; ``exit_code`` is the verdict."""

    baseline: str
    candidate: str
    allow_drift: bool
    allow_unsigned: bool = False
    unverified: list[str] = []
    drift: list[Drift]
    declared: list[Drift] = []  # subjects that differ as the arms declared them: the experiment, named, not refused
    dry_runs: list[str] = []  # sides holding dry-run trials: refused whatever the flags (no agent ran)
    warnings: list[str]
    comparisons: list[PairComparison]

    @computed_field
    @property
    def nothing_to_judge(self) -> list[str]:
        """Pairs where a side has no PASS or FAIL trial: an all-ERROR side is never "holds"."""
        return [f"{p.case}/{p.arm}: the {side} has no valid (PASS or FAIL) trial — nothing to judge"
                for p in self.comparisons for side, summary in (("baseline", p.baseline), ("candidate", p.candidate))
                if summary.counts[Verdict.PASS] + summary.counts[Verdict.FAIL] == 0]

    @computed_field
    @property
    def refused(self) -> bool:
        return (bool(self.drift) and not self.allow_drift) or (bool(self.unverified) and not self.allow_unsigned) \
            or bool(self.nothing_to_judge) or bool(self.dry_runs)

    @computed_field
    @property
    def broken(self) -> list[str]:
        return [f"{p.case}/{p.arm}: {f.metric} — candidate worst {_num(f.candidate_worst)} "
                f"is {'below' if f.direction == 'higher' else 'above'} baseline worst {_num(f.baseline_worst)}"
                for p in self.comparisons for f in p.floors if not f.holds]

    @computed_field
    @property
    def exit_code(self) -> int:
        return 3 if self.refused else 1 if self.broken else 0

    def lines(self) -> list[str]:
        """What was refused and why, then the verdict, in words."""
        lines = _listed(self.unverified, self.allow_unsigned, "not verifiable", "finding", "--allow-unsigned")
        lines += _listed([str(d) for d in self.drift], self.allow_drift, "not comparable", "difference", "--allow-drift")
        lines += [f"refused: {line}" for line in self.nothing_to_judge]
        lines += [f"refused: {line}" for line in self.dry_runs]
        if self.declared:
            lines += [f"compared across {len(self.declared)} declared difference(s) (the arms' subjects under trial):",
                      *(f"  {d}" for d in self.declared)]
        if self.refused:
            return lines
        lines += [f"guardrail broken: {b}" for b in self.broken]
        if not self.broken:
            floors = sum(len(p.floors) for p in self.comparisons)
            lines.append(f"guardrail floor holds: {floors} metric(s) over {len(self.comparisons)} case x arm pair(s)")
        return lines


def _listed(found: list[str], allowed: bool, why: str, noun: str, flag: str) -> list[str]:
    if not found:
        return []
    head = f"compared despite {len(found)} {noun}(s) ({flag}):" if allowed else \
        f"{why} — {len(found)} {noun}(s); rerun with {flag} to compare anyway:"
    return [head, *(f"  {line}" for line in found)]


def unverified(paths: RunPaths, trusted: dict) -> list[str]:
    """Every reason this label is not proven: its signature, files against the statement, its consistency."""
    _, found = integrity(paths, trusted)
    return [f"{paths.label}: {where + ': ' if where != '.' else ''}{what}" for where, what in found]


def sides(first: str, second: str | None, arms: tuple[str, str] | None) -> tuple[str, str]:
    """The two sides `bench compare` was given: two labels (each may be LABEL:ARM), or one label and ``--arms A B``.

    ``LABEL --arms A B`` is the documented spelling of ``LABEL:A LABEL:B``; mixing it with a
    second label or with LABEL:ARM would leave which arm is compared with which to a guess.
    """
    if not arms:
        if second is None:
            raise UsageError("compare needs two labels (BASELINE CANDIDATE, each may be LABEL:ARM), "
                             "or one label and --arms A B")
        return first, second
    if second is not None:
        raise UsageError(f"--arms compares two arms of one label; drop {second!r}, or drop --arms and compare "
                         f"{first!r} with {second!r}")
    if arms[0] == arms[1]:
        raise UsageError(f"--arms {arms[0]} {arms[1]} names one arm twice; name the baseline's arm, then the candidate's")
    return f"{first}:{arms[0]}", f"{first}:{arms[1]}"


def compare_labels(baseline: str | Path, candidate: str | Path, results: Path = Path("results"),
                   allow_drift: bool = False, allow_unsigned: bool = False,
                   trusted: dict | None = None) -> CompareReport:
    """Resolve and verify both sides (a label, or LABEL:ARM), check comparability, compare every paired case x arm."""
    (b_paths, base), (c_paths, cand) = load_side(baseline, results), load_side(candidate, results)
    pairs, warnings = pair_arms(base, cand)
    if not pairs:
        raise UsageError(f"{b_paths.dir} and {c_paths.dir} share no case x arm — compare two runs of the same cases")
    drift, declared = find_drift(base, cand, sorted({case for case, _, _ in pairs}))
    trusted = default_trust() if trusted is None else trusted
    report = CompareReport(baseline=str(b_paths.dir), candidate=str(c_paths.dir), allow_drift=allow_drift,
                           allow_unsigned=allow_unsigned, drift=drift, declared=declared, warnings=warnings,
                           comparisons=[], unverified=unverified(b_paths, trusted) + unverified(c_paths, trusted),
                           dry_runs=dry_runs("baseline", base) + dry_runs("candidate", cand))
    if report.refused:
        return report
    for case, b_arm, c_arm in pairs:
        b = [t.result for t in base[case][b_arm]]
        c = [t.result for t in cand[case][c_arm]]
        report.comparisons.append(compare_pair(case, b_arm, c_arm, b, c))
        report.warnings += _few_trials(report.comparisons[-1])
    return report


def dry_runs(side: str, groups: Groups) -> list[str]:
    """A line per case x arm of a side whose trials include a dry run: no agent ran there."""
    return [f"the {side}'s {case}/{arm} is a dry run (--dry-run: no agent ran, the untouched workspace was graded); "
            f"compare labels of real runs" for case, arms in sorted(groups.items()) for arm, trials in sorted(arms.items())
            if any(t.result.dry_run for t in trials)]


def _few_trials(pair: PairComparison) -> list[str]:
    warnings = []
    for side, summary in (("baseline", pair.baseline), ("candidate", pair.candidate)):
        valid = summary.counts[Verdict.PASS] + summary.counts[Verdict.FAIL]
        if valid < MIN_VALID:
            warnings.append(f"{pair.case}/{pair.arm}: the {side} has {valid} valid trial(s); "
                            f"fewer than {MIN_VALID} say little — run more with --trials")
    return warnings


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.3g}"

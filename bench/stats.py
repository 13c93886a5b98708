"""Small-sample statistics for ``bench compare`` and run summaries.

Everything here is pure and computes with the standard library only (``math``,
``random``, ``statistics``), so results are identical on every machine and need
no numeric stack inside the harness.  Spreads and floors are returned as the
record types of bench/models.py (``MetricSpread``, ``FloorRow``), so what is
computed here is what summaries and comparisons write, with no copy in between.

Why these particular choices:

* **Wilson score intervals** for pass rates.  A task is typically run a
  handful of times (n of 3 to 20), where the textbook normal ("Wald")
  interval collapses to zero width at 0/n or n/n and can leave [0, 1].  The
  Wilson interval keeps sensible coverage for small n and extreme rates.
* **Exact tests** (exact binomial, exact McNemar, sign test) rather than
  chi-square approximations.  The approximations assume large expected
  counts; with a few discordant trials they are badly miscalibrated, while
  the exact binomial tail is cheap to compute at these sizes.
* **Seeded paired bootstrap** for differences in continuous metrics.  The
  resampling uses ``random.Random(seed)``, so the same inputs always give
  the same interval: reports are reproducible and diffable.
* **pass@k** uses the unbiased estimator of Chen et al. (2021), not
  ``1 - (1 - p)**k``, which is biased when p is estimated from few trials.
* **Guardrail floors** compare the worst trial on each side, because a
  regression that shows up only in the tail is hidden by averages.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Sequence

from .stat_models import FloorRow, MetricSpread

__all__ = [
    "binomial_two_sided",
    "guardrail_floor",
    "mcnemar_exact",
    "paired_bootstrap_diff",
    "pass_at_k",
    "percent_change",
    "sign_test",
    "spread",
    "wilson_interval",
]

# Relative tolerance used when deciding whether an outcome is "no more
# likely" than the observed one; guards against floating-point ties (the
# same value scipy.stats.binomtest uses).
_TIE_RTOL = 1e-7


def _check_confidence(confidence: float) -> None:
    """Raise ``ValueError`` unless ``0 < confidence < 1``."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def wilson_interval(
    successes: int, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``successes / n``.

    Returns ``(low, high)`` clamped to [0, 1].  With ``n == 0`` nothing is
    known, so the whole range ``(0.0, 1.0)`` is returned.
    """
    _check_confidence(confidence)
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    z = statistics.NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    z2 = z * z
    p = successes / n
    denom = 1.0 + z2 / n
    center = (p + z2 / (2.0 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    # Algebraically low == 0 at 0/n and high == 1 at n/n; pin them so float
    # rounding cannot report e.g. 2.8e-17 instead of 0.
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return (low, high)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k estimate from ``n`` trials of which ``c`` passed.

    ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021, "Evaluating Large
    Language Models Trained on Code").  Returns ``None`` when fewer than
    ``k`` trials exist (not estimable) and ``1.0`` when every size-``k``
    subset must contain a pass (``n - c < k``).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if n < k:
        return None
    if n - c < k:
        return 1.0
    # Exact integer arithmetic, then one correctly rounded division (int / int
    # true division is exact-then-rounded even for huge operands), so e.g.
    # pass_at_k(10, 3, 1) is exactly 0.3 rather than 1 - 0.7.
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def _binom_pmf(i: int, n: int, p: float) -> float:
    """Probability of exactly ``i`` successes in ``n`` Bernoulli(p) trials."""
    if p == 0.0:
        return 1.0 if i == 0 else 0.0
    if p == 1.0:
        return 1.0 if i == n else 0.0
    if n <= 1000:
        # math.comb stays below the float range here, so this is exact up
        # to rounding of the powers.
        return math.comb(n, i) * p**i * (1.0 - p) ** (n - i)
    log_pmf = (
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * math.log(p)
        + (n - i) * math.log1p(-p)
    )
    return math.exp(log_pmf)


def binomial_two_sided(k: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test p-value for ``k`` successes in ``n``.

    Sums the probabilities of every outcome no more likely than the observed
    one (with relative tolerance 1e-7 for float ties), capped at 1.0.  With
    ``n == 0`` there is no evidence at all and the p-value is 1.0.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if n == 0:
        return 1.0
    observed = _binom_pmf(k, n, p)
    threshold = observed * (1.0 + _TIE_RTOL)
    total = math.fsum(
        prob
        for prob in (_binom_pmf(i, n, p) for i in range(n + 1))
        if prob <= threshold
    )
    return min(1.0, total)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact McNemar p-value from discordant pair counts.

    ``b``: pairs where the baseline passed and the candidate failed;
    ``c``: pairs where the baseline failed and the candidate passed.
    Concordant pairs carry no information and are not needed.  Under the
    null each discordant pair is a fair coin, so this is the exact binomial
    test of ``min(b, c)`` out of ``b + c`` at p = 0.5.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be non-negative, got b={b}, c={c}")
    return binomial_two_sided(min(b, c), b + c)


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test on non-tied pairs (ties are dropped first).

    Same computation as :func:`mcnemar_exact`: exact binomial of
    ``min(wins, losses)`` out of ``wins + losses`` at p = 0.5.
    """
    if wins < 0 or losses < 0:
        raise ValueError(
            f"counts must be non-negative, got wins={wins}, losses={losses}"
        )
    return binomial_two_sided(min(wins, losses), wins + losses)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (``q`` in [0, 1]) of sorted data."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return sorted_values[lo]
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def paired_bootstrap_diff(
    pairs: list[tuple[float, float]],
    iterations: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for mean(candidate - baseline).

    ``pairs`` holds ``(baseline, candidate)`` values for the same task or
    trial slot.  Pairs are resampled with replacement (keeping each pair
    together) ``iterations`` times using ``random.Random(seed)``, so the
    result is deterministic for a given seed.  Returns ``(low, high)``; an
    empty input gives ``(0.0, 0.0)``.
    """
    _check_confidence(confidence)
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    if not pairs:
        return (0.0, 0.0)
    diffs = [candidate - baseline for baseline, candidate in pairs]
    n = len(diffs)
    rng = random.Random(seed)
    means = sorted(
        statistics.fmean(rng.choices(diffs, k=n)) for _ in range(iterations)
    )
    alpha = 1.0 - confidence
    return (_percentile(means, alpha / 2.0), _percentile(means, 1.0 - alpha / 2.0))


def spread(values: Iterable[float]) -> MetricSpread | None:
    """Summarise ``values`` as median, minimum and maximum; ``None`` if empty."""
    data = list(values)
    if not data:
        return None
    return MetricSpread(
        median=float(statistics.median(data)),
        low=float(min(data)),
        high=float(max(data)),
        n=len(data),
    )


def percent_change(baseline: float, candidate: float) -> float | None:
    """Change from ``baseline`` to ``candidate`` in percent.

    ``(candidate - baseline) / |baseline| * 100``; dividing by the magnitude
    keeps the sign meaning "candidate is higher" even for a negative
    baseline.  Returns ``None`` when ``baseline == 0`` (undefined).
    """
    if baseline == 0:
        return None
    return (candidate - baseline) / abs(baseline) * 100.0


def guardrail_floor(
    metric: str,
    baseline: list[float],
    candidate: list[float],
    higher_is_better: bool = True,
) -> FloorRow:
    """Check that the candidate's worst trial is no worse than the baseline's.

    ``baseline`` and ``candidate`` hold the metric for each valid trial
    (NaN entries are ignored).  "Worst" is the minimum when
    ``higher_is_better`` and the maximum otherwise; a tie holds.  If either
    side has no values there is nothing to compare: the check holds and
    both worst values are ``None``.
    """
    base = [v for v in baseline if not math.isnan(v)]
    cand = [v for v in candidate if not math.isnan(v)]
    direction = "higher" if higher_is_better else "lower"
    if not base or not cand:
        return FloorRow(metric=metric, baseline_worst=None, candidate_worst=None, holds=True, direction=direction)
    worst = min if higher_is_better else max
    base_worst = float(worst(base))
    cand_worst = float(worst(cand))
    if higher_is_better:
        holds = cand_worst >= base_worst
    else:
        holds = cand_worst <= base_worst
    return FloorRow(metric=metric, baseline_worst=base_worst, candidate_worst=cand_worst, holds=holds,
                    direction=direction)

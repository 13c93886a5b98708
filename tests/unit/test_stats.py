"""Known-answer tests for bench.stats.

Every expected value is a literal worked out by hand (arithmetic in the
comment next to it) and was cross-checked against scipy.stats when the tests
were written; the tests themselves need nothing beyond pytest.
"""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from bench.stat_models import FloorRow, MetricSpread
from bench.stats import (
    binomial_two_sided,
    guardrail_floor,
    mcnemar_exact,
    paired_bootstrap_diff,
    pass_at_k,
    percent_change,
    sign_test,
    spread,
    wilson_interval,
)

# z for 95% two-sided = NormalDist().inv_cdf(0.975) = 1.959964, z^2 = 3.841459

# ---------------------------------------------------------------- wilson


def test_wilson_8_of_10():
    # p = 0.8, n = 10, denom = 1 + z^2/n = 1.384146
    # center = (0.8 + z^2/20) / denom = 0.992073 / 1.384146 = 0.716740
    # half = z/denom * sqrt(0.8*0.2/10 + z^2/400) = 1.416010 * 0.160011 = 0.226578
    # -> (0.490162, 0.943318)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


def test_wilson_0_of_10():
    # p = 0: center = (z^2/20) / 1.384146 = 0.138766
    # half = 1.416010 * sqrt(z^2/400) = 1.416010 * 0.097998 = 0.138766
    # -> low = 0 exactly, high = 0.277533
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775, abs=1e-4)


def test_wilson_10_of_10_mirrors_0_of_10():
    # symmetry: interval(n-s, n) = 1 - reversed(interval(s, n))
    # -> (1 - 0.277533, 1) = (0.722467, 1.0)
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7225, abs=1e-4)
    assert high == 1.0


def test_wilson_half_is_symmetric():
    # p = 0.5: center = (0.5 + 0.192073) / 1.384146 = 0.5
    # half = 1.416010 * sqrt(0.025 + 0.009604) = 1.416010 * 0.186021 = 0.263407
    # -> (0.236593, 0.763407)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4)
    assert high == pytest.approx(0.7634, abs=1e-4)
    assert low + high == pytest.approx(1.0)


def test_wilson_90_percent():
    # z = inv_cdf(0.95) = 1.644854, z^2 = 2.705543, denom = 1.270554
    # center = (0.8 + 0.135277) / 1.270554 = 0.736117
    # half = 1.294595 * sqrt(0.016 + 0.006764) = 1.294595 * 0.150877 = 0.195325
    # -> (0.540793, 0.931442)
    low, high = wilson_interval(8, 10, confidence=0.90)
    assert low == pytest.approx(0.5408, abs=1e-4)
    assert high == pytest.approx(0.9314, abs=1e-4)


def test_wilson_empty_is_whole_range():
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("successes", "n", "confidence"),
    [(-1, 10, 0.95), (11, 10, 0.95), (1, -1, 0.95), (1, 2, 0.0), (1, 2, 1.0)],
)
def test_wilson_rejects_bad_input(successes, n, confidence):
    with pytest.raises(ValueError):
        wilson_interval(successes, n, confidence)


# ---------------------------------------------------------------- pass@k


def test_pass_at_1_is_pass_rate():
    # 1 - C(7,1)/C(10,1) = 1 - 7/10 = 0.3 (exact: computed as 3/10)
    assert pass_at_k(10, 3, 1) == 0.3


def test_pass_at_2_of_5():
    # 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)


def test_pass_at_5_of_10():
    # 1 - C(7,5)/C(10,5) = 1 - 21/252 = 231/252 = 0.916667
    assert pass_at_k(10, 3, 5) == pytest.approx(231 / 252)


def test_pass_at_k_none_when_too_few_trials():
    assert pass_at_k(2, 1, 3) is None


def test_pass_at_k_certain_when_failures_fewer_than_k():
    # n - c = 5 - 3 = 2 < k = 3: every 3-subset contains a pass
    assert pass_at_k(5, 3, 3) == 1.0
    assert pass_at_k(4, 4, 1) == 1.0


def test_pass_at_k_zero_passes():
    # 1 - C(3,1)/C(3,1) = 0
    assert pass_at_k(3, 0, 1) == 0.0


@pytest.mark.parametrize(("n", "c", "k"), [(5, 2, 0), (5, 6, 1), (5, -1, 1)])
def test_pass_at_k_rejects_bad_input(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


# ---------------------------------------------------------------- binomial


def test_binomial_empty_is_one():
    assert binomial_two_sided(0, 0) == 1.0


def test_binomial_centre_capped_at_one():
    # k = 5 of 10 is the mode: every outcome counts -> sum = 1 (capped)
    assert binomial_two_sided(5, 10) == 1.0


def test_binomial_ties_are_included():
    # P(4) = P(6) = 210/1024; all outcomes except k=5 (252/1024) are no more
    # likely -> (1024 - 252)/1024 = 772/1024 = 0.75390625
    assert binomial_two_sided(4, 10) == pytest.approx(0.75390625)


def test_binomial_2_of_10():
    # 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * 56 / 1024 = 0.109375
    assert binomial_two_sided(2, 10) == pytest.approx(0.109375)


def test_binomial_asymmetric_p():
    # n=4, p=0.25: pmf = (81, 108, 54, 12, 1)/256; observed k=3 -> 12/256
    # outcomes no more likely: k=3, k=4 -> 13/256 = 0.05078125
    assert binomial_two_sided(3, 4, p=0.25) == pytest.approx(0.05078125)


def test_binomial_degenerate_p():
    # p = 0: only k = 0 is possible
    assert binomial_two_sided(0, 5, p=0.0) == 1.0
    assert binomial_two_sided(1, 5, p=0.0) == 0.0


def test_binomial_large_n_uses_log_space():
    # n > 1000 takes the lgamma path; reference value from
    # scipy.stats.binomtest(50, 2000, 0.02).pvalue = 0.110038344037780
    assert binomial_two_sided(50, 2000, p=0.02) == pytest.approx(
        0.110038344037780, rel=1e-9
    )


@pytest.mark.parametrize(("k", "n", "p"), [(-1, 5, 0.5), (6, 5, 0.5), (1, 5, 1.5)])
def test_binomial_rejects_bad_input(k, n, p):
    with pytest.raises(ValueError):
        binomial_two_sided(k, n, p)


# ---------------------------------------------------------------- mcnemar / sign


def test_mcnemar_all_discordant_one_way():
    # 2 * 0.5^6 = 2/64 = 0.03125
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125)


def test_mcnemar_one_vs_five():
    # 2 * (C(6,0) + C(6,1)) / 2^6 = 2 * (1 + 6) / 64 = 0.21875
    assert mcnemar_exact(1, 5) == pytest.approx(0.21875)


def test_mcnemar_is_symmetric():
    assert mcnemar_exact(5, 1) == mcnemar_exact(1, 5)


def test_mcnemar_balanced_is_one():
    # k = 3 of 6 is the mode -> 1.0
    assert mcnemar_exact(3, 3) == 1.0


def test_mcnemar_no_discordant_pairs():
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_rejects_negative():
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_sign_test():
    # 2 * (1 + 10 + 45) / 1024 = 112/1024 = 0.109375
    assert sign_test(8, 2) == pytest.approx(0.109375)
    assert sign_test(2, 8) == sign_test(8, 2)
    assert sign_test(0, 0) == 1.0


def test_sign_test_rejects_negative():
    with pytest.raises(ValueError):
        sign_test(3, -1)


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_empty():
    assert paired_bootstrap_diff([]) == (0.0, 0.0)


def test_bootstrap_identical_differences_is_degenerate():
    # every candidate - baseline = 0.25, so every resampled mean is 0.25
    pairs = [(1.0, 1.25), (2.0, 2.25), (0.5, 0.75), (3.0, 3.25)]
    assert paired_bootstrap_diff(pairs, iterations=500) == (0.25, 0.25)


def test_bootstrap_identical_inexact_differences():
    # 0.3 - 0.1 etc. are not exactly representable; still ~degenerate
    pairs = [(0.1, 0.4), (0.2, 0.5), (0.7, 1.0)]
    low, high = paired_bootstrap_diff(pairs, iterations=500)
    assert low == pytest.approx(0.3)
    assert high == pytest.approx(0.3)


def test_bootstrap_is_deterministic_for_a_seed():
    pairs = [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
    first = paired_bootstrap_diff(pairs, iterations=2000, seed=7)
    second = paired_bootstrap_diff(pairs, iterations=2000, seed=7)
    assert first == second


def test_bootstrap_seed_changes_result():
    pairs = [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0), (1.0, 1.0), (0.0, 1.0),
             (0.2, 0.9), (0.4, 0.1)]
    assert paired_bootstrap_diff(pairs, iterations=200, seed=1) != (
        paired_bootstrap_diff(pairs, iterations=200, seed=2)
    )


def test_bootstrap_bounds_and_order():
    # differences are 0 or 1 -> every resampled mean lies in [0, 1];
    # the observed mean 3/5 = 0.6 sits inside the interval
    pairs = [(0.0, 1.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (0.0, 1.0)]
    low, high = paired_bootstrap_diff(pairs, iterations=2000)
    assert 0.0 <= low <= 0.6 <= high <= 1.0


def test_bootstrap_clear_improvement_excludes_zero():
    # differences 0.9..1.1, all positive -> interval entirely above zero
    pairs = [(0.0, 1.0), (0.0, 0.9), (0.0, 1.1), (0.0, 1.0), (0.0, 0.95)]
    low, high = paired_bootstrap_diff(pairs)
    assert 0.9 <= low < high <= 1.1


@pytest.mark.parametrize(
    "kwargs", [{"iterations": 0}, {"confidence": 0.0}, {"confidence": 1.0}]
)
def test_bootstrap_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        paired_bootstrap_diff([(0.0, 1.0)], **kwargs)


# ---------------------------------------------------------------- spread / change


def test_spread_odd():
    assert spread([3.0, 1.0, 2.0]) == MetricSpread(median=2.0, low=1.0, high=3.0, n=3)


def test_spread_even_median_averages_middle():
    # sorted 1, 2, 3, 10 -> median (2 + 3)/2 = 2.5
    assert spread([10, 1, 3, 2]) == MetricSpread(median=2.5, low=1.0, high=10.0, n=4)


def test_spread_accepts_iterables():
    assert spread(x for x in (4.0,)) == MetricSpread(median=4.0, low=4.0, high=4.0, n=1)


def test_spread_empty():
    assert spread([]) is None


def test_spread_is_frozen():
    s = spread([1.0])
    with pytest.raises(ValidationError, match="frozen"):
        s.median = 2.0  # type: ignore[misc]


def test_percent_change():
    # (150 - 200)/200 * 100 = -25; (5 - 4)/4 * 100 = 25
    assert percent_change(200.0, 150.0) == pytest.approx(-25.0)
    assert percent_change(4.0, 5.0) == pytest.approx(25.0)
    assert percent_change(3.0, 3.0) == 0.0


def test_percent_change_negative_baseline_keeps_direction():
    # (-25 - -50)/|-50| * 100 = +50: candidate is higher
    assert percent_change(-50.0, -25.0) == pytest.approx(50.0)


def test_percent_change_zero_baseline():
    assert percent_change(0.0, 5.0) is None
    assert percent_change(0, 0) is None


# ---------------------------------------------------------------- guardrail floor


def test_floor_equal_worst_holds():
    check = guardrail_floor("score", [0.5, 0.9, 0.7], [0.5, 0.6])
    assert check == FloorRow(metric="score", baseline_worst=0.5, candidate_worst=0.5, holds=True)


def test_floor_one_trial_below_breaks():
    # candidate mean is higher, but its worst trial (0.4) < baseline worst (0.5)
    check = guardrail_floor("score", [0.5, 0.6], [0.95, 0.99, 0.4])
    assert check == FloorRow(metric="score", baseline_worst=0.5, candidate_worst=0.4, holds=False)


def test_floor_lower_is_better():
    # worst = max; candidate worst 12 <= baseline worst 12 holds, 13 breaks
    ok = guardrail_floor("seconds", [10.0, 12.0], [11.0, 12.0], higher_is_better=False)
    assert ok == FloorRow(metric="seconds", baseline_worst=12.0, candidate_worst=12.0, holds=True, direction="lower")
    bad = guardrail_floor("seconds", [10.0, 12.0], [5.0, 13.0], higher_is_better=False)
    assert bad == FloorRow(metric="seconds", baseline_worst=12.0, candidate_worst=13.0, holds=False,
                           direction="lower")
    # a smaller minimum is irrelevant when lower is better
    better = guardrail_floor("seconds", [10.0, 12.0], [1.0, 2.0], higher_is_better=False)
    assert better.holds


@pytest.mark.parametrize(
    ("baseline", "candidate"), [([], [0.5]), ([0.5], []), ([], [])]
)
def test_floor_empty_side_holds_without_values(baseline, candidate):
    check = guardrail_floor("score", baseline, candidate)
    assert check == FloorRow(metric="score", baseline_worst=None, candidate_worst=None, holds=True)


def test_floor_ignores_nan_trials():
    check = guardrail_floor("score", [0.5, math.nan], [math.nan, 0.6])
    assert check == FloorRow(metric="score", baseline_worst=0.5, candidate_worst=0.6, holds=True)
    only_nan = guardrail_floor("score", [0.5], [math.nan])
    assert only_nan == FloorRow(metric="score", baseline_worst=None, candidate_worst=None, holds=True)

from bench.exit_status import ALL_PASS, FAILED, NO_VERDICT, exit_status
from bench.models import Verdict


def test_every_pass_is_zero():
    assert exit_status([Verdict.PASS, Verdict.PASS]) == ALL_PASS


def test_a_fail_wins_over_error_and_incomplete():
    assert exit_status([Verdict.PASS, Verdict.ERROR, Verdict.FAIL, Verdict.INCOMPLETE]) == FAILED


def test_error_or_incomplete_without_fail_is_three():
    assert exit_status([Verdict.PASS, Verdict.ERROR]) == NO_VERDICT
    assert exit_status([Verdict.INCOMPLETE]) == NO_VERDICT


def test_a_failed_assessment_is_one_even_when_every_trial_passed():
    assert exit_status([Verdict.PASS], assessment_failed=True) == FAILED


def test_nothing_recorded_is_no_verdict():
    assert exit_status([]) == NO_VERDICT

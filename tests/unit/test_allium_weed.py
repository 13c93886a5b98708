"""The weed scorer: findings split, matched one-to-one, false positives counted; hand-computed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.allium import WeedManifest, WeedThresholds, load_weed_manifest, score_weed, split_findings

ROOT = Path(__file__).resolve().parents[2]
ORACLE = (ROOT / "goldens/weed-courier/solution/weed-findings.md").read_text()
MANIFEST = load_weed_manifest(ROOT / "goldens/weed-courier/divergences.toml")
INVENTED = [
    "## Driver ratings are not modelled\n\nDrivers have no rating in the spec; customers rate them in the app.\n",
    "## Tracking page shows the wrong timezone\n\nTracking times are rendered in UTC.\n",
]


def sections(report: str) -> list[str]:
    head, *rest = report.split("\n## ")
    return [head] + ["## " + part for part in rest]


def without(report: str, *titles: str) -> str:
    return "\n".join(s for s in sections(report) if not any(s.startswith("## " + t) for t in titles))


def test_the_oracle_findings_pass():
    score = score_weed(ORACLE, MANIFEST)
    assert score.passed and score.reasons == []
    assert score.value("divergence_recall") == 1 and score.value("false_positive_count") == 0
    assert score.review["found"] == [d.id for d in MANIFEST.divergences]


def test_each_oracle_finding_fits_exactly_its_own_divergence():
    """The fingerprints are distinctive: no finding could be credited to another divergence."""
    from bench.allium.terms import fingerprint_holds

    findings = split_findings(ORACLE)
    fits = [[j for j, f in enumerate(findings) if fingerprint_holds(f.text, d.must_all, d.must_any)]
            for d in MANIFEST.divergences]
    assert fits == [[0], [1], [2], [3], [4], [5]]


def test_missing_two_divergences_is_recall_four_of_six():
    report = without(ORACLE, "Config drift", "Guard drift")
    score = score_weed(report, MANIFEST)
    assert score.value("divergence_recall") == pytest.approx(4 / 6)
    assert score.reasons == ["divergence_recall 0.667 < 0.8"]
    assert score.review["missed"] == ["config-drift", "dispatch-shift-guard"]


def test_two_invented_findings_are_two_false_positives():
    score = score_weed(ORACLE + "\n" + "\n".join(INVENTED), MANIFEST)
    assert score.value("false_positive_count") == 2 and score.value("divergence_recall") == 1
    assert score.reasons == ["false_positive_count 2 > 1"]
    assert score.review["false_positives"] == ["Driver ratings are not modelled", "Tracking page shows the wrong timezone"]


def test_one_false_positive_is_tolerated_by_the_seed_gate():
    assert score_weed(ORACLE + "\n" + INVENTED[0], MANIFEST).passed


def test_declared_judgement_calls_are_excused():
    extra = ("## LoyaltyPoints is not in the spec\n\nThe loyalty model exists in the code.\n"
             "## SMS notifications are missing\n\nnotify_by_sms is never described.\n")
    score = score_weed(ORACLE + "\n" + extra, MANIFEST)
    assert score.value("false_positive_count") == 0 and score.passed
    assert score.review["excused"] == ["LoyaltyPoints is not in the spec", "SMS notifications are missing"]


def test_no_report_misses_everything():
    score = score_weed(None, MANIFEST)
    assert not score.passed and score.value("divergence_recall") == 0
    assert score.reasons[0] == "no findings report (weed-findings.md) was written"


def test_an_all_clear_is_no_findings_not_a_false_positive():
    score = score_weed("# Report\n\nNo divergences found.\n", MANIFEST)
    assert score.value("false_positive_count") == 0 and score.value("divergence_recall") == 0


def test_findings_fall_back_to_bullets_then_the_whole_text():
    assert [f.title for f in split_findings("Intro\n- first thing\n  more\n* second\n")] == ["first thing", "second"]
    assert [f.title for f in split_findings("just one paragraph\nof text")] == ["just one paragraph"]
    assert split_findings("   \n") == []


def toy(**overrides) -> WeedManifest:
    data = {"fixture": "toy", "planted_spec": "spec.allium", "divergences": [
        {"id": "a", "shape": "config drift", "summary": "", "must_all": ["alpha"]},
        {"id": "b", "shape": "guard drift", "summary": "", "must_all": ["beta"]},
    ]}
    return WeedManifest.model_validate({**data, **overrides})


def test_one_finding_is_credited_to_one_divergence_only():
    score = score_weed("## alpha and beta both drift\n", toy())
    assert score.value("divergence_recall") == 0.5 and score.value("false_positive_count") == 0


def test_the_matching_is_maximal_not_greedy():
    """A vague finding fitting both must leave the specific one to the divergence only it fits."""
    score = score_weed("## alpha beta\n## alpha\n", toy(divergences=[
        {"id": "a", "shape": "s", "summary": "", "must_all": ["alpha"]},
        {"id": "ab", "shape": "s", "summary": "", "must_all": ["alpha"], "must_any": ["beta"]},
    ]))
    assert score.value("divergence_recall") == 1


def test_a_gate_may_declare_its_own_thresholds():
    report = without(ORACLE, "Config drift", "Guard drift")
    assert score_weed(report, MANIFEST, WeedThresholds(divergence_recall=0.6)).passed
    assert score_weed(ORACLE + "\n" + INVENTED[0], MANIFEST, WeedThresholds(max_false_positives=0)).reasons == [
        "false_positive_count 1 > 0"]


def test_metric_directions_feed_the_guardrail():
    score = score_weed(ORACLE, MANIFEST)
    assert {n: m.direction for n, m in score.metrics.items()} == {
        "divergence_recall": "higher", "false_positive_count": "lower"}

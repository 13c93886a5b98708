"""Known-answer tests for run summaries and `bench compare`.

Result sets are synthetic: a small builder writes result.json and provenance.json
through the pydantic models into tmp_path, in the real results layout, so the code
under test reads exactly what a run would have written. Expected numbers are worked
out by hand in the comment beside them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.compare import compare_labels
from bench.errors import UsageError
from bench.models import (AgentRecord, ArmSpec, CaseRecord, EngineRecord, HarnessRecord, ImageRecord, Limits,
                          PluginRecord, Provenance, SubjectRecord, Verdict)
from bench.result_models import CheckResult, TrialResult
from bench.stat_models import Summary
from bench.paths import RunPaths
from bench.run import write_summary
from bench.stats import paired_bootstrap_diff
from tests.labels import seal, wheel_digest

WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)


def write_trial(label: Path, n: int, verdict: str = "PASS", *, case: str = "c", arm: str = "default",
                recall: float | None = None, usage: dict[str, float] | None = None, wall: float = 10.0,
                goldens: str = "sha256:g1", grader: str = "sha256:grader1", grader_digest: str | None = None,
                seat: str = "none", false_positives: float | None = None, plugin: str | None = None,
                fixture: str | None = None, wheel: str = "w1", provenance: bool = True,
                subject: SubjectRecord | None = None, built_on: str | None = None) -> None:
    """One trial folder as `bench run` lays it out; keyword arguments set what a test varies."""
    paths = RunPaths(label).trial(case, arm, n)
    paths.dir.mkdir(parents=True, exist_ok=True)
    checks = []
    if verdict in ("PASS", "FAIL"):
        checks = [
            CheckResult(name="build", kind="command", gating=True, passed=verdict == "PASS"),
            CheckResult(name="gate", kind="command", gating=False, passed=True,
                        metrics={} if recall is None else {"recall": recall}),
        ]
        if false_positives is not None:  # a weed check: recall held at 1, false positives lower-is-better
            checks.append(CheckResult(name="weed", kind="allium-weed", gating=True, passed=verdict == "PASS",
                                      metrics={"divergence_recall": 1.0, "false_positive_count": false_positives},
                                      directions={"divergence_recall": "higher", "false_positive_count": "lower"}))
    result = TrialResult(
        run_id="r", label=label.name, case=case, arm=arm, trial=n, agent="oracle", verdict=Verdict(verdict),
        checks=checks, phases={"agent": wall - 1.0, "grade": 1.0}, usage=usage or {}, started_at=WHEN,
    )
    paths.result.write_text(result.model_dump_json(indent=2))
    if not provenance:
        return
    record = Provenance(
        harness=HarnessRecord(version="0.1.0", git_sha=None, dirty=False, wheel_sha256=wheel_digest(wheel)),
        case=CaseRecord(id=case, visible_hash="sha256:v1", goldens_hash=goldens, fixture="courier" if fixture else None,
                        fixture_hash=fixture),
        plugin=PluginRecord(origin=f"/p/{arm}", tarball_sha256=plugin, files=1) if plugin else None,
        arm=arm, images={"grader": ImageRecord(name="base", tag="bench/base:1", id=grader, content_digest=grader_digest,
                                               built_on=built_on)},
        subject=subject, arm_spec=ArmSpec(name=arm, subject=subject.origin) if subject and subject.source != "registry"
        else None,
        agent=AgentRecord(name="oracle", version="0.1.0"), seat={"class": seat},
        engine=EngineRecord("24.0", "1.43"), limits=Limits(), command_line=["bench"], recorded_at=WHEN,
    )
    paths.provenance.write_text(record.model_dump_json(indent=2))


def write_label(root: Path, name: str, verdicts: list[str], **kwargs) -> Path:
    """A signed label whose trial n has verdicts[n-1]; a list-valued kwarg gives one value per trial."""
    label = root / name
    for n, verdict in enumerate(verdicts, start=1):
        each = {k: v[n - 1] if isinstance(v, list) else v for k, v in kwargs.items()}
        write_trial(label, n, verdict, **each)
    seal(label, wheel=kwargs.get("wheel", "w1"))
    return label


def invoke(*args: str):
    return CliRunner().invoke(cli, ["compare", *args], catch_exceptions=False)


# --- summary --------------------------------------------------------------------------


def test_summary_has_wilson_pass_at_k_checks_and_metrics(tmp_path: Path):
    verdicts = ["PASS", "FAIL", "FAIL", "ERROR", "PASS", "FAIL", "INCOMPLETE", "FAIL"]
    label = write_label(tmp_path, "s", verdicts, recall=[0.5, 0.7, 0.9, None, 0.6, 0.8, None, 1.0],
                        wall=[4.0, 6.0, 8.0, 100.0, 10.0, 12.0, 100.0, 14.0], usage={"turns": 3.0})
    write_summary(RunPaths(label), "r", [])
    summary = Summary.model_validate_json((label / "summary.json").read_text())
    arm = summary.arms[0]
    assert arm.counts == {Verdict.PASS: 2, Verdict.FAIL: 4, Verdict.INCOMPLETE: 1, Verdict.ERROR: 1}
    assert arm.pass_rate == pytest.approx(1 / 3)
    # 2/6: denom = 1 + 3.841459/6 = 1.640243; center = (0.333333 + 0.320122)/denom = 0.398385
    # half = 1.959964/denom * sqrt(0.222222/6 + 3.841459/144) = 1.194925 * 0.252416 = 0.301621
    # -> (0.096771, 0.700007)
    low, high = arm.pass_interval
    assert low == pytest.approx(0.0968, abs=1e-4)
    assert high == pytest.approx(0.7000, abs=1e-4)
    # pass@1 = 2/6; pass@3 = 1 - C(4,3)/C(6,3) = 1 - 4/20; pass@5 = 1 (only 4 fails); no pass@10 with 6 trials
    assert arm.pass_at_k == pytest.approx({1: 1 / 3, 3: 0.8, 5: 1.0})
    tallies = {t.name: t for t in arm.checks}
    assert (tallies["build"].passed, tallies["build"].total, tallies["build"].gating) == (2, 6, True)
    assert (tallies["gate"].passed, tallies["gate"].gating) == (6, False)
    recall = tallies["gate"].metrics["recall"]
    assert (recall.median, recall.low, recall.high, recall.n) == (pytest.approx(0.75), 0.5, 1.0, 6)
    # wall time over valid trials only: 4, 6, 8, 10, 12, 14 -> median 9; the 100 s ERROR/INCOMPLETE are left out
    wall = arm.metrics["wall_s"]
    assert (wall.median, wall.low, wall.high) == (9.0, 4.0, 14.0)
    assert arm.metrics["turns"].median == 3.0


def test_summary_without_graded_trials_has_no_interval(tmp_path: Path):
    label = write_label(tmp_path, "e", ["ERROR", "INCOMPLETE"])
    arm = write_summary(RunPaths(label), "r", []).arms[0]
    assert (arm.pass_rate, arm.pass_interval, arm.pass_at_k, arm.metrics) == (None, None, {}, {})


# --- paired statistics ----------------------------------------------------------------


def test_mcnemar_and_bootstrap_known_table(tmp_path: Path):
    # pairs: trials 1-5 baseline PASS / candidate FAIL (b = 5), trial 6 both PASS; c = 0
    # exact McNemar = 2 * 0.5**5 = 0.0625
    base = write_label(tmp_path, "base", ["PASS"] * 6)
    cand = write_label(tmp_path, "cand", ["FAIL"] * 5 + ["PASS"])
    report = compare_labels(base, cand)
    pair = report.comparisons[0]
    assert (pair.pairs, pair.discordant) == (6, (5, 0))
    assert pair.mcnemar_p == pytest.approx(0.0625)
    expected = paired_bootstrap_diff([(1.0, 0.0)] * 5 + [(1.0, 1.0)])
    assert pair.diff_interval == expected
    assert compare_labels(base, cand).comparisons[0].diff_interval == expected
    assert -1.0 <= expected[0] <= expected[1] <= 0.0


def test_only_valid_trials_pair(tmp_path: Path):
    # trial 2 is ERROR on the baseline and trial 3 INCOMPLETE on the candidate: only 1 and 4 pair
    base = write_label(tmp_path, "base", ["PASS", "ERROR", "PASS", "FAIL"])
    cand = write_label(tmp_path, "cand", ["FAIL", "PASS", "INCOMPLETE", "FAIL"])
    pair = compare_labels(base, cand).comparisons[0]
    assert (pair.pairs, pair.discordant, pair.mcnemar_p) == (2, (1, 0), 1.0)


def test_single_arms_with_different_names_pair(tmp_path: Path):
    base = write_label(tmp_path, "base", ["PASS"] * 3, arm="plain")
    cand = write_label(tmp_path, "cand", ["PASS"] * 3, arm="with-docs")
    pair = compare_labels(base, cand).comparisons[0]
    assert (pair.baseline_arm, pair.candidate_arm, pair.arm, pair.pairs) == ("plain", "with-docs", "plain→with-docs", 3)


# --- guardrail floor ------------------------------------------------------------------


def test_floor_equal_worst_holds(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, recall=[0.8, 0.9, 1.0])
    write_label(tmp_path, "cand", ["PASS"] * 3, recall=[0.85, 0.8, 0.95])
    result = invoke("base", "cand", "--results", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "guardrail floor holds: 2 metric(s) over 1 case x arm pair(s)" in result.stdout


def test_floor_one_candidate_trial_below_breaks_naming_the_metric(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, recall=[0.8, 0.9, 1.0])
    write_label(tmp_path, "cand", ["PASS"] * 3, recall=[0.95, 0.79, 1.0])
    result = invoke("base", "cand", "--results", str(tmp_path))
    assert result.exit_code == 1
    assert "guardrail broken: c/default: gate/recall — candidate worst 0.79 is below baseline worst 0.8" \
        in result.stdout
    assert "pass —" not in result.stdout  # every trial passed on both sides: that floor holds


def test_floor_on_pass_breaks_when_the_candidate_fails_where_the_baseline_never_did(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["PASS", "FAIL", "PASS"])
    result = invoke("base", "cand", "--results", str(tmp_path), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["broken"] == ["c/default: pass — candidate worst 0 is below baseline worst 1"]
    assert report["exit_code"] == 1 and report["refused"] is False


# --- comparability --------------------------------------------------------------------


def test_goldens_drift_is_refused_listing_the_difference(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, goldens="sha256:g1")
    write_label(tmp_path, "cand", ["PASS"] * 3, goldens="sha256:g2")
    result = invoke("base", "cand", "--results", str(tmp_path))
    assert result.exit_code == 3  # refused as not comparable, never confused with a broken floor (1)
    assert "not comparable — 1 difference(s); rerun with --allow-drift" in result.stdout
    assert "c: goldens_hash differs — baseline sha256:g1; candidate sha256:g2" in result.stdout
    assert "guardrail" not in result.stdout and "pass rate" not in result.stdout


def test_allow_drift_proceeds_and_still_lists_the_difference(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, goldens="sha256:g1")
    write_label(tmp_path, "cand", ["PASS"] * 3, goldens="sha256:g2")
    result = invoke("base", "cand", "--results", str(tmp_path), "--allow-drift")
    assert result.exit_code == 0, result.output
    assert "compared despite 1 difference(s) (--allow-drift)" in result.stdout
    assert "c: goldens_hash differs — baseline sha256:g1; candidate sha256:g2" in result.stdout
    assert "guardrail floor holds" in result.stdout


@pytest.mark.parametrize("field, base, cand, where", [
    ("grader image content", {"grader": "sha256:grader1"}, {"grader": "sha256:grader2"}, "c"),
    ("seat class", {"seat": "fallback"}, {"seat": "real"}, "c"),
    ("harness wheel_sha256", {"wheel": "w1"}, {"wheel": "w2"}, "harness"),
])
def test_every_comparability_fact_is_checked(tmp_path: Path, field, base, cand, where):
    write_label(tmp_path, "base", ["PASS"] * 3, **base)
    write_label(tmp_path, "cand", ["PASS"] * 3, **cand)
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert [(d.where, d.field) for d in report.drift] == [(where, field)]
    assert report.refused and report.exit_code == 3 and report.comparisons == []


def test_grader_images_with_equal_content_digests_compare_across_machines(tmp_path: Path):
    """Two machines' builds: other image IDs, the same content digest — comparable (issue 12)."""
    write_label(tmp_path, "base", ["PASS"] * 3, grader="sha256:machine-a", grader_digest="sha256:content1")
    write_label(tmp_path, "cand", ["PASS"] * 3, grader="sha256:machine-b", grader_digest="sha256:content1")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert report.drift == [] and not report.refused


def test_grader_content_that_differs_is_named_as_drift(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, grader="sha256:machine-a", grader_digest="sha256:content1")
    write_label(tmp_path, "cand", ["PASS"] * 3, grader="sha256:machine-a", grader_digest="sha256:content2")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert [str(d) for d in report.drift] == [
        "c: grader image content differs — baseline base sha256:content1; candidate base sha256:content2"]
    assert report.refused


def test_missing_provenance_and_mixed_values_are_drift(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, goldens=["sha256:g1", "sha256:g1", "sha256:g9"])
    write_label(tmp_path, "cand", ["PASS"] * 3, provenance=[True, False, True])
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    goldens = next(d for d in report.drift if d.field == "goldens_hash")
    assert goldens.baseline == ["sha256:g1", "sha256:g9"]
    assert "(no provenance.json)" in goldens.candidate
    assert report.refused


# --- usage and warnings ---------------------------------------------------------------


def test_few_valid_trials_warn_on_stderr(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS", "PASS", "ERROR"])
    write_label(tmp_path, "cand", ["PASS", "PASS", "PASS"])
    result = invoke("base", "cand", "--results", str(tmp_path))
    assert result.exit_code == 0
    assert "warning: c/default: the baseline has 2 valid trial(s)" in result.stderr
    assert "candidate has" not in result.stderr


def test_labels_resolve_by_path_as_well_as_by_name(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["PASS"] * 3)
    result = invoke(str(tmp_path / "base"), "cand", "--results", str(tmp_path), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0
    assert report["baseline"] == str((tmp_path / "base").resolve())
    assert report["comparisons"][0]["baseline"]["pass_interval"][1] == 1.0


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True)


def test_missing_label_exits_2_naming_the_path_and_the_fix(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    done = _bench("compare", "base", "nowhere", "--results", str(tmp_path))
    assert done.returncode == 2
    message = " ".join(done.stderr.split())  # rich wraps long lines
    assert "nowhere: no such label folder" in message and str(tmp_path / "nowhere") in message
    assert "--results" in message


def test_label_without_trials_exits_2(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    (tmp_path / "empty").mkdir()
    done = _bench("compare", "base", "empty", "--results", str(tmp_path))
    assert done.returncode == 2
    assert "holds no trial results" in " ".join(done.stderr.split())


# --- metric directions, arms of one label, fixtures and plugin checkouts (issue 13) ---


def test_a_lower_is_better_metric_breaks_when_the_candidates_worst_rises(tmp_path: Path):
    """The seed's weed guardrail: the candidate's worst false-positive count may not exceed the baseline's worst."""
    write_label(tmp_path, "base", ["PASS"] * 3, false_positives=[0.0, 1.0, 0.0])
    write_label(tmp_path, "cand", ["PASS"] * 3, false_positives=[0.0, 0.0, 1.0])
    held = invoke("base", "cand", "--results", str(tmp_path), "--json")
    assert held.exit_code == 0, held.output
    write_label(tmp_path, "worse", ["PASS", "PASS", "FAIL"], false_positives=[0.0, 0.0, 2.0])
    result = invoke("base", "worse", "--results", str(tmp_path), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 1
    assert "c/default: weed/false_positive_count — candidate worst 2 is above baseline worst 1" in report["broken"]
    floors = {f["metric"]: f for f in report["comparisons"][0]["floors"]}
    assert floors["weed/false_positive_count"]["direction"] == "lower"
    assert floors["weed/divergence_recall"] == {"metric": "weed/divergence_recall", "baseline_worst": 1.0,
                                                "candidate_worst": 1.0, "holds": True, "direction": "higher"}


def test_fewer_false_positives_than_the_baseline_hold(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, false_positives=1.0)
    write_label(tmp_path, "cand", ["PASS"] * 3, false_positives=0.0)
    assert compare_labels(tmp_path / "base", tmp_path / "cand").exit_code == 0


def _two_arms(tmp_path: Path, name: str, base: dict, cand: dict) -> Path:
    label = tmp_path / name
    for n in (1, 2, 3):  # interleaved, as a run writes them; a list-valued kwarg gives one value per trial
        for arm, kwargs in (("base", base), ("cand", cand)):
            write_trial(label, n, arm=arm, **{k: v[n - 1] if isinstance(v, list) else v for k, v in kwargs.items()})
    seal(label)
    return label


def test_two_arms_of_one_label_compare_as_label_colon_arm(tmp_path: Path):
    _two_arms(tmp_path, "ab", {"plugin": "a" * 64, "false_positives": 0.0}, {"plugin": "b" * 64, "false_positives": 1.0})
    result = invoke("ab:base", "ab:cand", "--results", str(tmp_path), "--json")
    report = json.loads(result.stdout)
    pair = report["comparisons"][0]
    assert (pair["baseline_arm"], pair["candidate_arm"], pair["pairs"]) == ("base", "cand", 3)
    assert result.exit_code == 1 and report["drift"] == []  # other plugins per arm are the experiment, not drift
    assert report["broken"] == ["c/base→cand: weed/false_positive_count — candidate worst 1 is above baseline worst 0"]
    with pytest.raises(UsageError, match="ab has no arm 'nope'; its arms are base, cand"):
        compare_labels("ab:base", "ab:nope", tmp_path)


def test_arms_a_b_is_label_colon_a_against_label_colon_b(tmp_path: Path):
    _two_arms(tmp_path, "ab", {"plugin": "a" * 64, "false_positives": 0.0}, {"plugin": "b" * 64, "false_positives": 1.0})
    by_arms = invoke("ab", "--arms", "base", "cand", "--results", str(tmp_path), "--json")
    spelled = invoke("ab:base", "ab:cand", "--results", str(tmp_path), "--json")
    assert by_arms.exit_code == spelled.exit_code == 1  # the same floor: the candidate's false positive breaks it
    assert json.loads(by_arms.stdout)["comparisons"] == json.loads(spelled.stdout)["comparisons"]
    reversed_ = json.loads(invoke("ab", "--arms", "cand", "base", "--results", str(tmp_path), "--json").stdout)
    assert (reversed_["comparisons"][0]["baseline_arm"], reversed_["comparisons"][0]["candidate_arm"]) == ("cand", "base")
    with pytest.raises(UsageError, match="--arms compares two arms of one label; drop 'other'"):
        invoke("ab", "other", "--arms", "base", "cand", "--results", str(tmp_path))
    with pytest.raises(UsageError, match="names one arm twice"):
        invoke("ab", "--arms", "base", "base", "--results", str(tmp_path))
    with pytest.raises(UsageError, match="compare needs two labels"):
        invoke("ab", "--results", str(tmp_path))


def test_an_arm_whose_trials_had_different_checkouts_is_drift(tmp_path: Path):
    _two_arms(tmp_path, "mixed", {"plugin": "a" * 64}, {"plugin": ["b" * 64, "b" * 64, "c" * 64]})
    report = compare_labels("mixed:base", "mixed:cand", tmp_path, allow_unsigned=True)
    assert [str(d) for d in report.drift] == [
        f"c/cand: plugin checkout within the candidate's arm differs — baseline (not mixed); "
        f"candidate {'b' * 64}, {'c' * 64}"]
    assert report.exit_code == 3
    assert any("plugin.tarball_sha256" in line for line in report.unverified)  # run.json records one checkout


def test_fixture_drift_is_named(tmp_path: Path):
    write_label(tmp_path, "base", ["PASS"] * 3, fixture="sha256:f1")
    write_label(tmp_path, "cand", ["PASS"] * 3, fixture="sha256:f2")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert [str(d) for d in report.drift] == ["c: fixture_hash differs — baseline sha256:f1; candidate sha256:f2"]


# --- subjects under trial --------------------------------------------------------------

BUILT_ON = "images/tiny sha256:recipe on tiny sha256:parent"


def subject(sha: str, source: str = "path") -> dict:
    """What a trial of an arm with this subject records: the tarball, and the project image it was graded in."""
    record = SubjectRecord(name="tiny", package="tiny", version="1.0.0", source=source, tarball_sha256=sha,
                           origin=f"/src/{sha[:4]}" if source == "path" else "tiny@1.0.0")
    return {"subject": record, "grader": f"sha256:project-with-{sha[:4]}", "built_on": BUILT_ON}


@pytest.mark.parametrize("base_source", ["path", "registry"])
def test_arms_with_declared_subjects_compare_and_the_difference_is_named(tmp_path: Path, base_source):
    _two_arms(tmp_path, "ab", subject("a" * 64, base_source), subject("b" * 64))
    report = compare_labels("ab:base", "ab:cand", tmp_path)
    assert report.drift == [] and report.unverified == [] and report.exit_code == 0
    assert [str(d) for d in report.declared] == [f"c: subject tarball differs — baseline {'a' * 64}; "
                                                 f"candidate {'b' * 64}"]
    assert "compared across 1 declared difference(s) (the arms' subjects under trial):" in report.lines()
    _two_arms(tmp_path, "ab2", subject("a" * 64, base_source), subject("b" * 64))  # two labels, arm by arm
    assert compare_labels(tmp_path / "ab", tmp_path / "ab2").exit_code == 0


def test_an_arm_whose_trials_had_different_subjects_is_drift(tmp_path: Path):
    cand = subject("b" * 64)
    cand["subject"] = [subject("b" * 64)["subject"]] * 2 + [subject("c" * 64)["subject"]]
    _two_arms(tmp_path, "mixed", subject("a" * 64), cand)
    report = compare_labels("mixed:base", "mixed:cand", tmp_path, allow_unsigned=True)
    assert f"c/cand: subject tarball within the candidate's arm differs — baseline (not mixed); candidate " \
           f"{'b' * 64}, {'c' * 64}" in [str(d) for d in report.drift]
    assert report.exit_code == 3
    assert any("subject.tarball_sha256" in line for line in report.unverified)  # run.json records one tarball


def test_two_different_pins_are_drift_not_a_declared_difference(tmp_path: Path):
    _two_arms(tmp_path, "pins", subject("a" * 64, "registry"), subject("b" * 64, "registry"))
    report = compare_labels("pins:base", "pins:cand", tmp_path)
    assert [(d.where, d.field) for d in report.drift] == [("c", "subject tarball"), ("c", "grader image content")]
    assert report.declared == [] and report.exit_code == 3


def test_project_images_that_differ_beside_the_subject_are_drift(tmp_path: Path):
    cand = {**subject("b" * 64), "built_on": "images/tiny sha256:recipe on tiny sha256:other-parent"}
    _two_arms(tmp_path, "beside", subject("a" * 64), cand)
    report = compare_labels("beside:base", "beside:cand", tmp_path)
    assert [str(d) for d in report.drift] == [
        f"c: grader image content differs — baseline base built on {BUILT_ON}; "
        "candidate base built on images/tiny sha256:recipe on tiny sha256:other-parent"]
    assert report.exit_code == 3

"""Lanes and dry runs on rules alone: declared lanes, skipped checks and the verdict, tallies, compare's refusals,
and the dry run's stand-in agent driven through the real lifecycle on a FakeSandbox.

The real-engine proofs are tests/integration/test_lanes_and_dry_runs.py.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench.agents.command import CommandAgent
from bench.cases import load_case, load_toml
from bench.compare import compare_labels
from bench.dry_run import DryRunAgent
from bench.errors import CaseError
from bench.gatespec import GateSpec
from bench.grading import GradeContext, decide, grade
from bench.harness import Harness
from bench.models import ArmSpec, CaseRecord, EngineRecord, HarnessRecord, ImageRecord, Limits, Verdict
from bench.paths import Project, RunPaths, TrialPaths
from bench.result_models import CheckResult, TrialResult
from bench.sandbox import Outcome
from bench.summary import check_marks, summarize_arm
from bench.trial import RunContext, TrialSpec, run_trial
from tests.fakes import FakeEngine, workspace_tar
from tests.labels import seal
from tests.unit.test_compare import write_trial

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ImageRecord(name="base", tag="bench/base:test", id="sha256:" + "1" * 64)
SECRET = "tok-PLANTED-4c1e9a7b2d"


def gate(*checks: dict) -> GateSpec:
    return GateSpec.model_validate({"checks": list(checks)})


def grep(name: str, **extra) -> dict:
    return {"kind": "grep", "name": name, "files": ["hello.txt"], "pattern": "^Hello", **extra}


def result(name: str, passed: bool = True, skipped: bool = False, gating: bool = True) -> CheckResult:
    return CheckResult(name=name, kind="grep", gating=gating, passed=passed, skipped=skipped,
                       detail="not graded on the local-docker lane" if skipped else "")


# --- gate.toml -------------------------------------------------------------------------


def test_a_lane_that_does_not_exist_is_refused_naming_file_field_and_the_lanes(tmp_path: Path):
    path = tmp_path / "gate.toml"
    path.write_text('[[checks]]\nkind = "grep"\nname = "g"\nfiles = ["a"]\npattern = "x"\nlanes = ["gpu"]\n')
    with pytest.raises(CaseError, match=r"gate.toml: field 'checks.0.grep.lanes': .*'gpu' is not a lane; lanes are "
                                        r"local-docker, gpu-seat, ray"):
        load_toml(path, GateSpec)
    assert gate(grep("g", lanes=["gpu-seat", "ray"])).checks[0].lanes == ["gpu-seat", "ray"]


# --- the verdict -----------------------------------------------------------------------


def test_a_skipped_check_neither_passes_nor_fails_the_trial():
    spec = gate(grep("here"), grep("there", lanes=["gpu-seat"]))
    assert decide(spec, [result("here"), result("there", passed=False, skipped=True)]) == (Verdict.PASS, "")
    verdict, reason = decide(spec, [result("here", passed=False), result("there", passed=False, skipped=True)])
    assert verdict is Verdict.FAIL and reason.startswith("check 'here' failed")


def test_a_gate_whose_every_gating_check_was_skipped_observed_nothing():
    spec = gate(grep("there", lanes=["gpu-seat"]), grep("advice", gating=False))
    verdict, reason = decide(spec, [result("there", passed=False, skipped=True), result("advice", gating=False)])
    assert verdict is Verdict.INCOMPLETE
    assert reason == "every gating check was skipped (not graded on the local-docker lane): nothing observed"


def test_grading_skips_other_lanes_checks_and_a_dry_runs_model_checks_without_running_them(tmp_path: Path):
    judge = {"kind": "judge", "name": "taste", "files": ["*"], "criteria": [{"name": "naming", "scale": "10 good"}]}
    spec = gate(grep("here"), grep("gpu only", lanes=["gpu-seat"]), judge)
    tar = workspace_tar(tmp_path / "w.tar", {"hello.txt": b"Hello, world!\n"})
    ctx = GradeContext(sandboxes=None, labels=lambda role: {}, image="", limits=Limits(), goldens=tmp_path,
                       workspace_tar=tar, gate_log=tmp_path / "gate.log", artifacts=tmp_path / "a",
                       wheel=tmp_path / "w", dry_run=True)  # no engine: a check that tried to start a container breaks
    outcome = grade(ctx, spec)
    assert [(r.name, r.skipped, r.passed, r.detail) for r in outcome.checks] == [
        ("here", False, True, "/^Hello/ matched in hello.txt"),
        ("gpu only", True, False, "not graded on the local-docker lane (the check is for gpu-seat)"),
        ("taste", True, False, "not graded in a dry run: it would call a model")]
    assert (outcome.verdict, outcome.reason) == (Verdict.PASS, "")
    alone = grade(ctx, gate(grep("gpu only", lanes=["gpu-seat"])))
    assert alone.verdict is Verdict.INCOMPLETE  # every gating check skipped: nothing was observed
    assert "skipped, not graded on the local-docker lane" in (tmp_path / "gate.log").read_text()
    on_its_lane = grade(dataclasses.replace(ctx, lane="gpu-seat"), gate(grep("gpu only", lanes=["gpu-seat"])))
    assert (on_its_lane.verdict, on_its_lane.checks[0].skipped) == (Verdict.PASS, False)


# --- summaries ------------------------------------------------------------------------


def test_tallies_count_skips_apart_and_the_marks_show_s():
    def trial(n: int, lane: str, checks: list[CheckResult]) -> TrialResult:
        return TrialResult(run_id="r", label="l", case="c", arm="a", trial=n, agent="oracle", lane=lane,
                           verdict=Verdict.PASS, checks=checks, started_at="2026-01-01T00:00:00Z")
    results = [trial(1, "local-docker", [result("a"), result("gpu", passed=False, skipped=True)]),
               trial(2, "gpu-seat", [result("a", passed=False), result("gpu")])]
    summary = summarize_arm("c", "a", results)
    assert [(t.name, t.passed, t.total, t.skipped) for t in summary.checks] == [("a", 1, 2, 0), ("gpu", 1, 1, 1)]
    assert check_marks(summary.checks) == "1/2 1/1+1s"
    assert check_marks(summarize_arm("c", "a", results[:1]).checks) == "1/1 s"


# --- compare --------------------------------------------------------------------------


def _label(root: Path, name: str, **changes) -> Path:
    """A signed label of three PASS trials whose result.json and provenance.json carry ``changes``."""
    label = root / name
    for n in (1, 2, 3):
        write_trial(label, n, "PASS")
        trial = RunPaths(label).trial("c", "default", n)
        for path in (trial.result, trial.provenance):
            data = json.loads(path.read_text())
            path.write_text(json.dumps({**data, **{k: v for k, v in changes.items() if k in data}}))
    seal(label)
    return label


def test_compare_refuses_to_mix_lanes_unless_drift_is_allowed(tmp_path: Path):
    _label(tmp_path, "base")
    _label(tmp_path, "cand", lane="gpu-seat")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert [str(d) for d in report.drift] == ["c: lane differs — baseline local-docker; candidate gpu-seat"]
    assert report.exit_code == 3
    assert compare_labels(tmp_path / "base", tmp_path / "cand", allow_drift=True).exit_code == 0


def test_compare_refuses_a_dry_run_whatever_the_flags(tmp_path: Path):
    _label(tmp_path, "base")
    _label(tmp_path, "dry", dry_run=True)
    report = compare_labels(tmp_path / "base", tmp_path / "dry", allow_drift=True, allow_unsigned=True)
    assert report.exit_code == 3 and report.comparisons == []
    assert report.dry_runs == ["the candidate's c/default is a dry run (--dry-run: no agent ran, the untouched "
                               "workspace was graded); compare labels of real runs"]
    assert f"refused: {report.dry_runs[0]}" in report.lines()


# --- the dry run's stand-in, through the real lifecycle --------------------------------


def test_a_dry_run_runs_true_on_no_network_prints_the_plan_redacted_and_marks_the_result(tmp_path, monkeypatch):
    monkeypatch.setattr("bench.trial.stage", lambda *args: None)
    printed: list[str] = []
    agent = DryRunAgent(CommandAgent(f"echo {SECRET} > hello.txt", env=["TOKEN"], network=True,
                                     environ={"TOKEN": SECRET}), printed.append)
    engine = FakeEngine({"check": lambda box: Outcome(0 if "workspace/hello.txt" in box.files else 1, False, 0.1)})
    case = load_case(Project(ROOT), "hello")
    wheel = tmp_path / "harness.whl"
    wheel.write_bytes(b"not a wheel")
    run = RunContext(client=None, run_id="fake", label="unit", command_line=["bench"], dry_run=True,
                     harness=Harness(wheel, HarnessRecord(version="0", git_sha=None, dirty=False, wheel_sha256="0" * 64)),
                     engine=EngineRecord(version="fake", api_version="fake"), project_root=ROOT, sandboxes=engine)
    spec = TrialSpec(case, ArmSpec(name="default"), 1, agent, {"agent": IMAGE, "grader": IMAGE}, case.spec.limits,
                     TrialPaths(tmp_path / "trial-1"), CaseRecord(id=case.id, visible_hash="sha256:v",
                                                                 goldens_hash="sha256:g"))
    done = run_trial(run, spec)
    box = next(b for b in engine.created if b.spec.role == "agent")
    assert (box.spec.command, box.spec.network) == (["true"], "none") and SECRET not in json.dumps(box.spec.env)
    assert (done.verdict, done.dry_run, done.agent) == (Verdict.FAIL, True, "command")  # the scaffold fails
    text = "\n".join(printed)
    assert SECRET not in text and "TOKEN=[REDACTED:TOKEN]" in text and "echo [REDACTED:TOKEN] > hello.txt" in text
    assert "network: bridge (a dry run runs on none)" in text
    agent.plan(case, None)
    assert len(printed) == len(text.splitlines())  # printed once per case x arm, however many trials

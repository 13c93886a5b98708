"""Resume: keep finished trials, refuse drift, and name a broken record instead of a traceback."""

from __future__ import annotations

import json

import pytest

from bench.errors import RecordError, UsageError
from bench.models import ArmSpec, CaseInputs, RunOptions, RunRecord
from bench.paths import RunPaths
from bench.resume import finished, reconcile


def _record(agent: str = "oracle", run_id: str = "r1", trials: int = 1, **cases: CaseInputs) -> RunRecord:
    return RunRecord(label="l", harness_version="1.0", wheel_sha256="w", arms=[ArmSpec(name="a")],
                     options=RunOptions(agent=agent, timeout_s=60), trials=trials, run_ids=[run_id],
                     cases=cases or {"hello": _inputs()})


def _inputs(grader: str = "sha256:g", agent: str = "oracle", **extra) -> CaseInputs:
    return CaseInputs(visible_hash="v", goldens_hash="h", images={"agent": "sha256:a", "grader": grader},
                      arms=[ArmSpec(name="default", context="default", agent=agent)], **extra)


def _trial(tmp_path, verdict: str | None = None, text: str | None = None):
    trial = RunPaths(tmp_path / "results" / "lbl").trial("hello", "default", 1)
    trial.dir.mkdir(parents=True)
    if verdict is not None:
        text = json.dumps({"schema_version": 1, "run_id": "r", "label": "lbl", "case": "hello", "arm": "default",
                           "trial": 1, "agent": "oracle", "verdict": verdict, "started_at": "2025-01-01T00:00:00Z"})
    if text is not None:
        trial.result.write_text(text)
    return trial


def test_the_same_inputs_resume_and_new_cases_are_merged(tmp_path):
    path = tmp_path / "run.json"
    reconcile(path, _record())
    merged = reconcile(path, _record(run_id="r2", trials=3, hello=_inputs(), other=_inputs()))
    assert set(merged.cases) == {"hello", "other"}
    assert (merged.trials, merged.run_ids) == (3, ["r1", "r2"])  # more trials may be added; every run is named
    assert RunRecord.model_validate_json(path.read_text()) == merged


def test_drift_is_refused_naming_what_changed(tmp_path):
    path = tmp_path / "run.json"
    reconcile(path, _record(hello=_inputs(seat="auto")))
    before = path.read_text()
    drifted = _record(hello=_inputs(grader="sha256:new"))
    drifted = drifted.model_copy(update={"options": RunOptions(agent="oracle", timeout_s=30)})
    with pytest.raises(UsageError) as caught:
        reconcile(path, drifted)
    message = str(caught.value)
    assert message.startswith("refusing to continue label 'l'")
    assert "timeout_s: recorded 60, now 30" in message
    assert "hello images.grader: recorded sha256:g, now sha256:new" in message
    assert "hello seat: recorded auto, now None" in message
    assert message.endswith("use a new --label (or restore what changed)")
    assert path.read_text() == before  # a refused resume changes nothing


def test_another_agent_is_refused_naming_the_option_and_the_arm(tmp_path):
    """One experiment per label: `--agent null` may not resume a label made with `--agent oracle`."""
    path = tmp_path / "run.json"
    reconcile(path, _record())
    with pytest.raises(UsageError) as caught:
        reconcile(path, _record(agent="null", hello=_inputs(agent="null")))
    message = str(caught.value)
    assert "agent: recorded 'oracle', now 'null'" in message
    assert "hello arms.default: recorded default(context=default, agent=oracle), now default(context=default, " \
           "agent=null)" in message


def test_a_run_json_of_another_version_is_refused(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"schema_version": 1, "label": "l", "harness_version": "1.0", "wheel_sha256": "w",
                                "arms": [], "cases": {"hello": {"visible_hash": "v", "agent_image": "sha256:a"}}}))
    with pytest.raises(RecordError, match=r"schema_version 1 is not supported by this harness \(knows 3\) — .*new --label"):
        reconcile(path, _record())


@pytest.mark.parametrize("verdict, kept", [("PASS", True), ("FAIL", True), ("INCOMPLETE", True), ("ERROR", False)])
def test_trials_with_a_verdict_about_the_agent_are_kept(tmp_path, verdict, kept):
    assert finished(_trial(tmp_path, verdict)) is kept


def test_a_trial_without_result_runs_again(tmp_path):
    assert finished(_trial(tmp_path)) is False


def test_a_truncated_result_names_the_file_and_how_to_rerun_it(tmp_path):
    trial = _trial(tmp_path, text='{"schema_version": 1, "run_id": "r", "lab')
    with pytest.raises(RecordError) as caught:
        finished(trial)
    message = str(caught.value)
    assert message.startswith(f"{trial.result}: field '(whole file)': not valid JSON")
    assert message.endswith(f"rerun that trial: remove {trial.dir} and run the same command with --label lbl again")


@pytest.mark.parametrize("source", ["plugin", "subject"])
def test_a_changed_arm_source_refuses_resume_naming_the_case_and_the_arm(tmp_path, source):
    """A plugin checkout or a subject source is known by the SHA-256 it packed to, per arm."""
    def record(sha: str) -> RunRecord:
        arms = [ArmSpec(name="base", **{source: "/src/a"}), ArmSpec(name="cand", **{source: "/src/b"})]
        return _record(hello=CaseInputs(visible_hash="v", goldens_hash="h", images={}, arms=arms,
                                        **{f"{source}s": {"base": "a" * 64, "cand": sha}}))

    reconcile(tmp_path / "run.json", record("c" * 64))
    reconcile(tmp_path / "run.json", record("c" * 64))  # unchanged: continues
    with pytest.raises(UsageError, match=f"hello {source}s.cand: recorded {'c' * 64}, now {'d' * 64}"):
        reconcile(tmp_path / "run.json", record("d" * 64))

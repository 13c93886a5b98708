"""`bench metrics` on hand-made transcripts: every number below is worked out by hand beside it.

The label is laid out as a run leaves one (result.json and transcript.jsonl per trial),
the transcripts are written event by event in Claude Code's stream-json and Codex's
JSONL formats (the shapes of tests/fixtures/transcripts/), and the patterns come from a
tracked case's gate.toml [metrics] in a scratch project, read by the real CLI.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench.authoring_metrics import AuthoringMetrics, measure
from bench.errors import CaseError
from bench.models import Verdict
from bench.paths import Project, RunPaths
from bench.result_models import TrialResult
from bench.transcript_actions import read_steps

ROOT = Path(__file__).resolve().parents[2]
WHEN = datetime(2026, 1, 1, tzinfo=timezone.utc)
CASE = """title = "Kata"
image = "base"
[tracks.zig]
description = "a Zig core"
[tracks.ts]
description = "a TypeScript core"
"""
GATE = r"""[[checks]]
name = "shared"
kind = "grep"
files = ["*"]
pattern = "x"

[metrics]
teaching_errors = ["no member named '\\w+'"]

[metrics.tracks.zig]
compliance = ['zig build test']

[metrics.tracks.ts]
compliance = ['\btsc\b']
teaching_errors = ['TS2322']
"""


@pytest.fixture()
def kata(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    shutil.copytree(ROOT / "images", root / "images")
    shutil.copytree(ROOT / "provenance", root / "provenance")
    case, goldens = root / "cases/kata", root / "goldens/kata"
    (case / "workspace").mkdir(parents=True)
    (goldens / "solution").mkdir(parents=True)
    (case / "case.toml").write_text(CASE)
    (case / "PROMPT.md").write_text("Do the kata.\n")
    (goldens / "gate.toml").write_text(GATE)
    return Project(root)


def claude(*calls: tuple[str, dict, object, bool]) -> str:
    """A stream-json transcript: per call, an assistant tool_use then the user's tool_result (content, is_error)."""
    lines = ['{"type":"system","subtype":"init","session_id":"s"}', "a stray stderr line, not JSON",
             '{"type":"assistant","message":{"content":"not a list"}}']
    for n, (tool, given, content, error) in enumerate(calls):
        lines.append(json.dumps({"type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "content": [
            {"type": "text", "text": "working"}, {"type": "tool_use", "id": f"t{n}", "name": tool, "input": given}]}}))
        lines.append(json.dumps({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": content, "is_error": error}]}}))
    lines.append('{"type":"result","subtype":"success","is_error":false,"num_turns":%d}' % len(calls))
    return "\n".join(lines) + "\n"


def codex(*items: dict) -> str:
    lines = ['{"type":"thread.started","thread_id":"x"}', '{"type":"turn.started"}']
    lines += [json.dumps({"type": "item.completed", "item": item}) for item in items]
    return "\n".join(lines + ['{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}']) + "\n"


def bash(command: str, output: object = "", error: bool = False):
    return ("Bash", {"command": command}, output, error)


TEN = "".join(f"line {n}\n" for n in range(10))
ZIG_1 = claude(
    bash("zig build test", "error: no member named 'scaffold'", True),  # before any edit: not a run; 1 teaching
    ("Write", {"file_path": "/workspace/src/core.zig", "content": TEN}, "File created", False),  # 10 lines, touched
    bash("zig build test", "src/core.zig:3: error: no member named 'foo'", True),  # run 1 fails; teaching 2
    ("Edit", {"file_path": "/workspace/src/core.zig", "old_string": "a", "new_string": "b\nc"}, "ok", False),  # +2
    ("Edit", {"file_path": "/workspace/src/core.zig", "old_string": "zz", "new_string": "1\n2\n3\n4\n5\n"},
     "String to replace not found", True),  # refused: no line written
    bash("cd /workspace && zig build test 2>&1", [{"type": "text", "text": "no member named 'bar'"}], True),  # run 2
    ("Read", {"file_path": "/workspace/README"}, "all good", False),  # no pattern
    bash("zig build test", "All 3 tests passed.", False),  # run 3 passes: green after 2 failures
    bash("zig build test", "All 3 tests passed.", False),  # run 4
)  # lines 12; runs 4; first pass no; failing 2; retries 2; teaching 3
ZIG_2 = claude(
    ("Write", {"file_path": "/workspace/src/core.zig", "content": "1\n2\n3\n4\n5\n6\n7\n8"}, "File created", False),
    bash("zig build test", "ok", False),
)  # lines 8 (the last without its newline counts); runs 1; first pass yes; failing 0; retries 0; teaching 0
TS_CODEX = codex(
    {"id": "i0", "type": "command_execution", "command": "npx tsc --noEmit", "aggregated_output": "error TS2322",
     "exit_code": 2, "status": "completed"},  # before any edit: not a run; 1 teaching
    {"id": "i1", "type": "file_change", "changes": [{"path": "src/core.ts", "kind": "add"}], "status": "completed"},
    {"id": "i2", "type": "command_execution", "command": "npx tsc --noEmit", "aggregated_output": "a.ts: error TS2322",
     "exit_code": 2, "status": "completed"},  # run 1 fails; teaching 2
    {"id": "i3", "type": "command_execution", "command": "npx tsconfig-lint", "aggregated_output": "",
     "exit_code": 1, "status": "completed"},  # \btsc\b does not match tsconfig: not a run
    {"id": "i4", "type": "command_execution", "command": "npx tsc --noEmit", "aggregated_output": "",
     "exit_code": 0, "status": "completed"},  # run 2 passes
)  # Codex reports no lines; runs 2; first pass no; failing 1; retries 1; teaching 2


def write_trial(label: Path, case: str, arm: str, n: int, verdict: str, transcript: str | None) -> None:
    paths = RunPaths(label).trial(case, arm, n)
    paths.dir.mkdir(parents=True)
    result = TrialResult(run_id="r", label=label.name, case=case, arm=arm, trial=n, agent="claude-code",
                         verdict=Verdict(verdict), started_at=WHEN)
    paths.result.write_text(result.model_dump_json())
    if transcript is not None:
        paths.named("transcript.jsonl").write_text(transcript)


@pytest.fixture()
def label(tmp_path: Path) -> Path:
    folder = tmp_path / "results" / "lbl"
    write_trial(folder, "kata@zig", "default", 1, "FAIL", ZIG_1)
    write_trial(folder, "kata@zig", "default", 2, "PASS", ZIG_2)
    write_trial(folder, "kata@ts", "codex", 1, "PASS", TS_CODEX)
    write_trial(folder, "kata@ts", "oracle", 1, "PASS", None)  # no transcript at all
    return folder


def test_the_steps_of_a_claude_transcript_in_the_order_asked(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    path.write_text(ZIG_1)
    steps = read_steps(path)
    assert steps.format == "claude-code"
    assert [(s.kind, s.ok, s.lines) for s in steps.steps] == [
        ("command", False, None), ("edit", True, 10), ("command", False, None), ("edit", True, 2), ("edit", False, 0),
        ("command", False, None), ("command", True, None), ("command", True, None)]  # Read is neither
    assert len(steps.outputs) == 9 and steps.outputs[5] == "no member named 'bar'"  # a list of text blocks, joined


def test_hand_computed_metrics_per_trial_group_and_track(kata: Project, label: Path):
    found = measure(RunPaths(label), kata)
    trials = {(t.case, t.track, t.arm, t.trial): t for t in found.trials}
    one = trials[("kata", "zig", "default", 1)]
    assert (one.generated_lines, one.compliance_runs, one.first_pass, one.failing_runs, one.retries_to_green,
            one.teaching_errors) == (12, 4, False, 2, 2, 3)
    assert one.teaching_by_pattern == {"no member named '\\w+'": 3}
    two = trials[("kata", "zig", "default", 2)]
    assert (two.generated_lines, two.compliance_runs, two.first_pass, two.failing_runs, two.retries_to_green,
            two.teaching_errors) == (8, 1, True, 0, 0, 0)
    ts = trials[("kata", "ts", "codex", 1)]
    assert (ts.format, ts.generated_lines, ts.compliance_runs, ts.first_pass, ts.failing_runs, ts.retries_to_green,
            ts.teaching_errors) == ("codex", None, 2, False, 1, 1, 2)  # the shared pattern and the track's, both
    none = trials[("kata", "ts", "oracle", 1)]
    assert (none.format, none.transcript_sha256, none.compliance_runs, none.teaching_errors) == (None, None, None, None)
    zig = next(g for g in found.groups if g.track == "zig")
    # 1 of 2 first passes; retries (2 + 0) / 2; failing 2 and teaching 3 over 20 lines: 100 and 150 per 1k
    assert (zig.trials, zig.transcripts, zig.task_pass, zig.task_valid, zig.first_pass, zig.first_pass_of) == \
        (2, 2, 1, 2, 1, 2)
    assert (zig.first_pass_rate, zig.green, zig.retries_to_green_mean, zig.failing_runs, zig.teaching_errors,
            zig.generated_lines, zig.failing_runs_per_kloc, zig.teaching_errors_per_kloc) == \
        (0.5, 2, 1.0, 2, 3, 20, 100.0, 150.0)
    assert zig.patterns.compliance == ["zig build test"]
    codex_group = next(g for g in found.groups if g.arm == "codex")
    assert (codex_group.generated_lines, codex_group.failing_runs_per_kloc) == (None, None)  # Codex reports no lines
    assert [(t.case, t.track, t.arm, t.trials) for t in found.tracks] == [
        (None, "ts", "codex", 1), (None, "ts", "oracle", 1), (None, "zig", "default", 2)]
    written = AuthoringMetrics.model_validate_json(RunPaths(label).authoring_metrics.read_text())
    assert written.groups == found.groups


def test_the_cli_prints_the_table_and_json(kata: Project, label: Path, bench):
    table = bench("metrics", "lbl", "--results", str(label.parent), root=kata.root, check_rc=0)
    assert "authoring metrics lbl" in table.stdout and "1/2" in table.stdout and "150" in table.stdout
    done = bench("metrics", str(label), "--json", root=kata.root, check_rc=0)
    data = json.loads(done.stdout)
    assert data["label"] == "lbl" and len(data["trials"]) == 4
    assert RunPaths(label).authoring_metrics.is_file()


def test_a_case_without_patterns_counts_lines_and_says_why(kata: Project, label: Path):
    (kata.goldens_dir("kata") / "gate.toml").write_text(GATE.split("[metrics]")[0])
    found = measure(RunPaths(label), kata)
    one = next(t for t in found.trials if t.trial == 1 and t.track == "zig")
    assert (one.generated_lines, one.compliance_runs, one.first_pass, one.teaching_errors) == (12, None, None, None)
    assert any("declares no [metrics] patterns" in note for note in found.notes)


def test_metrics_for_a_track_the_case_lacks_are_refused(kata: Project, label: Path):
    (kata.goldens_dir("kata") / "gate.toml").write_text(GATE + "\n[metrics.tracks.rust]\ncompliance = ['cargo']\n")
    with pytest.raises(CaseError, match=r"gate.toml: field 'metrics.tracks': \['rust'\] are not tracks"):
        measure(RunPaths(label), kata)


def test_a_pattern_that_is_no_regex_is_refused_naming_the_field(kata: Project, bench):
    (kata.goldens_dir("kata") / "gate.toml").write_text(GATE.replace("'zig build test'", "'zig (build'"))
    done = bench("cases", "validate", root=kata.root, check_rc=2)
    assert "gate.toml: field 'metrics.tracks.zig.compliance'" in done.stdout
    assert "'zig (build' is not a regular expression" in done.stdout


def test_the_metrics_file_is_a_derived_view_the_signature_leaves_out(tmp_path: Path):
    from bench.attest import attestable

    paths = RunPaths(tmp_path / "lbl")
    paths.dir.mkdir()
    paths.authoring_metrics.write_text("{}")
    paths.run_record.write_text("{}")
    assert attestable(paths) == [paths.run_record]

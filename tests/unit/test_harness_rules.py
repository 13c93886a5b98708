"""The `harness` check without an engine: gate fields, record verification, the decision, what goes in.

The real runners and the forgeries they defeat are in tests/integration/test_harness_check.py;
here, the rules those rest on: only records under the check's key count, a run counts only
when its end record and every record it announces came in, and the preflight refuses a
workspace that would misplace or impersonate the harness.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import tarfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.gates import harness as records
from bench.gatespec import GateSpec
from bench.grading.harness import injected_tar, landed_files, preflight, runner, runner_tar
from bench.grading.harness_runners import NODE_RUNNER, ZIG_RUNNER, render, zig_prefixes

KEY = b"k" * 64


def check(**fields):
    spec = {"kind": "harness", "name": "h", "format": "zig", "withheld": ["harness.zig"], "into": "src", **fields}
    return GateSpec.model_validate({"checks": [spec]}).checks[0]


def line(body: str, key: bytes = KEY) -> str:
    return f"\n{body} {hmac.new(key, body.encode(), hashlib.sha256).hexdigest()}\n"


def record(index: int, status: str, name: str, key: bytes = KEY) -> str:
    return line(f"BENCH-TEST {index} {status} {name.encode().hex()}", key)


def seen(stdout: str, **fields) -> records.Observation:
    return records.Observation(exit_code=fields.pop("exit_code", 0), stdout=stdout, stderr="", **fields)


def decide(stdout: str, min_pass: int | None = None, **fields) -> records.Decision:
    return records.decide("zig test", 60, min_pass, seen(stdout, **fields), records.read(stdout, KEY))


# --- gate fields -------------------------------------------------------------------------


def test_the_default_command_runs_the_first_withheld_file_with_benchs_runner():
    assert check().command() == "zig test $BENCH_TEST_ARGS src/harness.zig"
    assert check(format="node", withheld=["a.test.ts", "lib"], into="test").command() == \
        "node $BENCH_TEST_ARGS test/a.test.ts"
    assert check(into=".").command() == "zig test $BENCH_TEST_ARGS harness.zig"


@pytest.mark.parametrize("fields, words", [
    ({"withheld": ["solution/stats.zig"]}, "never reach a grader"),
    ({"withheld": ["answers/a.zig"]}, "never reach a grader"),
    ({"withheld": ["gate.toml"]}, "never reach a grader"),
    ({"withheld": ["a b.zig"]}, "not a plain name"),
    ({"withheld": ["../x.zig"]}, "not a plain name"),
    ({"withheld": []}, "at least 1"),
    ({"withheld": ["x/h.zig", "y/h.zig"]}, "land at the same name 'h.zig'"),
    ({"withheld": ["notes.txt"]}, "put the harness .zig first"),
    ({"into": "/src"}, "not a plain folder inside the workspace"),
    ({"into": "src/../.."}, "not a plain folder inside the workspace"),
    ({"run": "zig test src/harness.zig"}, "must pass $BENCH_TEST_ARGS"),
    ({"format": "python"}, "'zig' or 'node'"),
    ({"min_pass": 0}, "greater than or equal to 1"),
])
def test_bad_fields_are_refused_naming_the_fix(fields, words):
    with pytest.raises(ValidationError) as raised:
        check(**fields)
    assert words in str(raised.value)


def test_a_run_of_ones_own_passes_the_runner_flags_in_either_spelling():
    assert check(run="zig test ${BENCH_TEST_ARGS} -O ReleaseSafe src/harness.zig").command().startswith("zig test ${")


# --- records -----------------------------------------------------------------------------


def test_only_records_under_the_checks_key_count_and_the_others_are_counted_as_unverified():
    out = ("All 12 tests passed.\n" + record(0, "pass", "a") + record(1, "pass", "b", key=b"x" * 64)
           + "BENCH-TEST 1 pass 62 " + "0" * 64 + "\n" + record(1, "fail", "b") + line("BENCH-END 2"))
    report = records.read(out, KEY)
    assert [(t.index, t.status, t.name) for t in report.tests.values()] == [(0, "pass", "a"), (1, "fail", "b")]
    assert report.end == 2 and report.unverified == 2


def test_a_record_glued_to_unfinished_output_is_still_read_because_it_starts_on_a_new_line():
    assert records.read("half a line" + record(0, "pass", "a") + line("BENCH-END 1"), KEY).end == 1


def test_a_replayed_record_counts_once():
    out = record(0, "pass", "a") + record(0, "pass", "a") + line("BENCH-END 1")
    assert decide(out).metrics == {"tests_passed": 1, "tests_failed": 0, "tests_total": 1}


def test_names_come_back_from_hex_whatever_they_hold():
    name = 'harness.test.esc"aped \\n snow ☃'
    assert records.read(record(0, "pass", name), KEY).tests[0].name == name


# --- the decision ------------------------------------------------------------------------


def test_every_test_passing_passes_with_counts_and_review():
    result = decide(record(0, "pass", "a") + record(1, "pass", "b") + line("BENCH-END 2"))
    assert result.passed and result.detail == "2/2 harness tests passed"
    assert result.metrics == {"tests_passed": 2, "tests_failed": 0, "tests_total": 2}
    assert result.review == {"passed": ["a", "b"]}


def test_a_failing_or_skipped_test_fails_by_default_naming_it():
    failed = decide(record(0, "pass", "a") + record(1, "fail", "b") + record(2, "skip", "c") + line("BENCH-END 3"))
    assert not failed.passed and "first: b" in failed.detail and "1 failed, 1 skipped" in failed.detail
    assert failed.review == {"passed": ["a"], "failed": ["b"], "skipped": ["c"]}
    skipped = decide(record(0, "pass", "a") + record(1, "skip", "c") + line("BENCH-END 2"))
    assert not skipped.passed and "first: c" in skipped.detail


def test_min_pass_is_a_floor_on_passed_tests():
    out = record(0, "pass", "a") + record(1, "fail", "b") + record(2, "pass", "c") + line("BENCH-END 3")
    assert decide(out, min_pass=2).passed
    refused = decide(out, min_pass=3)
    assert not refused.passed and "at least 3 must pass" in refused.detail


def test_no_end_record_is_a_failure_whatever_the_output_claims():
    out = record(0, "pass", "a") + "All 2 tests passed.\n" + line("BENCH-END 2", key=b"x" * 64)
    result = decide(out, exit_code=0)
    assert not result.passed and result.metrics == {}
    assert "never reached its end (exit 0, 1 harness tests recorded; 1 line(s)" in result.detail
    assert result.review == {"passed": ["a"]}


def test_an_announced_record_that_never_arrived_is_a_failure():
    result = decide(record(0, "pass", "a") + record(2, "pass", "c") + line("BENCH-END 3"))
    assert not result.passed and "announced 3 harness tests but the records of 1 never arrived" in result.detail


def test_a_run_of_no_harness_test_fails():
    result = decide(line("BENCH-END 0"))
    assert not result.passed and "no harness test ran" in result.detail


@pytest.mark.parametrize("fields, words", [
    ({"timed_out": True, "exit_code": None}, "timeout: `zig test` ran past 60 s"),
    ({"oom_killed": True, "memory_mb": 512}, "ran out of memory (512 MiB)"),
    ({"budget": "disk", "budget_mb": 16}, "disk budget"),
    ({"budget": "check-output", "budget_mb": 16}, "output budget"),
])
def test_how_docker_saw_it_end_comes_first(fields, words):
    result = decide(record(0, "pass", "a") + line("BENCH-END 1"), **fields)
    assert not result.passed and words in result.detail


def test_the_output_shown_leaves_the_records_out():
    result = decide("compiler says no\n" + record(0, "fail", "a") + line("BENCH-END 1"))
    assert "compiler says no" in result.detail and "BENCH-" not in result.detail


# --- what goes into the grader -----------------------------------------------------------


def workspace_tar(tmp_path: Path, members: dict[str, str | None]) -> Path:
    """A workspace export: path -> file text, "->target" for a symlink, None for a folder."""
    path = tmp_path / "workspace.tar"
    with tarfile.open(path, "w") as archive:
        for name, text in {"workspace": None, **members}.items():
            info = tarfile.TarInfo(name)
            if text is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            elif text.startswith("->"):
                info.type, info.linkname = tarfile.SYMTYPE, text[2:]
                archive.addfile(info)
            else:
                info.size = len(text)
                archive.addfile(info, io.BytesIO(text.encode()))
    return path


@pytest.mark.parametrize("members, words", [
    ({"workspace/src": "->real"}, "the workspace's src is a symlink, not a folder"),
    ({"workspace/src": "a file"}, "the workspace's src is a file, not a folder"),
    ({"workspace/src": None, "workspace/src/harness.test.zig": "test {}"},
     "src/harness.test.zig would have its tests named like the harness's own (harness.test.test.*)"),
    ({"workspace/src": None, "workspace/src/harness/x.zig": "test {}"}, "src/harness/x.zig would have its tests"),
])
def test_preflight_refuses_a_workspace_that_would_misplace_or_impersonate_the_harness(tmp_path, members, words):
    assert words in preflight(workspace_tar(tmp_path, members), check(), ["harness.zig"])


def test_preflight_lets_the_agents_own_copy_and_neighbours_be(tmp_path):
    members = {"workspace/src": None, "workspace/src/harness.zig": "->elsewhere", "workspace/src/harness_util.zig": "",
               "workspace/other/harness.test.zig": "", "workspace/src/stats.zig": ""}
    assert preflight(workspace_tar(tmp_path, members), check(), ["harness.zig"]) is None
    assert preflight(workspace_tar(tmp_path, {"workspace/test": "->x"}), check(format="node", withheld=["a.ts"],
                     into="test/unit"), ["a.ts"]) == "the workspace's test is a symlink, not a folder; the harness " \
                                                       "lands in test/unit/"


def test_withheld_files_go_in_root_owned_and_read_only_without_touching_the_folders_on_the_way(tmp_path):
    goldens = tmp_path / "goldens"
    (goldens / "helpers" / "deep").mkdir(parents=True)
    (goldens / "harness.zig").write_text("test {}")
    (goldens / "helpers" / "deep" / "h.zig").write_text("test {}")
    spec = check(withheld=["harness.zig", "helpers"], into="src/tests")
    with tarfile.open(fileobj=io.BytesIO(injected_tar(goldens, spec))) as archive:
        members = {m.name: (m.type, m.uid, oct(m.mode)) for m in archive.getmembers()}
    assert members == {"workspace/src/tests/harness.zig": (tarfile.REGTYPE, 0, "0o444"),
                       "workspace/src/tests/helpers": (tarfile.DIRTYPE, 0, "0o555"),
                       "workspace/src/tests/helpers/deep": (tarfile.DIRTYPE, 0, "0o555"),
                       "workspace/src/tests/helpers/deep/h.zig": (tarfile.REGTYPE, 0, "0o444")}
    assert landed_files(goldens, spec) == ["harness.zig", "helpers/deep/h.zig"]


def test_the_key_sits_where_only_uid_1000_may_read_or_delete_it_beside_a_runner_it_cannot_change():
    with tarfile.open(fileobj=io.BytesIO(runner_tar("/bench-harness-ab", "runner.zig", "src", "k" * 64))) as archive:
        members = {m.name: (m.uid, oct(m.mode)) for m in archive.getmembers()}
    assert members == {"bench-harness-ab": (0, "0o555"), "bench-harness-ab/runner.zig": (0, "0o444"),
                       "bench-harness-ab/key": (1000, "0o700"), "bench-harness-ab/key/key": (1000, "0o400")}


def test_runners_get_their_key_path_and_what_counts_and_never_the_key():
    name, args, source = runner(check(withheld=["harness.zig", "helpers"]), ["harness.zig", "helpers/h.zig"], "/b-1")
    assert (name, args) == ("runner.zig", "--test-runner /b-1/runner.zig")
    assert 'const key_path = "/b-1/key/key";' in source and '"helpers.h.test.", ' in source and "@KEY_PATH@" not in source and "@PREFIXES@" not in source
    name, args, source = runner(check(format="node", withheld=["a.test.ts"], into="test"), ["a.test.ts"], "/b-2")
    assert (name, args) == ("runner.mjs", "/b-2/runner.mjs")
    assert 'const HARNESS = ["/workspace/test/a.test.ts"];' in source and "@TEST@" not in source
    assert zig_prefixes(["harness.zig"]) == ["harness.test.", "harness.decltest.", "harness.test_"]
    for template in (ZIG_RUNNER, NODE_RUNNER):
        assert "BENCH-TEST" in render(template, "/k", prefixes=[], files=[])

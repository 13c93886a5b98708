"""The host's grading rules, on observations alone: command decisions, grep over a tar, the verdict."""

from __future__ import annotations

import io
import tarfile

import pytest

from bench.errors import InfrastructureError
from bench.gates import command, grep
from bench.gatespec import GateSpec
from bench.grading import decide
from bench.models import Verdict
from bench.result_models import CheckResult
from tests.fakes import workspace_tar

CHECK = {"run": "make test", "stdout_matches": ["^all tests passed$"], "timeout_s": 60}


def seen(**fields) -> command.Observation:
    return command.Observation(**{"exit_code": 0, "stdout": "all tests passed\n", "stderr": "", **fields})


def test_command_passes_on_exit_and_patterns():
    assert command.decide(CHECK, seen()) == (True, "`make test` exited 0")


@pytest.mark.parametrize("fields, words", [
    ({"exit_code": 2}, "`make test` exited 2, expected 0"),
    ({"stdout": "all tests passed?\n"}, "stdout of `make test` does not match /^all tests passed$/"),
    ({"timed_out": True, "exit_code": None}, "timeout: `make test` ran past 60 s"),
    ({"budget": "check-output", "budget_mb": 16, "exit_code": 137}, "output budget: `make test` printed more than 16 MiB"),
    ({"budget": "disk", "budget_mb": 1024, "exit_code": 137}, "disk budget: `make test` wrote more than 1024 MiB"),
    ({"oom_killed": True, "memory_mb": 2048, "exit_code": 137}, "`make test` ran out of memory (2048 MiB)"),
])
def test_command_failures_name_what_failed(fields, words):
    passed, detail = command.decide(CHECK, seen(**fields))
    assert passed is False and detail.startswith(words)


def test_a_budget_outranks_a_matching_output():
    passed, detail = command.decide(CHECK, seen(budget="check-output", budget_mb=16))
    assert passed is False and detail.startswith("output budget")


def test_the_nonce_line_must_be_printed_exactly():
    nonce = "5f0c" * 8
    assert command.decide(CHECK, seen(stdout=f"all tests passed\n{nonce}\n", nonce=nonce))[0] is True
    faked = command.decide(CHECK, seen(stdout="all tests passed\n", nonce=nonce))
    assert faked[0] is False and "closing nonce line" in faked[1]
    assert command.decide(CHECK, seen(stdout=f"all tests passed\nx{nonce}\n", nonce=nonce))[0] is False


def test_grep_reads_only_regular_files_of_the_workspace(tmp_path):
    tar = workspace_tar(tmp_path / "workspace.tar", {"a.txt": b"nothing\n"}, links={"link.txt": "/etc/passwd", "b.txt": "a.txt"})
    check = {"files": ["*.txt"], "pattern": "root:|nothing"}
    passed, detail = grep.run(check, tar)
    assert passed and detail.endswith("matched in a.txt")


@pytest.mark.parametrize("glob, hits", [
    ("**/*.c", ["main.c", "src/deep/x.c", "src/rle.c"]),
    ("src/*.c", ["src/rle.c"]),
    ("*.c", ["main.c"]),
    ("src/**", ["src/deep/x.c", "src/rle.c", "src/rle.h"]),
    ("src/rle.?", ["src/rle.c", "src/rle.h"]),
])
def test_grep_globs_mean_what_pathlib_globs_mean(tmp_path, glob, hits):
    names = ["main.c", "src/rle.c", "src/rle.h", "src/deep/x.c"]
    tar = workspace_tar(tmp_path / "workspace.tar", {name: b"X\n" for name in names})
    with tarfile.open(tar) as archive:
        assert [m.name[len("workspace/"):] for m in grep.selected(archive, [glob])] == hits


def test_grep_must_not_match(tmp_path):
    tar = workspace_tar(tmp_path / "workspace.tar", {"notes.md": b"TODO\n"})
    passed, detail = grep.run({"files": ["**/*"], "pattern": "TODO", "must_match": False}, tar)
    assert passed is False and detail.startswith("/TODO/ must not match, but matched in notes.md")


GATE = GateSpec.model_validate({"checks": [
    {"kind": "command", "name": "build", "run": "make"},
    {"kind": "grep", "name": "header", "files": ["x"], "pattern": "y"},
    {"kind": "command", "name": "advisory", "run": "lint", "gating": False},
]})


def result(name: str, kind: str, passed: bool, gating: bool = True, **extra) -> CheckResult:
    return CheckResult(name=name, kind=kind, gating=gating, passed=passed, detail=f"{name} detail", **extra)


def test_verdict_ignores_advisory_checks_and_names_the_first_failure():
    ok = [result("build", "command", True), result("header", "grep", True), result("advisory", "command", False, False)]
    assert decide(GATE, ok) == (Verdict.PASS, "")
    failed = [result("build", "command", False), result("header", "grep", False), ok[2]]
    assert decide(GATE, failed) == (Verdict.FAIL, "check 'build' failed: build detail")


def test_a_refused_seat_outranks_a_failure():
    refused = [result("build", "command", False), result("header", "grep", False, incomplete=True),
               result("advisory", "command", True, False)]
    assert decide(GATE, refused)[0] is Verdict.INCOMPLETE


@pytest.mark.parametrize("names", [
    [],  # an empty list of checks
    ["build", "header"],  # one missing
    ["build", "header", "advisory", "extra"],  # one added
    ["build", "renamed", "advisory"],  # one renamed
])
def test_results_that_do_not_match_the_gate_are_a_grader_fault(names):
    kinds = {"build": "command", "header": "grep", "advisory": "command"}
    results = [result(n, kinds.get(n, "grep"), True, n != "advisory") for n in names]
    with pytest.raises(InfrastructureError, match="grader fault"):
        decide(GATE, results)


def test_frames_come_back_only_as_regular_files_the_report_names(tmp_path):
    """The observer's out folder is read by name: a link, a traversal or an unnamed file is never read."""
    from bench.grading.browser import read_frames

    tar = tmp_path / "frames.tar"
    with tarfile.open(tar, "w") as archive:
        for name, data in {"bench-out/first.png": b"PNG1", "bench-out/extra.png": b"X",
                           "bench-out/../escape.png": b"E"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("bench-out/later.png")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    files = {"first": "first.png", "later": "later.png", "escape": "../escape.png"}
    assert read_frames(tar, files) == {"first": b"PNG1"}
    assert read_frames(tmp_path / "absent.tar", files) == {}

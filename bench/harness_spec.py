"""The `harness` check as gate.toml writes it: withheld tests injected beside the agent's code and run.

A harness is a case's own test files (a `harness.zig` next to the agent's `src/`, a
TypeScript driver under `test/`) that compile or load against the agent's code and
assert the prompt's requirements. The fields stay general so that any case, on any
track, drives one the same way: which withheld files, where they land, how the
toolchain is started, what the runner reports in. bench/grading/harness.py runs it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .check_base import CheckBase

ARGS = "BENCH_TEST_ARGS"
PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
DEFAULT_RUN = {"zig": "zig test ${args} {entry}", "node": "node ${args} {entry}"}


class HarnessCheck(CheckBase):
    """Inject withheld test files into the workspace copy of a fresh grader container, run them, count tests.

    Per-test results come only from bench's own runner (zig's `--test-runner`, or a script
    driving node:test's `run`), which marks each result with a key the graded code never
    sees; the host accepts a run only when the runner's end record is there.
    """

    kind: Literal["harness"]
    format: Literal["zig", "node"] = Field(
        description="The toolchain and bench's runner for it. zig: `zig test` with bench's test runner "
        "($BENCH_TEST_ARGS is `--test-runner <it>`); only tests declared in the withheld .zig files run and count, "
        "named as zig names them (harness.test.<name>). node: node:test's runner with every test file in one "
        "process, started by bench's script ($BENCH_TEST_ARGS is its path; the test files follow it), which freezes "
        "node:assert and node:test first; tests declared in the withheld files count, named `suite > test`.")
    withheld: list[str] = Field(
        min_length=1, description="Files or folders of goldens/<case>/ (never solution/, answers/ or gate.toml), each "
        "landing at <into>/<its name>, root-owned and read-only. The first is the test entry the default `run` "
        "starts. Names are letters, digits, '.', '_' and '-'.")
    into: str = Field(
        ".", description="The workspace folder the withheld files land in, e.g. src for a harness.zig that "
        "@imports the agent's src/impl.zig. Must be a folder (or missing) in the agent's workspace, never a link. "
        "The files exist only in this check's container: later checks see the agent's files only.")
    run: str | None = Field(
        None, description="Shell command run in /workspace as the graded code's uid. It must pass $BENCH_TEST_ARGS "
        "(zig: `zig test $BENCH_TEST_ARGS src/harness.zig`; node: `node $BENCH_TEST_ARGS test/a.test.ts "
        "test/b.test.ts`), and should start the test process directly: anything it runs first runs while the "
        "runner's key is on disk. Default: that command on <into>/<first withheld entry>.")
    timeout_s: int = Field(300, ge=1, description="Wall clock for the run, compilation included.")
    min_pass: int | None = Field(
        None, ge=1, description="At least this many harness tests must pass. Default: every harness test passes "
        "(none fails, none is skipped) and at least one runs.")

    @field_validator("withheld")
    @classmethod
    def _withheld(cls, value: list[str]) -> list[str]:
        from .gatespec import goldens_path

        for path in value:
            bad = [part for part in PurePosixPath(path).parts if not PLAIN.match(part)]
            if bad:
                raise ValueError(f"{path!r}: {bad[0]!r} is not a plain name (letters, digits, '.', '_', '-')")
        names = [PurePosixPath(path).name for path in value]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two withheld entries would land at the same name {twice[0]!r} in `into`")
        return [goldens_path(path) for path in value]

    @field_validator("into")
    @classmethod
    def _into(cls, value: str) -> str:
        parts = PurePosixPath(value).parts
        if PurePosixPath(value).is_absolute() or ".." in parts or any(not PLAIN.match(p) for p in parts if p != "."):
            raise ValueError(f"{value!r} is not a plain folder inside the workspace (e.g. src, test, or .)")
        return str(PurePosixPath(value))

    @field_validator("run")
    @classmethod
    def _run(cls, value: str | None) -> str | None:
        if value is not None and f"${ARGS}" not in value and f"${{{ARGS}}}" not in value:
            raise ValueError(f"run must pass ${ARGS} to the toolchain (e.g. `zig test ${ARGS} src/harness.zig`): "
                             "without bench's runner no test result is ever accepted")
        return value

    @model_validator(mode="after")
    def _entry(self) -> "HarnessCheck":
        if self.format == "zig" and self.run is None and not self.withheld[0].endswith(".zig"):
            raise ValueError(f"the first withheld entry {self.withheld[0]!r} is what `zig test` runs by default: "
                             "put the harness .zig first, or write `run`")
        return self

    def landed(self, name: str) -> str:
        """Where a withheld entry lands, relative to the workspace."""
        return str(PurePosixPath(self.into) / PurePosixPath(name).name)

    def command(self) -> str:
        """The shell command the check runs: `run`, or the format's default on the first withheld entry."""
        if self.run is not None:
            return self.run
        return DEFAULT_RUN[self.format].format(args=ARGS, entry=shlex.quote(self.landed(self.withheld[0])))

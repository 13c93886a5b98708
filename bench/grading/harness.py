"""The `harness` check's executor: withheld tests injected beside the agent's code, run, and counted.

One fresh grader container per check, like `command`: the exported workspace, then the
check's withheld files at <into>/<name> (root-owned, read-only, so the graded code can
neither rewrite nor pre-create them), then bench's runner and a one-time key. The
container is discarded with everything in it and nothing goes back into the workspace
tar, so every later check sees the agent's files only.

How the counts stay the runner's (bench/grading/harness_runners.py, bench/gates/harness.py):
bench's runner, not the toolchain's, reports each harness test, in a record carrying an
HMAC under a key it reads and deletes before any test runs; the host accepts only
verified records and only a run whose end record arrived. So these forgeries fail, each
with a test in tests/integration/test_harness_check.py: printing a toolchain's summary
("All 12 tests passed.") or fake TAP and exiting 0; exit(0) from inside a test; printing
lines shaped like bench's records; adding passing tests of one's own (zig: they never
run; node: only tests declared in the withheld files count); on node, swapping
`assert.equal` or `test` for forgiving ones (frozen before any test file loads). The
preflight refuses a workspace that would misplace or impersonate the harness: `into` (or
a folder on the way) being a link or a file, and, on zig, a file whose tests zig would
name like the harness's own (src/harness.test.zig beside src/harness.zig).

What remains trusted, because the graded code runs inside the test process:
* that it does not search its own process memory for the key (and brute-force it
  against a record it intercepts), nor, on node, rewrite the Promise or async-iteration
  intrinsics that carry the runner's events;
* that `run` starts the test process directly: a command that runs the agent's code
  first (`zig build && ...`, an npm script) runs it while the key is still on disk;
* the harness's own assertions: a harness that compares through the agent's objects
  (their `equals`, their `toString`) is as honest as those objects.
"""

from __future__ import annotations

import io
import posixpath
import secrets
import tarfile
from pathlib import Path, PurePosixPath

from ..gates import harness as records
from ..harness_spec import ARGS, HarnessCheck
from ..hashing import walk
from ..result_models import CheckResult
from ..sandbox import ROOT, WORKSPACE
from . import GradeContext, log_line
from .command import execute
from .harness_runners import NODE_RUNNER, ZIG_RUNNER, render, zig_prefixes

UID = 1000
DIRECTIONS = {"tests_passed": "higher", "tests_failed": "lower", "tests_total": "higher"}


def run(ctx: GradeContext, check: HarnessCheck, seconds_left: float) -> CheckResult:
    command = check.command()
    log_line(ctx, f"--- check '{check.name}' (harness, {check.format}): {command}")
    base = dict(name=check.name, kind=check.kind, gating=check.gating)
    files = landed_files(ctx.goldens, check)
    refused = preflight(ctx.workspace_tar, check, files)
    if refused:
        detail = f"the harness cannot be placed: {refused}"
        log_line(ctx, f"[FAIL] {check.name} (harness)\n{detail}\n")
        return CheckResult(passed=False, detail=detail, **base)
    key = secrets.token_hex(32)
    home = f"/bench-harness-{secrets.token_hex(8)}"
    runner_name, args, source = runner(check, files, home)
    extra = [injected_tar(ctx.goldens, check), runner_tar(home, runner_name, source, key)]
    timeout_s = min(check.timeout_s, seconds_left)  # the gate's wall clock may leave less than the check's own
    done = execute(ctx, "check", command, timeout_s, {ARGS: args}, extra)
    out = done.outcome
    budget_mb = ctx.limits.disk_max_mb if out.budget == "disk" else ctx.limits.check_output_max_mb
    seen = records.Observation(exit_code=out.exit_code, stdout=done.stdout, stderr=done.stderr,
                               timed_out=out.timed_out, budget=out.budget, budget_mb=budget_mb,
                               oom_killed=out.oom_killed, memory_mb=ctx.limits.memory_mb)
    decision = records.decide(command, timeout_s, check.min_pass, seen, records.read(done.stdout, key.encode()))
    log_line(ctx, f"[{'pass' if decision.passed else 'FAIL'}] {check.name} (harness)\n{decision.detail}\n")
    bounds = {"tests_passed": float(check.min_pass)} if check.min_pass else {"tests_failed": 0.0}
    return CheckResult(passed=decision.passed, detail=decision.detail, metrics=decision.metrics,
                       directions=DIRECTIONS if decision.metrics else {}, bounds=bounds if decision.metrics else {},
                       review=decision.review, **base)


def landed_files(goldens: Path, check: HarnessCheck) -> list[str]:
    """Every withheld file, as a path relative to `into` (a folder's files under its name), in order."""
    files = []
    for entry in check.withheld:
        source, name = goldens / entry, PurePosixPath(entry).name
        if source.is_dir():
            files += [f"{name}/{p.relative_to(source).as_posix()}" for p in walk(source) if p.is_file()]
        else:
            files.append(name)
    return files


def runner(check: HarnessCheck, files: list[str], home: str) -> tuple[str, str, str]:
    """(file name, $BENCH_TEST_ARGS, source) of bench's runner for the check's format."""
    key_path = f"{home}/key/key"
    if check.format == "zig":
        counted = zig_prefixes([f for f in files if f.endswith(".zig")])
        return "runner.zig", f"--test-runner {home}/runner.zig", render(ZIG_RUNNER, key_path, prefixes=counted)
    absolute = [posixpath.normpath(f"{WORKSPACE}/{check.into}/{f}") for f in files]
    return "runner.mjs", f"{home}/runner.mjs", render(NODE_RUNNER, key_path, files=absolute)


def preflight(workspace_tar: Path, check: HarnessCheck, files: list[str]) -> str | None:
    """Why the harness cannot go where the gate puts it in this workspace, or None.

    Read from the tar on the host, so nothing the agent wrote runs. A link or file where
    `into` (or a folder on the way) should be would send the harness elsewhere or stop
    the copy (which would look like the harness's fault); on zig, a file of the agent's
    that zig would name like a harness file would have its tests counted as the harness's.
    """
    into = PurePosixPath(check.into)
    folders = {str(PurePosixPath(*into.parts[:n])) for n in range(1, len(into.parts) + 1)} - {"."}
    modules = [f[: -len(".zig")].replace("/", ".") for f in files if f.endswith(".zig")]
    landing = {str(into / f) for f in files}
    with tarfile.open(workspace_tar, mode="r|") as archive:
        for member in archive:
            path = posixpath.normpath(member.name)
            archive.members.clear()
            if not path.startswith("workspace/"):
                continue
            path = path[len("workspace/"):]
            if path in folders and not member.isdir():
                return f"the workspace's {path} is {_kind(member)}, not a folder; the harness lands in {check.into}/"
            inside = posixpath.relpath(path, str(into)) if check.into != "." else path
            module = inside[: -len(".zig")].replace("/", ".") if inside.endswith(".zig") else None
            if module and path not in landing and not inside.startswith("../") and \
                    any(module.startswith(f"{m}.") for m in modules):
                return (f"the workspace's {path} would have its tests named like the harness's own "
                        f"({module}.test.*); rename it")
    return None


def _kind(member: tarfile.TarInfo) -> str:
    return "a symlink" if member.issym() else "a hard link" if member.islnk() else "a file"


def injected_tar(goldens: Path, check: HarnessCheck) -> bytes:
    """The withheld entries at workspace/<into>/<name>: root-owned, no write bit, no entry for `into` itself.

    Only the withheld entries are in the tar: a folder on the way keeps the agent's
    owner and mode (the engine makes a missing one, root-owned).
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for entry in check.withheld:
            source = goldens / entry
            target = posixpath.normpath(f"workspace/{check.into}/{PurePosixPath(entry).name}")
            paths = [source, *walk(source)] if source.is_dir() else [source]
            for path in paths:
                if path.is_symlink():
                    continue  # goldens are the case author's; a link in them is not followed into a grader
                rel = path.relative_to(source).as_posix() if path != source else ""
                _add(archive, f"{target}/{rel}".rstrip("/") if rel else target, path)
    return buffer.getvalue()


def _add(archive: tarfile.TarFile, name: str, path: Path) -> None:
    info = tarfile.TarInfo(name)
    info.uid = info.gid = ROOT
    if path.is_dir():
        info.type, info.mode = tarfile.DIRTYPE, 0o555
        archive.addfile(info)
        return
    data = path.read_bytes()
    info.size, info.mode = len(data), 0o444
    archive.addfile(info, io.BytesIO(data))


def runner_tar(home: str, name: str, source: str, key: str) -> bytes:
    """bench's runner (root's, read-only) and its key in a folder only uid 1000 may enter, so it can delete it."""
    buffer = io.BytesIO()
    top = home.strip("/")
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for entry, owner, mode, data in ((top, ROOT, 0o555, None), (f"{top}/{name}", ROOT, 0o444, source.encode()),
                                         (f"{top}/key", UID, 0o700, None), (f"{top}/key/key", UID, 0o400, key.encode())):
            info = tarfile.TarInfo(entry)
            info.uid = info.gid = owner
            info.mode = mode
            if data is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()

"""The `compile` check's executor: typecheck a submission against its subject's public declarations.

Why nothing of the submission can run: the host picks the sources out of the exported
workspace tar itself — regular files only, so a symlinked entry or helper is never
followed — and puts only those, as data, into a fresh grader container together with a
tsconfig, a package.json and the runner (bench/grading/compile_runner.py), all written
here. The workspace's own package.json, tsconfig, scripts and node_modules never enter:
no install script, no compiler plugin, no test of the agent's reaches the grader. The
subject is installed from its pinned tarball (npm, offline, scripts off) into that
disposable project, so the declarations are the package's as published, not a copy the
agent could have edited; the runner refuses the constructs that would let a submission
typecheck against declarations of its own (``declare module``, ``declare global``,
triple-slash references, ``@ts-ignore`` and friends).

The result carries the diagnostics with paths relative to the submission (never a temp
path), the installed package's name, version and tarball SHA-256, and the file names.
"""

from __future__ import annotations

import json
import posixpath
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InfrastructureError
from ..compile_spec import CompileCheck
from ..result_models import CheckResult, Diagnostic
from ..sandbox import Budgets, SandboxSpec, tar_tree
from . import GradeContext, log_line
from .allium import ROOT
from .compile_runner import SOURCE

SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
PROJECT = "/compile"
SCRIPT = (f"cd {PROJECT} && HOME=/tmp npm install --offline --ignore-scripts --no-audit --no-fund "
          "--no-package-lock --loglevel=error ./subject.tgz >&2 && node runner.js job.json")


@dataclass
class Submission:
    """What the host read out of the workspace tar for one compile check."""

    files: dict[str, bytes] = field(default_factory=dict)  # path under the root -> bytes
    refused: list[str] = field(default_factory=list)  # why the submission cannot be compiled at all
    skipped: list[str] = field(default_factory=list)  # links and declaration files left out


def collect(workspace_tar: Path, check: CompileCheck) -> Submission:
    """The submission's sources from the tar, streamed; over the caps or without a regular entry is refused."""
    prefix = "" if check.root == "." else check.root.rstrip("/") + "/"
    found, total, cap = Submission(), 0, check.max_kb << 10
    with tarfile.open(workspace_tar, mode="r|") as archive:
        for member in archive:
            name = _under(member.name, prefix)
            if name is None or not name.endswith(SUFFIXES) or _excluded(name):
                archive.members.clear()
                continue
            if not member.isreg() or name.endswith(DECLARATIONS):
                found.skipped.append(f"{name} ({'a declaration file' if member.isreg() else 'not a regular file'})")
                found.files.pop(name, None)
            elif len(found.files) >= check.max_files or total + member.size > cap:
                found.refused.append(f"the submission passes the check's caps ({check.max_files} files, "
                                     f"{check.max_kb} KiB)")
                break
            else:
                found.files[name] = archive.extractfile(member).read()
                total += member.size
            archive.members.clear()
    if not found.refused and check.entry not in found.files:
        found.refused.append(_missing_entry(check.entry, found.skipped))
    return found


def _under(member: str, prefix: str) -> str | None:
    normal = posixpath.normpath(member)
    if not normal.startswith(ROOT):
        return None
    inside = normal[len(ROOT):]
    return inside[len(prefix):] if inside.startswith(prefix) else None


def _excluded(name: str) -> bool:
    return any(part == "node_modules" or part.startswith(".") for part in name.split("/")[:-1])


def _missing_entry(entry: str, skipped: list[str]) -> str:
    link = next((s for s in skipped if s.startswith(f"{entry} (")), None)
    if link:
        return f"the entry {entry} is {link.split(' (', 1)[1].rstrip(')')}; it must be a regular file, never a symlink"
    return f"the entry {entry} is not in the workspace"


def compiler_options(check: CompileCheck) -> dict:
    """The one tsconfig every submission is graded with (images/node/scaffold.sh gives agents the same)."""
    return {"strict": check.strict, "target": "ES2022", "lib": ["ES2023", "DOM"], "module": "preserve",
            "moduleResolution": "bundler", "jsx": "react", "types": [], "allowImportingTsExtensions": True,
            "skipLibCheck": False}


def project_tar(check: CompileCheck, submission: Submission, subject_tgz: Path) -> bytes:
    job = {"files": sorted(submission.files), "compilerOptions": compiler_options(check)}
    files = {f"{PROJECT[1:]}/src/{name}": data for name, data in submission.files.items()}
    files.update({f"{PROJECT[1:]}/job.json": json.dumps(job).encode(), f"{PROJECT[1:]}/runner.js": SOURCE.encode(),
                  f"{PROJECT[1:]}/package.json": b'{"name": "bench-compile", "private": true}\n',
                  f"{PROJECT[1:]}/subject.tgz": subject_tgz.read_bytes()})
    return tar_tree([], files)


def run(ctx: GradeContext, check: CompileCheck, seconds_left: float) -> CheckResult:
    log_line(ctx, f"--- check '{check.name}' (compile): {check.entry} under {check.root}")
    if ctx.subject is None or ctx.subject_tarball is None:
        raise InfrastructureError(f"check '{check.name}' (compile) needs the case's subject (case.toml `subject`), "
                                  "and this trial has none")
    package = {"name": ctx.subject.package, "version": ctx.subject.version,
               "tarball_sha256": ctx.subject.tarball_sha256}
    submission = collect(ctx.workspace_tar, check)
    base = dict(name=check.name, kind=check.kind, gating=check.gating, package=package,
                files=sorted(submission.files))
    if submission.refused:
        detail = f"mechanicalStatus: fail — {submission.refused[0]}"
        log_line(ctx, f"[FAIL] {check.name} (compile)\n{detail}\n")
        return CheckResult(passed=False, detail=detail, **base)
    report = _typecheck(ctx, check, submission, min(check.timeout_s, seconds_left))
    diagnostics = [Diagnostic(**d) for d in report["diagnostics"]]
    passed, detail = decide(check, diagnostics, report["imports"], package["name"])
    log_line(ctx, f"[{'pass' if passed else 'FAIL'}] {check.name} (compile, TypeScript {report['typescript']})\n"
                  + "\n".join(_line(d) for d in diagnostics[:50]) + f"\n{detail}\n")
    total = max(report.get("total", 0), len(diagnostics))  # the runner sends at most 200 of them
    return CheckResult(passed=passed, detail=detail, diagnostics=diagnostics, metrics={"diagnostics": total},
                       directions={"diagnostics": "lower"}, review={"skipped": submission.skipped} if submission.skipped
                       else {}, **base)


def _typecheck(ctx: GradeContext, check: CompileCheck, submission: Submission, timeout_s: float) -> dict:
    """Run the runner in a fresh grader container; its one JSON line, or ERROR (the runner is ours)."""
    budgets = Budgets.of(ctx.limits, ctx.limits.check_output_max_mb, "check-output")
    spec = SandboxSpec(image=ctx.image, command=["sh", "-c", SCRIPT], labels=ctx.labels("check"), limits=ctx.limits,
                       workdir=PROJECT, env={"HOME": "/tmp"}, budgets=budgets, role="check")
    with ctx.sandboxes(spec) as box:
        box.put(project_tar(check, submission, ctx.subject_tarball))
        outcome = box.run(timeout_s)
        stdout, stderr = box.output(stdout=True, stderr=False), box.output(stdout=False, stderr=True)
    if outcome.timed_out or outcome.oom_killed:  # the compiler only reads the submission: what it costs is the
        why = (f"ran past {timeout_s:.0f} s" if outcome.timed_out  # submission's, never a harness fault
               else f"ran out of its {ctx.limits.memory_mb} MiB")
        return {"typescript": "?", "imports": [], "diagnostics": [
            {"code": "bench-limit", "message": f"the compiler {why} on this submission"}]}
    try:
        return json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise InfrastructureError(f"check '{check.name}' (compile): the runner exited {outcome.exit_code} without a "
                                  f"report: {stderr.strip()[-600:]}") from None


def decide(check: CompileCheck, diagnostics: list[Diagnostic], imports: list[dict], package: str) -> tuple[bool, str]:
    """Pass: no error diagnostic and (must_import) some file imports the subject by its public name."""
    errors = [d for d in diagnostics if d.category == "error"]
    if errors:
        return False, f"mechanicalStatus: fail — {len(errors)} error(s); first: {_line(errors[0])}"
    used = [i["file"] for i in imports if i["module"] == package or i["module"].startswith(package + "/")]
    if check.must_import and not used:
        return False, f"mechanicalStatus: fail — no file imports {package}; the submission must use the subject"
    return True, f"mechanicalStatus: pass — typechecks against {package}'s public declarations"


def _line(d: Diagnostic) -> str:
    place = f"{d.file}:{d.line}:{d.column} " if d.file else ""
    return f"{place}{d.code} {d.message.splitlines()[0] if d.message else ''}"

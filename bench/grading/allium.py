"""The Allium checks' executors: a spec or a findings report scored on the host, from the exported workspace tar.

Why on the host, from the tar: the scorers (bench/allium/) are pure functions of
text, so nothing the agent wrote needs to run, and a check that reads the archive's
own members cannot be led out of the workspace. Only a regular file counts — a
symlink or hard link named like the artifact is never followed — and only up to the
check's size cap, so a huge file, a link to somewhere else or an odd name can
neither exhaust the host nor pass for the artifact. The archive is streamed, and
its member list dropped as it goes, so a workspace of a million tiny files costs
time, not memory. The golden data is read here too, from goldens/<case>/, and never
reaches a container.

The result records every metric with its value and direction (``bench compare``
floors each in that direction), the bound of each gating metric, the decider that
read the spec, and the scorer's review lists (each cut to REVIEW_MAX entries, so a
spec of a hundred thousand invented transitions cannot bloat the record).
"""

from __future__ import annotations

import posixpath
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..allium import (AlliumScore, DistillThresholds, Problem, WeedThresholds, choose_spec, load_distill_manifest,
                      load_weed_manifest, score_distill, score_weed, validate_distill_file, validate_weed_file)
from ..errors import CaseError
from ..gatespec import AlliumCheck, AlliumDistillCheck, AlliumWeedCheck
from ..result_models import CheckResult
from . import GradeContext, log_line

ROOT = "workspace/"
KINDS = ("allium-distill", "allium-weed")
REVIEW_MAX = 50  # entries per review list in a record: a hostile spec could otherwise list thousands


@dataclass(frozen=True)
class Artifact:
    """What a check scored: the workspace path it read, its text, or why there was none to read."""

    path: str | None
    text: str | None
    problem: str = ""


def regular_files(workspace_tar: Path, wanted: Callable[[str], bool]) -> dict[str, int]:
    """Workspace-relative path -> size of every regular file ``wanted`` accepts (later members win)."""
    sizes: dict[str, int] = {}
    with tarfile.open(workspace_tar, mode="r|") as archive:
        for member in archive:
            name = _relative(member.name)
            if name is not None and member.isreg() and wanted(name):
                sizes[name] = member.size
            archive.members.clear()  # a streamed archive still keeps every header; nothing here needs them
    return sizes


def read_member(workspace_tar: Path, path: str) -> bytes:
    """The bytes of the last regular member at ``path`` (callers checked it exists and is under the cap)."""
    data = b""
    with tarfile.open(workspace_tar, mode="r|") as archive:
        for member in archive:
            if member.isreg() and _relative(member.name) == path:
                data = archive.extractfile(member).read()
            archive.members.clear()
    return data


def _relative(name: str) -> str | None:
    """A member's path inside the workspace, normalised; None for anything outside it."""
    normal = posixpath.normpath(name)
    return normal[len(ROOT):] if normal.startswith(ROOT) else None


def read_artifact(workspace_tar: Path, preferred: str, cap_bytes: int, any_spec: bool) -> Artifact:
    """The artifact at ``preferred``, or (``any_spec``) the largest ``.allium`` file, as the seed chose."""
    accept = (lambda p: p == preferred or p.endswith(".allium")) if any_spec else (lambda p: p == preferred)
    sizes = regular_files(workspace_tar, accept)
    path = choose_spec(sizes, preferred) if any_spec else (preferred if preferred in sizes else None)
    if path is None:
        kind = f"{preferred} nor any .allium file" if any_spec else preferred
        return Artifact(None, None, f"no {kind} in the workspace (as a regular file)")
    if sizes[path] > cap_bytes:
        return Artifact(path, None, f"{printable(path)} is {sizes[path]:,} bytes, over the check's cap of {cap_bytes:,}")
    return Artifact(path, read_member(workspace_tar, path).decode("utf-8", errors="replace"))


def printable(name: str) -> str:
    """A member name as records may show it: undecodable bytes and control characters escaped.

    Names come from the agent: a raw one could not be written as JSON (lone surrogates)
    and could start a line of its own in the verdict's reason or in gate.log.
    """
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def run_distill(ctx: GradeContext, check: AlliumDistillCheck, seconds_left: float) -> CheckResult:
    manifest = load_distill_manifest(ctx.goldens / check.manifest)
    bounds = _merged(DistillThresholds, manifest.quality_pass, check.thresholds)
    artifact = read_artifact(ctx.workspace_tar, check.path or manifest.spec_path, check.max_kb << 10, any_spec=True)
    return _result(ctx, check, score_distill(artifact.text, manifest, bounds), artifact)


def run_weed(ctx: GradeContext, check: AlliumWeedCheck, seconds_left: float) -> CheckResult:
    manifest = load_weed_manifest(ctx.goldens / check.manifest)
    bounds = _merged(WeedThresholds, manifest.gate, check.thresholds)
    artifact = read_artifact(ctx.workspace_tar, check.path or manifest.findings_path, check.max_kb << 10,
                             any_spec=False)
    return _result(ctx, check, score_weed(artifact.text, manifest, bounds), artifact)


def _merged(model, base, overrides):
    """The golden data's bounds with the ones the gate sets on top (those it leaves out keep the data's)."""
    if overrides is None:
        return base
    return model.model_validate({**base.model_dump(), **overrides.model_dump(exclude_unset=True)})


def _result(ctx: GradeContext, check: AlliumCheck, score: AlliumScore, artifact: Artifact) -> CheckResult:
    """The score as a check result; its first detail line is the verdict's reason."""
    shown = printable(artifact.path) if artifact.path else "(nothing)"
    head = artifact.problem or "; ".join(score.reasons) or f"every bound held ({shown})"
    lines = [f"{name} = {m.value:.4g} ({m.direction} is better"
             + (f", bound {m.threshold:g})" if m.gating else ")") for name, m in score.metrics.items()]
    lines += [f"scored {shown}" + (f" with {score.decider}" if score.decider else "")]
    detail = "\n".join([head, *lines])
    log_line(ctx, f"[{'pass' if score.passed else 'FAIL'}] {check.name} ({check.kind})\n{detail}\n")
    return CheckResult(
        name=check.name, kind=check.kind, gating=check.gating, passed=score.passed, detail=detail,
        metrics={name: m.value for name, m in score.metrics.items()},
        directions={name: m.direction for name, m in score.metrics.items()},
        bounds={name: m.threshold for name, m in score.metrics.items() if m.gating},
        decider=score.decider, review={name: _capped(items) for name, items in score.review.items()})


def _capped(items: list[str]) -> list[str]:
    if len(items) <= REVIEW_MAX:
        return items
    return items[:REVIEW_MAX] + [f"... and {len(items) - REVIEW_MAX} more"]


def golden_problems(case, root: Path) -> list[Problem]:
    """Every problem of the case's Allium golden data (bench/allium/validate.py), before any trial runs.

    A manifest that does not load raises CaseError; one written for another fixture
    than the case's is an error, since every state would be checked against the wrong code.
    """
    problems: list[Problem] = []
    for check in case.gate.checks:
        if check.kind not in KINDS:
            continue
        path = case.goldens_dir / check.manifest
        load = load_distill_manifest if check.kind == "allium-distill" else load_weed_manifest
        if (fixture := load(path).fixture) != case.spec.fixture:
            problems.append(Problem("error", f"check {check.name!r}", f"{path.name} describes fixture {fixture!r}, "
                                    f"but case.toml names {case.spec.fixture!r}"))
        problems += validate_distill_file(path, root) if check.kind == "allium-distill" \
            else validate_weed_file(path, root, case.workspace)
    return problems


def require_valid_goldens(case, root: Path) -> None:
    """Refuse a run on golden data with errors: every score of it would be wrong."""
    errors = [str(p) for p in golden_problems(case, root) if p.level == "error"]
    if errors:
        raise CaseError(case.goldens_dir, "(golden data)", "; ".join(errors), "run `bench cases validate` and fix it")

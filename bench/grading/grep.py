"""The `grep` check's executor: read straight from the exported workspace tar, on the host."""

from __future__ import annotations

from ..gates import grep
from ..gatespec import GrepCheck
from ..result_models import CheckResult
from . import GradeContext, log_line


def run(ctx: GradeContext, check: GrepCheck, seconds_left: float) -> CheckResult:
    passed, detail = grep.run(check.model_dump(), ctx.workspace_tar)
    log_line(ctx, f"[{'pass' if passed else 'FAIL'}] {check.name} (grep)\n{detail}\n")
    return CheckResult(name=check.name, kind=check.kind, gating=check.gating, passed=passed, detail=detail)

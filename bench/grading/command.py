"""The `command` check's executor: a fresh container per check, the graded code as uid 1000.

What a fresh container buys: a process the graded code detaches during one check dies
with that check's container; a path it prepares (a FIFO where a withheld file will be
copied) is not there in the next. The check's withheld files arrive root-owned and
read-only under a random path ($BENCH_WITHHELD), so nothing can be pre-created for
them or overwritten; the reference solution never arrives at all. Docker itself
observes how the command ended (exit code, killed at the deadline, out of memory, a
budget crossed), so killing PID 1 or flooding stdout is the check's failure, named.

A withheld test that links the agent's code trusts that code: it runs in the test's
own process. ``nonce = true`` catches the usual abuse — linked code that prints the
expected lines and exits before the test's main — because only a test that ran to its
end prints the per-check random line the host checks.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from ..gates import command
from ..gatespec import CommandCheck
from ..result_models import CheckResult
from ..sandbox import ROOT, Budgets, Outcome, Sandbox, SandboxSpec, tar_tree
from . import GradeContext, log_line

HOME = "/home/bench"


@dataclass(frozen=True)
class Executed:
    outcome: Outcome
    stdout: str
    stderr: str


def execute(ctx: GradeContext, role: str, script: str, timeout_s: float, env: dict[str, str] | None = None,
            extra: list[bytes] = (), keep: tuple[str, Path] | None = None) -> Executed:
    """Run ``sh -c script`` in /workspace of a fresh grader container; keep=(folder, tar) exports one after.

    Raises BudgetExceeded when the kept folder passes the export budget.
    """
    with ctx.sandboxes(command_spec(ctx, role, ["sh", "-c", script], env)) as box:
        return finish(ctx, box, timeout_s, extra, keep)


def command_spec(ctx: GradeContext, role: str, command: list[str], env: dict[str, str] | None = None) -> SandboxSpec:
    budgets = Budgets.of(ctx.limits, ctx.limits.check_output_max_mb, "check-output")
    return SandboxSpec(image=ctx.image, command=command, labels=ctx.labels(role), limits=ctx.limits,
                       env={"HOME": HOME, **(env or {})}, budgets=budgets, role=role)


def finish(ctx: GradeContext, box: Sandbox, timeout_s: float, extra: list[bytes] = (),
           keep: tuple[str, Path] | None = None, go: bytes | None = None) -> Executed:
    """Copy the workspace (and ``extra``) in, then run the box's command to its end: started now, or,
    for a box already started and waiting (``go``), released by copying ``go`` in last."""
    with open(ctx.workspace_tar, "rb") as workspace:
        box.put(workspace)
    for tar in extra:
        box.put(tar)
    if go is None:
        outcome = box.run(timeout_s, log_to=ctx.gate_log)
    else:
        box.put(go)
        outcome = box.wait(timeout_s, log_to=ctx.gate_log)
    stdout, stderr = box.output(stdout=True, stderr=False), box.output(stdout=False, stderr=True)
    if keep and outcome.exit_code == 0 and not outcome.budget:
        box.export(keep[0], keep[1], ctx.limits.export_max_mb << 20)
    return Executed(outcome, stdout, stderr)


def withheld_tar(ctx: GradeContext, paths: list[str], inside: str) -> bytes:
    """The check's withheld files under ``inside``, owned by root, no write bit anywhere."""
    layers, files = [], {}
    for path in paths:
        source = ctx.goldens / path
        target = f"{inside.strip('/')}/{path}"
        if source.is_dir():
            layers.append((target, source))
        else:
            files[target] = source.read_bytes()
    return tar_tree(layers, files, uid=ROOT, read_only=True)


def run(ctx: GradeContext, check: CommandCheck, seconds_left: float) -> CheckResult:
    inside = f"/withheld-{secrets.token_hex(8)}"
    nonce = secrets.token_hex(16) if check.nonce else None
    env = {"BENCH_WITHHELD": inside, **({"BENCH_NONCE": nonce} if nonce else {})}
    extra = [withheld_tar(ctx, check.withheld, inside)] if check.withheld else []
    log_line(ctx, f"--- check '{check.name}' (command): {check.run}")
    timeout_s = min(check.timeout_s, seconds_left)  # the gate's wall clock may leave less than the check's own
    done = execute(ctx, "check", check.run, timeout_s, env, extra)
    passed, detail = command.decide({**check.model_dump(), "timeout_s": int(timeout_s)}, observation(done, ctx, nonce))
    log_line(ctx, f"[{'pass' if passed else 'FAIL'}] {check.name} (command)\n{detail}\n")
    return CheckResult(name=check.name, kind=check.kind, gating=check.gating, passed=passed, detail=detail)


def observation(done: Executed, ctx: GradeContext, nonce: str | None = None) -> command.Observation:
    out = done.outcome
    budget_mb = ctx.limits.disk_max_mb if out.budget == "disk" else ctx.limits.check_output_max_mb
    return command.Observation(exit_code=out.exit_code, stdout=done.stdout, stderr=done.stderr,
                               timed_out=out.timed_out, budget=out.budget, budget_mb=budget_mb,
                               oom_killed=out.oom_killed, memory_mb=ctx.limits.memory_mb, nonce=nonce)

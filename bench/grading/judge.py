"""The `judge` check's executor: a model scores the gate's criteria in a grader whose only network is the model's.

The host reads the files out of the workspace tar and builds the exact request
(bench/grading/judge_prompt.py); a fresh grader container, holding only the harness
wheel and that request, runs the stdlib judge client (bench/judge_client.py) in the
network namespace of the run's judge sidecar (bench/judge.py): the scripted endpoint or
the credential proxy's forwarder, so its one route is the model and it never holds a
key. Nothing of the agent's runs anywhere; its files are text in the prompt. The host
parses the answer and decides.

What a judge that gives no usable answer means (unreachable, refused, timed out, not
the JSON asked for) — never the agent's FAIL:

* a gating judge (``advisory = false``): ERROR for the trial, the reason naming why;
* an advisory judge: the check is recorded as not judged (``incomplete``, the reason in
  its detail) and the verdict stands on the other checks, as it always does.

The residual risk is accepted and visible: files that talk the judge out of its answer
format turn a gating judge's FAIL into ERROR, with the answer's start quoted in the
reason. A lost engine is always ERROR and stops the run, advisory or not.

Recorded: per-criterion scores as metrics (direction higher; ``min_score`` as each
bound), the judge model, its endpoint and the SHA-256 of the exact prompt sent, the
judge's rationale and the files shown or left out (review); the sidecar's log under
artifacts/<check>/.
"""

from __future__ import annotations

import json
import time

from ..errors import EngineUnavailable, InfrastructureError
from ..gates.session import slug
from ..harness import WHEEL_IN_CONTAINER
from ..judge_spec import JudgeCheck
from ..models import Limits
from ..result_models import CheckResult
from ..sandbox import MiB, Budgets, SandboxSpec, tar_tree
from . import GradeContext, log_line
from .judge_prompt import (LISTED_MAX, JudgeFault, Shown, UnusableAnswer, collect, decide, parse_answer, prompt_sha256,
                           request_body)

JOB = "/judge/job.json"
LIMITS = Limits(cpus=0.5, memory_mb=256, pids=64)
SLACK_S = 20  # the container's start and the client's exit, beyond the call's own wall clock
ATTEMPTS = 3


def run(ctx: GradeContext, check: JudgeCheck, seconds_left: float) -> CheckResult:
    role = "advisory" if check.advisory else f"gate, min_score {check.min_score}"
    log_line(ctx, f"--- check '{check.name}' (judge, {role}): {', '.join(c.name for c in check.criteria)}")
    base = dict(name=check.name, kind=check.kind, gating=check.gating)
    if ctx.judge is None:
        return not_judged(ctx, check, base, "no judge model was given to this run")
    shown = collect(ctx.workspace_tar, check)
    body = request_body(check, ctx.judge.setup.model, ctx.judge.task, shown)
    base.update(judge={"model": ctx.judge.setup.model, "endpoint": ctx.judge.setup.label,
                       "prompt_sha256": prompt_sha256(body)}, review=review(shown))
    try:
        scores, rationale = judged(ctx, check, body, seconds_left)
    except EngineUnavailable:
        raise
    except UnusableAnswer as exc:
        return unusable(ctx, check, base, str(exc)) if check.gating else not_judged(ctx, check, base, str(exc))
    except (JudgeFault, InfrastructureError) as exc:
        return not_judged(ctx, check, base, str(exc))
    passed, detail = decide(check, scores)
    log_line(ctx, f"[{'pass' if passed else 'FAIL' if check.gating else 'low'}] {check.name} (judge)\n{detail}\n"
                  f"rationale: {rationale}\n")
    bounds = {} if check.min_score is None else {name: float(check.min_score) for name in scores}
    base["review"] = {**base["review"], "rationale": [rationale]}
    return CheckResult(passed=passed, detail=detail, metrics={name: float(s) for name, s in scores.items()},
                       directions={name: "higher" for name in scores}, bounds=bounds, **base)


def judged(ctx: GradeContext, check: JudgeCheck, body: dict, seconds_left: float) -> tuple[dict[str, int], str]:
    """The parsed scores; an unusable answer is asked for once more while the wall clock allows."""
    deadline = time.monotonic() + seconds_left
    for attempt in (1, 2):
        text = ask(ctx, check, body, max(1.0, min(check.timeout_s, deadline - time.monotonic() - SLACK_S)))
        try:
            return parse_answer(text, [c.name for c in check.criteria])
        except UnusableAnswer:
            if attempt == 2 or deadline - time.monotonic() < 2 * SLACK_S:
                raise
    raise AssertionError("unreachable")


def unusable(ctx: GradeContext, check: JudgeCheck, base: dict, why: str) -> CheckResult:
    """A gating judge that twice answered without usable scores: the work's FAIL (see UnusableAnswer)."""
    detail = f"the judge could not score this work, asked twice: {why}"
    log_line(ctx, f"[FAIL] {check.name} (judge)\n{detail}\n")
    return CheckResult(passed=False, detail=detail, **base)


def not_judged(ctx: GradeContext, check: JudgeCheck, base: dict, why: str) -> CheckResult:
    """The judge's own failure: ERROR when it gates; recorded beside an unchanged verdict when advisory."""
    if check.gating:
        raise InfrastructureError(f"check '{check.name}' (judge): {why}")
    detail = f"not judged (advisory: the verdict stands on the other checks): {why}"
    log_line(ctx, f"[not judged] {check.name} (judge)\n{detail}\n")
    return CheckResult(passed=False, incomplete=True, detail=detail, **base)


def ask(ctx: GradeContext, check: JudgeCheck, body: dict, timeout_s: float) -> str:
    """The judge's answer text, from the client in a fresh grader joined to the judge's sidecar; JudgeFault if none."""
    job = {"url": ctx.judge.setup.url, "body": body, "timeout_s": timeout_s, "attempts": ATTEMPTS}
    files = {WHEEL_IN_CONTAINER.lstrip("/"): ctx.wheel.read_bytes(), JOB.lstrip("/"): json.dumps(job).encode()}
    folder = ctx.artifacts / slug(check.name)
    folder.mkdir(parents=True, exist_ok=True)
    with ctx.judge.network(folder / ctx.judge.log_name) as network:
        spec = SandboxSpec(image=ctx.image, command=["python3", "-m", "bench.judge_client", JOB], limits=LIMITS,
                           labels=ctx.labels("judge"), workdir="/judge", network=network, role="judge",
                           env={"PYTHONPATH": WHEEL_IN_CONTAINER, "HOME": "/tmp"},
                           budgets=Budgets(output_bytes=4 * MiB, output_name="judge-output"))
        with ctx.sandboxes(spec) as box:
            box.put(tar_tree([], files))
            outcome = box.run(timeout_s + SLACK_S)
            stdout, stderr = box.output(stdout=True, stderr=False), box.output(stdout=False, stderr=True)
    if outcome.timed_out:
        raise JudgeFault(f"the judge did not answer within {timeout_s + SLACK_S:.0f} s")
    try:
        reply = json.loads(stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise JudgeFault(f"the judge client exited {outcome.exit_code} without a reply: {stderr.strip()[-400:]}") from None
    if not reply.get("ok"):
        raise JudgeFault(str(reply.get("error"))[:800])
    if reply.get("stop_reason") == "max_tokens":
        raise JudgeFault(f"the judge's answer was cut at max_tokens ({check.max_tokens}); raise the check's max_tokens")
    return str(reply.get("text", ""))


def review(shown: Shown) -> dict[str, list[str]]:
    """The files shown (a cut one with its full size) and those left out, each list capped, for a person."""
    names = [f"{name} (cut: {shown.cut[name]:,} bytes, the first part shown)" if name in shown.cut else name
             for name in shown.files]
    lists = {"shown": names[:LISTED_MAX], "not shown": shown.not_shown[:LISTED_MAX]}
    return {key: value for key, value in lists.items() if value}

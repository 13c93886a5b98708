"""The `browser` check's executor: seat, build, observe — three containers — then decide here.

1. **Seat**: probed once per run and grader image (``SeatProbes``), so a case that needs a
   GPU is refused as INCOMPLETE before anything of the agent's is built or run.
2. **Build**: the gate's build command runs like any command check (bench/grading/command.py),
   as the graded code's uid in a fresh container; only the served folder leaves it, within
   the export budget.
3. **Observe**: a fresh browser container gets that folder, the plan and the harness wheel
   (root-owned, read-only) and runs the observer isolated (``python3 -I``, working directory
   /opt/bench). No program of the agent's runs there; its page's JavaScript runs inside
   Chromium. The observer's one report line must name this check; the frames come back as
   files, and the host decodes them and decides every predicate (bench/gates/pixels.py).
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path

from .. import seat as seats
from ..errors import InfrastructureError
from ..gates import pixels
from ..gates.browser import Stopwatch, refusal, slug
from ..gates.runner import BOOT, MARK, PLAN, WHEEL
from ..gatespec import BrowserCheck
from ..result_models import CheckResult
from ..sandbox import ROOT, Budgets, BudgetExceeded, MissingPath, SandboxSpec, dir_tar, tar_tree
from . import GradeContext, log_line
from .command import execute, observation
from ..gates import command as command_rules

OUT = "/bench-out"
SITE = "/srv"
FRAMES_MAX_BYTES = 256 << 20
OBSERVER_SLACK_S = 90  # Chromium's launch and the seat probe, beyond the check's own wall clock


def run(ctx: GradeContext, check: BrowserCheck, seconds_left: float) -> CheckResult:
    result = lambda passed, detail, **extra: CheckResult(name=check.name, kind=check.kind, gating=check.gating,
                                                          passed=passed, detail=detail, **extra)
    log_line(ctx, f"--- check '{check.name}' (browser)")
    clock = Stopwatch()  # the host's share: seat probe, build and observer containers, measuring
    if ctx.seat_need != "none":
        with clock("seat-probe"):
            seat = probe(ctx)
        if refused := refusal(ctx.seat_need, ctx.seat_mode or "auto", seat):
            return result(False, refused, incomplete=True, seat=seat, timings=clock.laps)
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        site, frames = Path(tmp) / "site.tar", Path(tmp) / "frames.tar"
        with clock("build"):
            failure = build(ctx, check, site, seconds_left)
        if failure:
            return result(False, failure, timings=clock.laps)
        with clock("observe"):
            report, failure = observe(ctx, check, site, frames, seconds_left)
        if failure:
            return result(False, failure, timings=clock.laps)
        with clock("measure"):
            judged = judge(ctx, check, report, frames)
    return judged.model_copy(update={"timings": {**judged.timings, **clock.laps}})


def build(ctx: GradeContext, check: BrowserCheck, site: Path, seconds_left: float) -> str | None:
    """Run the build and keep the served folder as a tar; the reason it failed, or None."""
    script = check.build or "true"
    try:
        done = execute(ctx, "build", script, min(check.build_timeout_s, seconds_left),
                       keep=(f"/workspace/{check.serve}", site))
    except BudgetExceeded as exc:
        return str(exc)
    except MissingPath:  # the served folder does not exist: the project's doing (an engine fault stays ERROR)
        return f"the build left no {check.serve}/ folder to serve"
    seen = observation(done, ctx)
    passed, detail = command_rules.decide({"run": script, "timeout_s": check.build_timeout_s}, seen)
    if not passed:
        return detail.replace(f"`{script}`", f"the build `{script}`", 1)
    return None


def probe(ctx: GradeContext) -> dict[str, str]:
    """The seat this run's graders get, probed once per grader image and seat plan."""
    key = (ctx.image, ctx.seat_need, ctx.seat_mode)
    with ctx.seat_probes.lock:
        if key not in ctx.seat_probes.seen:
            report, failure = _observer(ctx, {"mode": "probe"}, None, None, 120, "seat-probe")
            if failure or "seat" not in report:
                raise InfrastructureError(f"the seat probe failed: {failure or 'no seat in its report'}")
            ctx.seat_probes.seen[key] = report["seat"]
        return ctx.seat_probes.seen[key]


def observe(ctx: GradeContext, check: BrowserCheck, site: Path, frames: Path, seconds_left: float) -> tuple[dict, str | None]:
    with tarfile.open(site) as archive:
        top = next((m.name.split("/")[0] for m in archive.getmembers()), check.serve)
    plan = {"mode": "observe", "check": check.model_dump(), "site": f"{SITE}/{top}", "out": OUT}
    timeout = min(check.timeout_s + OBSERVER_SLACK_S, seconds_left)
    report, failure = _observer(ctx, plan, site, frames, timeout, "browser")
    if not failure and report.get("check") != check.name:
        raise InfrastructureError(f"grader fault: the observer reported on {report.get('check')!r}, "
                                  f"not on check {check.name!r}")
    return report, failure


def _observer(ctx: GradeContext, plan: dict, site: Path | None, frames: Path | None, timeout_s: float,
              role: str) -> tuple[dict, str | None]:
    """Run the isolated observer; (report, failure the page caused). Frames go to the ``frames`` tar."""
    seat_plan = seats.grader_plan(ctx.seat_need, ctx.seat_mode)
    spec = SandboxSpec(
        image=ctx.image, command=["python3", "-I", "-c", BOOT, PLAN], workdir="/opt/bench", limits=ctx.limits,
        env={"HOME": "/home/bench", **seats.gpu_env(ctx.seat_need, ctx.seat_mode)}, labels=ctx.labels(role),
        budgets=Budgets.of(ctx.limits, ctx.limits.check_output_max_mb, "check-output"), role=role,
        device_requests=seats.device_requests(ctx.seat_need, ctx.seat_mode),
    )
    harness = {WHEEL.lstrip("/"): ctx.wheel.read_bytes(), PLAN.lstrip("/"): json.dumps({**plan, "seat": seat_plan}).encode()}
    with ctx.sandboxes(spec) as box:
        box.put(tar_tree([], harness, uid=ROOT, read_only=True))
        box.put(dir_tar(OUT))
        if site is not None:
            box.put(dir_tar(SITE, uid=ROOT, read_only=True))
            with open(site, "rb") as handle:
                box.put(handle, at=SITE)
        outcome = box.run(timeout_s, log_to=ctx.gate_log)
        lines = [line[len(MARK):] for line in box.output(stdout=True, stderr=False).splitlines() if line.startswith(MARK)]
        if len(lines) == 1 and frames is not None:
            box.export(OUT, frames, FRAMES_MAX_BYTES)
    if len(lines) == 1:
        return json.loads(lines[0]), None
    if outcome.budget or outcome.timed_out or outcome.oom_killed:
        return {}, _why_unfinished(outcome, ctx)
    raise InfrastructureError(f"grader fault: the browser observer printed {len(lines)} report lines, expected 1; "
                              f"see gate.log")


def _why_unfinished(outcome, ctx: GradeContext) -> str:
    """Why the page's observation never finished, in the words a command check would use."""
    if outcome.budget == "disk":
        return f"disk budget: the page wrote more than {ctx.limits.disk_max_mb} MiB"
    if outcome.budget:
        return f"output budget: the browser printed more than {ctx.limits.check_output_max_mb} MiB"
    if outcome.oom_killed:
        return f"the browser ran out of memory ({ctx.limits.memory_mb} MiB) on this page"
    return "timeout: the page's observation ran past its wall clock"


def judge(ctx: GradeContext, check: BrowserCheck, report: dict, frames_tar: Path) -> CheckResult:
    """Decode the reported frames and decide every predicate here; save the frames that were used."""
    base = dict(name=check.name, kind=check.kind, gating=check.gating, seat=report.get("seat"),
                timings=report.get("timings", {}))
    if report.get("failed"):
        return CheckResult(passed=False, detail=report["failed"], **base)
    pngs = read_frames(frames_tar, report.get("frames", {}))
    decoded = {name: decode(png) for name, png in pngs.items()}
    results = [{**pixels.evaluate(spec.model_dump(), decoded, report.get("series", {})), **where(spec.model_dump())}
               for spec in check.predicates]
    out_dir = ctx.artifacts / slug(check.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in dict.fromkeys(n for r in results for n in r["frames"]):
        if name in pngs:
            (out_dir / f"{slug(name)}.png").write_bytes(pngs[name])
    failed = [r for r in results if not r["passed"]]
    lines = [r["detail"] for r in failed + [r for r in results if r["passed"]]]
    lines += report.get("notes", []) + [f"frames: {report.get('timeline', '')}"]
    if report.get("seat"):
        lines.append(f"seat: {report['seat'].get('class')} ({report['seat'].get('adapter')})")
    log_line(ctx, f"[{'FAIL' if failed else 'pass'}] {check.name} (browser)\n" + "\n".join(lines) + "\n")
    return CheckResult(passed=not failed, detail="\n".join(lines), predicates=results, **base)


def where(spec: dict) -> dict:
    """The boxes a predicate measured (region, and against for contrast), as fractions of the frame.

    Recorded with its numbers because the gate is withheld from results: a viewer draws them on
    the saved frames from result.json alone, so a reader sees where on the page the gate looked."""
    return {key: list(spec[key]) for key in ("region", "against") if spec.get(key) is not None}


def read_frames(frames_tar: Path, files: dict[str, str]) -> dict[str, bytes]:
    """name -> PNG bytes for every reported frame that is a regular file in the observer's out folder."""
    if not frames_tar.is_file():
        return {}
    wanted = {f"{Path(OUT).name}/{file}": name for name, file in files.items()
              if "/" not in file and not file.startswith(".")}  # plain names in the out folder only
    pngs = {}
    with tarfile.open(frames_tar) as archive:
        for member in archive.getmembers():
            if member.isreg() and member.name in wanted:
                pngs[wanted[member.name]] = archive.extractfile(member).read()
    return pngs


def decode(png: bytes) -> pixels.Frame:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGBA")
    return pixels.Frame(image.width, image.height, image.tobytes())

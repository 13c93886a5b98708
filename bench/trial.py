"""One trial, phase by phase: stage -> agent -> export -> grade -> record.

Read ``run_trial`` first: it is the whole lifecycle. Each phase is a small function
below it. Whatever happens, the ``finally`` writes result.json, provenance.json and
the manifest, so an interrupted or broken trial still leaves an honest record:

* the agent's own failure (bad work, timeout, oversized export) is FAIL;
* a seat that cannot observe is INCOMPLETE;
* anything wrong with the engine or the harness is ERROR, never charged to the agent.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import docker

from .agents import Agent, AgentPlan, AgentReport
from .agents.base import PROMPT_FILE, TRANSCRIPT_LOG
from .agents.endpoint import scripted_endpoint
from .cases import Case
from .engine import ROLE_LABEL, run_labels
from .errors import InfrastructureError, SeatRefused
from .gates.runner import MARK
from .harness import WHEEL_IN_CONTAINER, Harness
from .hashing import combine, sha256_file
from .models import (ArmSpec, CaseRecord, CheckResult, EngineRecord, ImageRecord, Limits, Manifest, Provenance,
                     SubjectRecord, TrialResult, Verdict, utcnow)
from .paths import TrialPaths
from .redact import redact_tree
from .trust import CONTAINER_PATH as CA_IN_CONTAINER, container_env
from .sandbox import ExportTooLarge, Sandbox, SandboxSpec, tar_tree
from . import seat as seats

PLAN_IN_CONTAINER = "/bench/plan.json"
ARTIFACTS_IN_CONTAINER = "/bench/artifacts"
ARTIFACTS_MAX_BYTES = 64 << 20
GOLDENS_IN_CONTAINER = "/goldens"


@dataclass
class RunContext:
    """What every trial of one run shares: resolved once, before the first trial."""

    client: docker.DockerClient
    run_id: str
    label: str
    harness: Harness
    engine: EngineRecord
    command_line: list[str]
    cancel: threading.Event = field(default_factory=threading.Event)
    seat: str | None = None  # the run's --seat (software / gpu), stamped on every record
    ca: Path | None = None  # --ca-bundle: trusted by agent containers that get a network


@dataclass
class TrialSpec:
    case: Case
    arm: ArmSpec
    n: int
    agent: Agent
    images: dict[str, ImageRecord]
    limits: Limits
    paths: TrialPaths
    case_record: CaseRecord
    timings: dict[str, float] = field(default_factory=dict)
    subject: SubjectRecord | None = None
    seat: dict[str, str] | None = None  # what the grader's browser observed
    secrets: dict[str, str] = field(default_factory=dict, repr=False)  # credentials handed to the agent: redacted on record


def run_trial(run: RunContext, trial: TrialSpec) -> TrialResult:
    """Run one trial to a verdict; always leaves result.json, provenance.json and manifest.json."""
    trial.paths.dir.mkdir(parents=True, exist_ok=True)
    result = TrialResult(run_id=run.run_id, label=run.label, case=trial.case.id, arm=trial.arm.name,
                         trial=trial.n, agent=trial.agent.name, verdict=Verdict.ERROR,
                         reason="interrupted before a verdict", started_at=utcnow())
    try:
        plan = trial.agent.plan(trial.case, trial.arm.context)
        trial.secrets = plan.secrets
        with _phase(trial, "stage"):
            staged = stage(run, trial)
        if staged:
            trial.images["staged"] = staged
        with _phase(trial, "agent"):
            outcome = run_agent(run, trial, plan, staged)
        result.agent_exit_code, result.timed_out = outcome.exit_code, outcome.timed_out
        result.export_bytes = outcome.export_bytes
        if outcome.report:
            result.agent_status, result.session_id = outcome.report.status, outcome.report.session_id
            result.usage = outcome.report.usage
        with _phase(trial, "grade"):
            verdict, reason, checks = grade(run, trial)
        result.checks = checks
        result.verdict, result.reason = verdict, reason
        if outcome.timed_out:
            result.verdict = Verdict.FAIL
            result.reason = f"timeout: the agent ran past {trial.limits.timeout_s} s and was killed"
    except ExportTooLarge as exc:
        result.verdict, result.reason = Verdict.FAIL, str(exc)
    except SeatRefused as exc:
        result.verdict, result.reason = Verdict.INCOMPLETE, str(exc)
    except InfrastructureError as exc:
        result.verdict, result.reason = Verdict.ERROR, str(exc)
    except Exception as exc:  # a harness bug: ERROR, with enough to file it
        result.verdict, result.reason = Verdict.ERROR, f"harness error: {type(exc).__name__}: {exc}"
    finally:
        if run.cancel.is_set() and result.verdict is Verdict.ERROR:
            result.interrupted = True
            result.reason = f"interrupted: the run was stopped before this trial finished ({result.reason})"
        result.finished_at = utcnow()
        result.phases = dict(trial.timings)
        record(run, trial, result)
    return result


class _phase:
    """Time a phase into trial.timings, even when it raises."""

    def __init__(self, trial: TrialSpec, name: str) -> None:
        self.trial, self.name = trial, name

    def __enter__(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.trial.timings[self.name] = round(time.monotonic() - self.started, 3)


# --- stage ---------------------------------------------------------------------------


def stage_layers(case: Case, context: str) -> tuple[list[tuple[str, Path]], dict[str, bytes]]:
    """What every trial of case x arm starts from: workspace, the arm's context over it, the prompt."""
    layers = [("workspace", case.workspace)]
    if case.context(context).is_dir():
        layers.append(("workspace", case.context(context)))
    return layers, {PROMPT_FILE.lstrip("/"): case.prompt_file.read_bytes()}


def stage(run: RunContext, trial: TrialSpec) -> ImageRecord | None:
    """Commit the workspace after the case's setup, once per case x arm, and reuse it.

    Cases without setup need no staged image: their files go straight into the agent
    container, which saves a commit per trial.
    """
    case = trial.case
    if not case.spec.setup:
        return None
    context = trial.arm.context
    key = combine({"case": trial.case_record.visible_hash, "context": context, "image": trial.images["agent"].id})
    tag = f"{case.id}-{context}-{key.split(':')[1][:16]}"
    with _STAGING_LOCKS.setdefault(tag, threading.Lock()):  # concurrent trials of one arm stage once
        try:
            image = run.client.images.get(f"bench/staged:{tag}")
            return ImageRecord(name="staged", tag=f"bench/staged:{tag}", id=image.id)
        except docker.errors.ImageNotFound:
            return _stage_fresh(run, trial, context, tag)


_STAGING_LOCKS: dict[str, threading.Lock] = {}


def _stage_fresh(run: RunContext, trial: TrialSpec, context: str, tag: str) -> ImageRecord:
    case = trial.case
    spec = SandboxSpec(
        image=trial.images["agent"].id, command=["sh", "-ec", "\n".join(case.spec.setup)],
        limits=trial.limits, labels=run_labels(run.run_id, **{ROLE_LABEL: "stage"}),
        env={"BENCH_CONTEXT": context or ""},
    )
    with Sandbox(run.client, spec) as box:
        layers, files = stage_layers(case, context)
        box.put_tar(tar_tree(layers, files))
        outcome = box.run(trial.limits.timeout_s, log_to=trial.paths.setup_log)
        if outcome.exit_code != 0:
            raise InfrastructureError(f"case setup failed (exit {outcome.exit_code}); see setup.log")
        image_id = box.commit("bench/staged", tag, {"bench.harness": "hermetic-bench", "bench.case": case.id})
    return ImageRecord(name="staged", tag=f"bench/staged:{tag}", id=image_id)


# --- agent ---------------------------------------------------------------------------


@dataclass
class AgentOutcome:
    exit_code: int | None
    timed_out: bool
    export_bytes: int
    report: AgentReport | None = None


def run_agent(run: RunContext, trial: TrialSpec, plan: AgentPlan, staged: ImageRecord | None) -> AgentOutcome:
    """A fresh container from the staged state: files in, agent runs, workspace out.

    Credentials join the agent's environment here and nowhere else. With a scripted
    model the agent shares the endpoint sidecar's loopback and has no other network.
    """
    transcript = trial.paths.named(plan.transcript)
    layers, files = stage_layers(trial.case, trial.arm.context) if staged is None else ([], {})
    layers += [(inside.lstrip("/"), host) for inside, host in plan.trees.items()]
    with _agent_network(run, trial, plan) as network:
        trust = run.ca is not None and network not in ("none",) and not network.startswith("container:")
        if trust:
            files = {**files, CA_IN_CONTAINER.lstrip("/"): run.ca.read_bytes()}
        spec = SandboxSpec(
            image=(staged or trial.images["agent"]).id, command=plan.command, limits=trial.limits,
            env={**plan.env, **(container_env() if trust else {}), **plan.secrets}, network=network,
            labels=run_labels(run.run_id, **{ROLE_LABEL: "agent"}),
        )
        with Sandbox(run.client, spec) as box:
            if layers or files:
                box.put_tar(tar_tree(layers, files))
            outcome = box.run(trial.limits.timeout_s, log_to=transcript)
            if plan.transcript != TRANSCRIPT_LOG:
                _split_streams(box, transcript, trial.paths.agent_stderr)
            size = box.export("/workspace", trial.paths.workspace_tar, trial.limits.export_max_mb << 20)
    report = plan.read_report(transcript, outcome.timed_out) if plan.read_report else None
    return AgentOutcome(outcome.exit_code, outcome.timed_out, size, report)


@contextmanager
def _agent_network(run: RunContext, trial: TrialSpec, plan: AgentPlan):
    """The agent's network mode: the endpoint sidecar's namespace, else the plan's own (none by default)."""
    if plan.endpoint is None:
        yield plan.network
        return
    with scripted_endpoint(run.client, run.run_id, trial.images["agent"].id, run.harness.wheel, plan.endpoint,
                           trial.paths.endpoint_log) as network:
        yield network


def _split_streams(box: Sandbox, transcript: Path, stderr_file: Path) -> None:
    """A JSON-lines transcript keeps stdout only (it streamed both while running); stderr goes beside it."""
    transcript.write_text(box.output(stdout=True, stderr=False))
    if stderr := box.output(stdout=False, stderr=True):
        stderr_file.write_text(stderr)


# --- grade ---------------------------------------------------------------------------


def grade(run: RunContext, trial: TrialSpec) -> tuple[Verdict, str, list[CheckResult]]:
    """A fresh grader container: exported workspace in, goldens read-only, harness wheel runs the gate."""
    case = trial.case
    need = case.spec.seat
    plan = {"workspace": "/workspace", "checks": [c.model_dump() for c in case.gate.checks],
            "seat": seats.grader_plan(need, run.seat), "artifacts": ARTIFACTS_IN_CONTAINER}
    spec = SandboxSpec(
        image=trial.images["grader"].id, command=["python3", "-m", "bench.gates.runner", PLAN_IN_CONTAINER],
        limits=trial.limits, env={"PYTHONPATH": WHEEL_IN_CONTAINER, "HOME": "/home/bench", **seats.gpu_env(need, run.seat)},
        labels=run_labels(run.run_id, **{ROLE_LABEL: "grader"}),
        read_only_mounts={str(case.goldens_dir.resolve()): GOLDENS_IN_CONTAINER},
        device_requests=seats.device_requests(need, run.seat),
    )
    with Sandbox(run.client, spec) as box:
        box.put_tar(trial.paths.workspace_tar.read_bytes())
        box.put_tar(tar_tree([], {WHEEL_IN_CONTAINER.lstrip("/"): run.harness.wheel.read_bytes(),
                                  PLAN_IN_CONTAINER.lstrip("/"): json.dumps(plan).encode()}))
        outcome = box.run(case.gate.timeout_s, log_to=trial.paths.gate_log)
        if outcome.timed_out:
            raise InfrastructureError(f"the grader ran past its {case.gate.timeout_s} s wall clock")
        copy_artifacts(box, trial.paths.artifacts)
        stdout = box.output(stdout=True, stderr=False)
        verdict, reason, checks = parse_grader_output(stdout)
        trial.seat = next((c.seat for c in checks if c.seat), None)
        return verdict, reason, checks


def copy_artifacts(box: Sandbox, dest: Path) -> None:
    """The frames a gate saved, out of the stopped grader: regular files only, never a link or a path out."""
    with tempfile.TemporaryDirectory(prefix="bench-artifacts-") as tmp:
        archive = Path(tmp) / "artifacts.tar"
        try:
            box.export(ARTIFACTS_IN_CONTAINER, archive, ARTIFACTS_MAX_BYTES)
        except (InfrastructureError, ExportTooLarge):
            return  # no artifacts folder (a gate without browser checks) or an oversized one: nothing kept
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                parts = Path(member.name).parts[1:]  # drop the leading "artifacts/"
                if not member.isfile() or not parts or ".." in parts:
                    continue
                target = dest.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(tar.extractfile(member).read())


def parse_grader_output(stdout: str) -> tuple[Verdict, str, list[CheckResult]]:
    """The runner's single result line; anything else is a harness fault (ERROR)."""
    lines = [line[len(MARK):] for line in stdout.splitlines() if line.startswith(MARK)]
    if len(lines) != 1:
        raise InfrastructureError(f"the grader printed {len(lines)} result lines, expected 1; see gate.log")
    data = json.loads(lines[0])
    checks = [CheckResult.model_validate(c) for c in data["checks"]]
    return Verdict(data["verdict"]), data["reason"], checks


# --- record --------------------------------------------------------------------------


def record(run: RunContext, trial: TrialSpec, result: TrialResult) -> None:
    """result.json, provenance.json, every credential redacted, then manifest.json over every file."""
    from .images import reproducibility_level

    paths = trial.paths
    agent = trial.agent.record()
    paths.result.write_text(result.model_dump_json(indent=2) + "\n")
    provenance = Provenance(
        harness=run.harness.record, case=trial.case_record, arm=trial.arm.name, arm_spec=trial.arm,
        images=trial.images, agent=agent.model_copy(update={"model": agent.model or trial.arm.model}), engine=run.engine, limits=trial.limits,
        seat=seats.stamp(run.seat, trial.seat), subject=trial.subject,
        command_line=run.command_line, timings=result.phases, recorded_at=utcnow(),
        reproducibility=reproducibility_level(trial.images, trial.case.dir.parent.parent),
    )
    paths.provenance.write_text(provenance.model_dump_json(indent=2) + "\n")
    redact_tree(paths.dir, trial.secrets)
    write_manifest(paths)


def write_manifest(paths: TrialPaths) -> Manifest:
    files = {
        path.relative_to(paths.dir).as_posix(): sha256_file(path)
        for path in sorted(paths.dir.rglob("*"))
        if path.is_file() and path != paths.manifest
    }
    manifest = Manifest(files=files)
    paths.manifest.write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest

"""The agent and export phases: a fresh container from the staged state, the agent, the workspace out.

Credentials join the agent's environment here and nowhere else (model keys never do:
they stay in the credential proxy's sidecar). Two budgets bound what the agent can do
to the host while it runs: the transcript (what it prints) and the disk (what it
writes); either one crossed kills the container at once and is the agent's FAIL. The
export is its own timed phase, with its own budget.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .agents import AgentPlan, AgentReport
from .agents.base import TRANSCRIPT_LOG
from .engine import ROLE_LABEL, run_labels
from .models import ImageRecord
from .pinned import workspace_changes
from .plugin import env as plugin_env, lay as lay_plugin
from .skills import lay as lay_skills
from .sandbox import WORKSPACE, Budgets, BudgetExceeded, Sandbox, SandboxSpec, tar_tree
from .staging import stage_layers
from .trust import CONTAINER_PATH as CA_IN_CONTAINER, container_env


@dataclass(frozen=True)
class AgentOutcome:
    exit_code: int | None
    timed_out: bool
    budget: str | None = None  # "disk" or "transcript" when the agent crossed one and was stopped
    report: AgentReport | None = None
    changes: tuple[str, ...] | None = None  # what the agent changed under the case's pinned paths (bench/pinned.py)


@dataclass(frozen=True)
class ExportOutcome:
    bytes: int
    refused: str | None = None  # why the workspace cannot be graded (past the export budget, ...): the agent's FAIL


def run_agent(run, trial, plan: AgentPlan, staged: ImageRecord | None, clock) -> tuple[AgentOutcome, ExportOutcome]:
    """Agent, then export, from one container; each timed as its own phase on ``clock``."""
    transcript = trial.paths.named(plan.transcript)
    layers, files = stage_layers(trial.case, trial.arm.context) if staged is None else ([], {})
    layers += [(inside.lstrip("/"), host) for inside, host in plan.trees.items()]
    limits = trial.limits
    with ExitStack() as stack:
        with clock("agent"):
            network = stack.enter_context(_network(run, trial, plan))
            trust = run.ca is not None and network != "none" and not network.startswith("container:")
            if trust:
                files = {**files, CA_IN_CONTAINER.lstrip("/"): run.ca.read_bytes()}
            spec = SandboxSpec(
                image=(staged or trial.images["agent"]).id, command=plan.command, limits=limits,
                env={**plan.env, **plugin_env(trial.plugin), **(container_env() if trust else {}), **plan.secrets},
                network=network,
                labels=run_labels(run.run_id, **{ROLE_LABEL: "agent"}), role="agent",
                budgets=Budgets.of(limits, limits.transcript_max_mb, "transcript"),
            )
            box = stack.enter_context(run.sandboxes(spec))
            if layers or files:
                box.put(tar_tree(layers, files))
            if trial.plugin:
                lay_plugin(box, trial.plugin)
            lay_skills(box, trial.skills, trial.agent.name)
            outcome = box.run(limits.timeout_s, log_to=transcript)
            if plan.transcript != TRANSCRIPT_LOG and not outcome.budget:
                _split_streams(box, transcript, trial.paths.agent_stderr)
        with clock("export"):
            export = export_workspace(box, trial.paths.workspace_tar, limits.export_max_mb)
            changes = _pinned_changes(run, trial, spec.image, export)
    report = plan.read_report(transcript, outcome.timed_out) if plan.read_report else None
    return AgentOutcome(outcome.exit_code, outcome.timed_out, outcome.budget, report, changes), export


def _pinned_changes(run, trial, image: str, export: ExportOutcome) -> tuple[str, ...] | None:
    """What the agent changed under the case's pinned paths, or None when it pins nothing (or nothing was exported)."""
    pinned = tuple(trial.case.spec.pinned)
    if not pinned or export.refused:
        return None
    labels = run_labels(run.run_id, **{ROLE_LABEL: "pinned"})
    return tuple(workspace_changes(run.sandboxes, image, trial.paths.workspace_tar, pinned, trial.limits, labels))


def export_workspace(box: Sandbox, to: Path, budget_mb: int) -> ExportOutcome:
    """The workspace as a tar; past the budget, the partial file is dropped and the reason kept."""
    try:
        return ExportOutcome(box.export(WORKSPACE, to, budget_mb << 20))
    except BudgetExceeded as exc:
        to.unlink(missing_ok=True)
        return ExportOutcome(budget_mb << 20, str(exc))


@contextmanager
def _network(run, trial, plan: AgentPlan) -> Iterator[str]:
    """The agent's network mode: a model sidecar's namespace (scripted endpoint or credential proxy), else the plan's."""
    from .agents.network import agent_network

    with agent_network(run.client, run.run_id, trial.images["agent"].id, run.harness.wheel, plan,
                       trial.paths.dir, run.ca) as network:
        yield network


def _split_streams(box: Sandbox, transcript: Path, stderr_file: Path) -> None:
    """A JSON-lines transcript keeps stdout only (it streamed both while running); stderr goes beside it."""
    transcript.write_text(box.output(stdout=True, stderr=False))
    if stderr := box.output(stdout=False, stderr=True):
        stderr_file.write_text(stderr)


"""The stage phase: the workspace after the case's setup, committed once per case (track) x arm.

Cases without setup need no staged image: their files go straight into the agent
container, which saves a commit per trial.
"""

from __future__ import annotations

import threading
from pathlib import Path

import docker

from .agents.base import PROMPT_FILE
from .cases import Case
from .engine import ROLE_LABEL, harness_labels, run_labels
from .errors import InfrastructureError
from .hashing import combine, short_tag
from .models import ImageRecord, Limits
from .sandbox import SandboxFactory, SandboxSpec, tar_tree

_STAGING_LOCKS: dict[str, threading.Lock] = {}


def stage_layers(case: Case, context: str | None) -> tuple[list[tuple[str, Path]], dict[str, bytes]]:
    """What every trial of case x arm starts from: the fixture, the case's workspace and the arm's context over
    it, the prompt. The fixture is laid from cases/_fixtures/ for each trial, never copied into the case."""
    layers = [("workspace", case.fixture.dir)] if case.fixture else []
    layers.extend(("workspace", folder) for folder in case.workspace_layers())
    if context and case.context(context).is_dir():
        layers.append(("workspace", case.context(context)))
    return layers, {PROMPT_FILE.lstrip("/"): case.prompt()}


def stage(client: docker.DockerClient, sandboxes: SandboxFactory, run_id: str, case: Case, context: str | None,
          visible_hash: str, agent_image: ImageRecord, limits: Limits, setup_log: Path) -> ImageRecord | None:
    """The staged image for case x arm (reused when its tag exists), or None for a case without setup."""
    if not case.spec.setup:
        return None
    key = combine({"case": visible_hash, "context": context, "image": agent_image.id})
    tag = f"{case.id.replace('@', '.')}-{context}-{short_tag(key)}"  # a Docker tag has no '@'
    with _STAGING_LOCKS.setdefault(tag, threading.Lock()):  # concurrent trials of one arm stage once
        try:
            image = client.images.get(f"bench/staged:{tag}")
            return ImageRecord(name="staged", tag=f"bench/staged:{tag}", id=image.id, toolchains=agent_image.toolchains)
        except docker.errors.ImageNotFound:
            pass
        spec = SandboxSpec(image=agent_image.id, command=["sh", "-ec", "\n".join(case.spec.setup)], limits=limits,
                           labels=run_labels(run_id, **{ROLE_LABEL: "stage"}), env={"BENCH_CONTEXT": context or ""},
                           role="stage")
        with sandboxes(spec) as box:
            layers, files = stage_layers(case, context)
            box.put(tar_tree(layers, files))
            outcome = box.run(limits.timeout_s, log_to=setup_log)
            if outcome.exit_code != 0:
                raise InfrastructureError(f"case setup failed (exit {outcome.exit_code}); see setup.log")
            image_id = box.commit("bench/staged", tag, harness_labels(**{"bench.case": case.id}))
    return ImageRecord(name="staged", tag=f"bench/staged:{tag}", id=image_id, toolchains=agent_image.toolchains)

"""Agent images: a case's workspace image with an agent CLI on it.

Why derived images: an agent must run in the case's own workspace image (its
toolchain, its setup), and the CLI is a few hundred MB fetched once. The CLI's image
folder (images/claude-code, images/codex) builds it on ``base`` and puts every file of
the agent under ``/opt/agent/<name>``, with labels naming its version and binary
SHA-256. A case on ``base`` uses that image as it is. A case on any other image gets
a small derived image: the workspace image plus ``COPY --from`` of /opt/agent/<name>
and the same labels, built once per (CLI image ID, workspace image ID) and tagged by
their hash, so nothing is downloaded again and an existing tag is never rebuilt.
Derived images have no lock entry: a result that used one is at most ``pinned``.
"""

from __future__ import annotations

import io
import tarfile

import docker

from ..engine import engine_faults
from ..errors import InfrastructureError
from ..hashing import combine, short_tag
from ..images import Images
from ..models import AgentRecord, ImageRecord, toolchains_of
from .base import Agent, agent_layer

AGENT_ROOT = "/opt/agent"
LABELS = ("bench.agent.name", "bench.agent.version", "bench.agent.binary", "bench.agent.binary-sha256")


def resolve_agent_images(images: Images, roles: dict[str, ImageRecord], agents: list[Agent]) -> dict[str, ImageRecord]:
    """roles plus ``agent:<layer>`` for each distinct CLI layer the agents need on the workspace (roles["agent"])."""
    resolved = dict(roles)
    for agent in agents:
        layer = agent_layer(agent)
        if layer is None:
            continue
        if f"agent:{layer}" not in resolved:
            resolved[f"agent:{layer}"] = agent_image(images, layer, roles["agent"])
    return resolved


def installed_agents(client: docker.DockerClient, resolved: dict[str, ImageRecord]) -> dict[str, AgentRecord]:
    """Layer -> the CLI its resolved image carries (from the image's labels): read once per case, for provenance."""
    return {role.split(":", 1)[1]: installed(client, image) for role, image in resolved.items()
            if role.startswith("agent:")}


def trial_images(roles: dict[str, ImageRecord], agent: Agent) -> dict[str, ImageRecord]:
    """The images one trial records by role: its agent image, the workspace image under it, the grader."""
    layer = agent_layer(agent)
    picked = {role: record for role, record in roles.items() if not role.startswith("agent:")}
    if layer is not None:
        picked["workspace"], picked["agent"] = picked["agent"], roles[f"agent:{layer}"]
    return picked


def agent_image(images: Images, layer: str, workspace: ImageRecord) -> ImageRecord:
    """The CLI's own image when it is built on this very workspace image, else a derived one."""
    cli = images.ensure(layer)
    parent = images.spec(layer).parent
    if parent == workspace.name and images.ensure(parent).id == workspace.id:
        return cli
    return derive(images, layer, cli, workspace)


def derive(images: Images, layer: str, cli: ImageRecord, workspace: ImageRecord) -> ImageRecord:
    """The workspace image with /opt/agent/<layer> copied from the CLI image; built only when its tag is missing."""
    name = f"{layer}-on-{workspace.name}"
    tag = f"bench/{name}:{short_tag(combine({'cli': cli.id, 'workspace': workspace.id}))}"
    image = images.build_once(name, tag, lambda: _build(images, name, tag, _dockerfile(layer, cli, workspace, images.client)),
                              f" ({layer} CLI on {workspace.name})")
    record = ImageRecord(name=name, tag=tag, id=image.id, toolchains=toolchains_of(image.labels))
    return record.model_copy(update={"content_digest": images.filesystem(name, image.id)["digest"]})


def _dockerfile(layer: str, cli: ImageRecord, workspace: ImageRecord, client: docker.DockerClient) -> str:
    labels = _labels(client, cli.id)
    binary = labels.get("bench.agent.binary", f"{AGENT_ROOT}/{layer}/{layer}")
    label_line = " ".join(f'{key}="{labels[key]}"' for key in LABELS if key in labels)
    return "\n".join([
        f"FROM {workspace.tag}",
        f"COPY --from={cli.tag} {AGENT_ROOT}/{layer} {AGENT_ROOT}/{layer}",
        f"RUN ln -sf {binary} /usr/local/bin/{layer}",
        f"LABEL {label_line}" if label_line else "",
    ]) + "\n"


def _build(images: Images, name: str, tag: str, dockerfile: str):
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as archive:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile.encode())
        archive.addfile(info, io.BytesIO(dockerfile.encode()))
    context.seek(0)
    return images.run_build(name, tag, fileobj=context, custom_context=True)


def _labels(client: docker.DockerClient, image_id: str) -> dict[str, str]:
    with engine_faults(f"reading the labels of {image_id[:19]}"):
        return client.images.get(image_id).labels or {}


def installed(client: docker.DockerClient, image: ImageRecord) -> AgentRecord:
    """The CLI's name, version and binary SHA-256 as its image's labels state them.

    The labels are pinned in the image's Dockerfile, and the build itself refused any
    binary whose SHA-256 differs, so the labels describe the bytes in the image.
    """
    labels = _labels(client, image.id)
    missing = [key for key in LABELS if key not in labels]
    if missing:
        raise InfrastructureError(f"image {image.tag} lacks the agent labels {missing}; its Dockerfile must set them")
    return AgentRecord(name=labels["bench.agent.name"], version=labels["bench.agent.version"],
                       binary_sha256=labels["bench.agent.binary-sha256"])

"""The grading seat on the host side: what the run asked for, what the grader gets, what is stamped.

A case declares the seat it needs (case.toml ``seat``: none, software or gpu). A run
may say ``--seat software`` (accept a software WebGPU adapter) or ``--seat gpu`` (give
the grader the host's NVIDIA GPU). Without either, graders render in software and a
case that needs a GPU is refused as INCOMPLETE: a number measured on SwiftShader must
never pass for one measured on a GPU.

The grader classifies the seat it actually got (bench/gates/browser.py); this module
turns the run's choice into the grader's plan and its container's device request, and
stamps the choice beside the observed identity in every record, so ``bench compare``
sees a software seat and a GPU seat as different classes.
"""

from __future__ import annotations

from pathlib import Path

import docker

from .engine import engine_faults
from .errors import UsageError

MODES = ("software", "gpu")
NVIDIA_DEVICE = Path("/dev/nvidiactl")


def check_mode(mode: str | None, client: docker.DockerClient) -> None:
    """Refuse `--seat gpu` up front on an engine that cannot hand a GPU to a container."""
    if mode is None:
        return
    if mode not in MODES:
        raise UsageError(f"--seat {mode!r}: use software or gpu")
    if mode == "gpu" and not engine_has_gpu(client):
        raise UsageError("--seat gpu: this Docker engine has no NVIDIA runtime (no `nvidia` in `docker info` "
                         "Runtimes, no /dev/nvidiactl) — install the NVIDIA Container Toolkit, or run with "
                         "--seat software to accept a software seat")


def engine_has_gpu(client: docker.DockerClient) -> bool:
    """Whether the engine lists an NVIDIA runtime (or this host has the device).

    An engine that cannot be asked raises EngineUnavailable or InfrastructureError
    (from engine_faults) rather than answering "no GPU": the fix for a stopped engine is
    to start it, not to install the NVIDIA Container Toolkit.
    """
    with engine_faults("asking the engine for its runtimes (--seat gpu)"):
        runtimes = client.info().get("Runtimes") or {}
    return "nvidia" in runtimes or NVIDIA_DEVICE.exists()


def grader_plan(need: str, mode: str | None) -> dict[str, str]:
    """What the grader's browser checks are told: the case's need and the run's choice."""
    return {"need": need, "mode": mode or "auto"}


def device_requests(need: str, mode: str | None) -> list:
    """Every GPU for a grader whose case renders and whose run asked for one; else none."""
    if mode != "gpu" or need == "none":
        return []
    return [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]


def gpu_env(need: str, mode: str | None) -> dict[str, str]:
    """The NVIDIA runtime mounts Vulkan (graphics) libraries only when asked; WebGPU needs them."""
    return {"NVIDIA_DRIVER_CAPABILITIES": "all"} if device_requests(need, mode) else {}


def stamp(mode: str | None, observed: dict[str, str] | None) -> dict[str, str]:
    """provenance.seat: the observed identity (or class none), with the run's --seat choice."""
    seat = dict(observed) if observed else {"class": "none"}
    if mode is not None:
        seat["mode"] = mode
    return seat

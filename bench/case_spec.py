"""case.toml: what the agent may see and how its workspace is built, as strict pydantic models.

Apart from bench/models.py (the records the harness writes) because this is what a case
author writes: every field carries the description the published JSON Schema shows.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .models import NAME, Limits, Strict


class TrackSpec(Strict):
    """One authoring track of a language-blind case: the same task, another language or toolchain.

    Its files live in cases/<id>/tracks/<track>/: workspace/ (the starter, laid over the
    case's workspace/) and PROMPT.md (appended to the case's prompt); its reference solution
    in goldens/<id>/tracks/<track>/solution/, its own checks in gate.toml `[tracks.<track>]`.
    """

    description: str = Field(description="One line: what this track authors in (e.g. a Zig core tested with zig test).")
    image: str | None = Field(None, description="The track's workspace image (default: the case's).")
    setup: list[str] = Field(default_factory=list, description="Staging commands run after the case's own.")
    skills: list[str] = Field(
        default_factory=list, description="Skill folders under the project's skills/ that this track's agents get "
        "where their CLI discovers skills (.claude/skills/<name>/ for Claude Code, .agents/skills/<name>/ for Codex).")

    @field_validator("image", "skills")
    @classmethod
    def _names(cls, value: str | list[str] | None) -> str | list[str] | None:
        return plain_names(value)


class CaseSpec(Strict):
    """cases/<id>/case.toml: what the agent may see and how its workspace is built."""

    title: str = Field(description="One line a person reads in `bench cases`.")
    image: str = Field("base", description="Workspace image, a folder name under images/.")
    arms: list[str] = Field(
        default_factory=lambda: ["default"],
        description="Arm names; an arm's context/<arm>/ (if present) is laid over the workspace for its trials.",
    )
    setup: list[str] = Field(
        default_factory=list, description="Shell commands run once in the workspace at staging "
        "($BENCH_CONTEXT names the arm's context, e.g. bare).",
    )
    limits: Limits = Field(default_factory=Limits, description="Resource limits and budgets of the agent's and the "
                           "graders' containers; any left out keep their defaults.")
    seat: Literal["none", "software", "gpu"] = Field(
        "none", description="The grading seat the case needs: gpu refuses a software (fallback) WebGPU "
        "adapter as INCOMPLETE unless the run says --seat software; software accepts any adapter.")
    subject: str | None = Field(
        None, description="A subject pinned in provenance/subjects.toml: its tarball is installed into the "
        "case's image (agent and grader) and recorded in provenance.")
    fixture: str | None = Field(
        None, description="A shared codebase, cases/_fixtures/<name>/, laid into the workspace first (the case's own "
        "workspace/ over it). Several cases share one without copying it; its content hash is part of the case's "
        "visible hash and is recorded in every result and summary.json.")

    pinned: list[str] = Field(
        default_factory=list, description="Workspace paths the case's image installs (a subject's node_modules, its "
        "package manifest and lockfile): graders always use the image's copy, never the agent's, and every change "
        "the agent made under them is recorded in result.json (pinned_changes).")
    unmodified: list[str] = Field(
        default_factory=list, description="Paths under `pinned` the agent must not change (the engine itself): a "
        "recorded change there is the agent's FAIL, whatever the checks saw.")

    tags: list[str] = Field(
        default_factory=list, description="Plain lowercase names that group cases (e.g. quick, browser, allium): "
        "`bench run --tag T` runs every case carrying T; `bench cases` lists them.")

    tracks: dict[str, TrackSpec] = Field(
        default_factory=dict, description="Authoring tracks by name: the case then runs as <id>@<track> for each "
        "(every track unless `--track` or <id>@<track> picks), and results key on case x track x arm.")

    @field_validator("pinned", "unmodified")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        from .pinned import check_paths

        return check_paths(value)

    @model_validator(mode="after")
    def _unmodified_is_pinned(self) -> "CaseSpec":
        from .pinned import under

        if stray := [path for path in self.unmodified if not under(path, self.pinned)]:
            pinned = ", ".join(self.pinned) or "pinned is empty"
            raise ValueError(f"unmodified path {stray[0]!r} is not under a pinned path ({pinned}): changes are "
                             "observed only there")
        return self

    @field_validator("image", "arms", "fixture", "tags", "tracks")
    @classmethod
    def _names(cls, value: str | list[str] | dict | None) -> str | list[str] | dict | None:
        plain_names(list(value) if isinstance(value, dict) else value)
        return value


def plain_names(value: str | list[str] | None) -> str | list[str] | None:
    """A name (or names) a case author writes: images, arms, fixtures, tags, tracks, skills."""
    for name in [value] if isinstance(value, str) else value or []:
        if not NAME.match(name):
            raise ValueError(f"{name!r} is not a plain lowercase name (a-z, 0-9, '.', '_', '-')")
    return value

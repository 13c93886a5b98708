"""The `judge` check as gate.toml writes it: criteria a model scores 0–10, advisory unless the gate says otherwise.

Why advisory by default: a model's score is an opinion, not an observation, so it is
recorded and shown beside the verdict and never decides it. A case author who trusts a
rubric enough makes it a gate with ``advisory = false`` and a ``min_score`` that every
criterion must reach (every criterion, not the mean: one criterion at 2 is not made
good by another at 10). ``gating`` follows ``advisory`` and is never written by hand,
so the two can never disagree.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .check_base import CheckBase
from .models import Strict

CRITERION_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")


class Criterion(Strict):
    """One thing the judge scores, with what its scores mean."""

    name: str = Field(description="Lowercase letters, digits, '-' and '_' (e.g. naming): the metric's name in results.")
    scale: str = Field(description="What a 0–10 score means for this criterion, e.g. '10: every name says what the "
                       "value is; 5: some names are vague; 0: names mislead'. The judge is shown exactly this.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not CRITERION_NAME.match(value):
            raise ValueError(f"criterion name {value!r} is not lowercase letters, digits, '-' or '_' (at most 40, "
                             "starting with a letter), e.g. naming")
        return value

    @field_validator("scale")
    @classmethod
    def _scale(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a criterion's scale is empty: say what 0 and 10 mean")
        return value


class JudgeCheck(CheckBase):
    """A model scores case-specific criteria 0–10 against the task prompt and the agent's files (bench/grading/judge.py).

    The files are read on the host from the exported workspace tar (regular files only,
    links never followed, capped) and shown to the judge as delimited data; the judge runs
    in a grader container whose only network is the model endpoint.
    """

    kind: Literal["judge"]
    criteria: list[Criterion] = Field(min_length=1, max_length=12, description="What the judge scores, each 0–10.")
    files: list[str] = Field(min_length=1, description="Globs relative to the workspace (** allowed) selecting the "
                             "files the judge is shown, in name order.")
    advisory: bool = Field(True, description="True: scores are recorded and shown, never deciding the verdict. False: "
                           "a gate — every criterion must score at least min_score.")
    min_score: int | None = Field(None, ge=0, le=10, description="The score every criterion must reach; required "
                                  "with advisory = false (advisory: shown as the bound, deciding nothing).")
    guidance: str = Field("", description="Notes for the judge beyond the criteria (what not to expect, e.g. a "
                          "keymap the framework provides).")
    max_files: int = Field(40, ge=1, le=500, description="The most files shown; the rest are named as not shown.")
    max_kb: int = Field(64, ge=1, le=1024, description="The most file bytes shown, all files together (KiB); a file "
                        "past it is truncated with a note saying so.")
    max_tokens: int = Field(1024, ge=64, le=8192, description="The judge's answer budget (tokens).")
    timeout_s: int = Field(180, ge=1, description="Wall clock for the judge's call, retries included.")
    gating: bool = Field(False, description="Follows advisory (gating = not advisory); not written by hand.")

    @model_validator(mode="before")
    @classmethod
    def _gating_follows_advisory(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        gating = not data.get("advisory", True)
        if "gating" in data and data["gating"] != gating:
            raise ValueError("a judge check is made a gate with `advisory = false` and `min_score`, not with "
                             "`gating`: remove `gating`")
        return {**data, "gating": gating}

    @model_validator(mode="after")
    def _gate_has_a_bound(self) -> "JudgeCheck":
        if not self.advisory and self.min_score is None:
            raise ValueError("`advisory = false` needs `min_score` (0–10), the score every criterion must reach")
        names = [c.name for c in self.criteria]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"criteria {twice} are listed twice: each name is one metric")
        return self

    @field_validator("files")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        for glob in value:
            if not glob or glob.startswith("/") or ".." in PurePosixPath(glob).parts:
                raise ValueError(f"{glob!r} is not a glob relative to the workspace (e.g. src/**/*.py)")
        return value

"""The `compile` check as gate.toml writes it: typecheck a submission against its subject's declarations.

Apart from bench/gatespec.py, like the harness and judge kinds, so each check kind's
fields sit with their rules; bench/grading/typecheck.py runs it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .check_base import CheckBase


class CompileCheck(CheckBase):
    """Typecheck the submission against the subject's public declarations; nothing of it ever runs.

    The entry and every .ts/.tsx/.mts/.cts file under ``root`` (node_modules and dot
    folders left out) are read from the workspace tar as regular files only, and compiled
    in a disposable project inside the grader with the subject installed from its pinned
    tarball (the run's --subject or arm's subject: when given), never the agent's copy.
    """

    kind: Literal["compile"]
    root: str = Field(".", description="The submission's folder in the workspace.")
    entry: str = Field("solution.ts", description="The entry file under root: a regular file, never a symlink.")
    must_import: bool = Field(True, description="The submission must import the subject package (a submission that "
                              "re-implements the API instead of using it fails).")
    strict: bool = Field(True, description="TypeScript's strict mode.")
    max_files: int = Field(200, ge=1, le=5000, description="The most source files typechecked; more is FAIL.")
    max_kb: int = Field(1024, ge=1, le=65536, description="The most source bytes (KiB, all files); more is FAIL.")
    timeout_s: int = Field(180, ge=1, description="Wall clock for the typecheck; past it the check fails.")

    @field_validator("root")
    @classmethod
    def _root(cls, value: str) -> str:
        from .gatespec import workspace_file

        return "." if value in (".", "") else workspace_file(value)

    @field_validator("entry")
    @classmethod
    def _entry(cls, value: str) -> str:
        if not value.endswith((".ts", ".tsx", ".mts", ".cts")) or value.endswith((".d.ts", ".d.mts", ".d.cts")):
            raise ValueError(f"{value!r} is not a TypeScript source (.ts, .tsx, .mts or .cts, not a declaration file)")
        from .gatespec import workspace_file

        return workspace_file(value)

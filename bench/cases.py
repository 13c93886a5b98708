"""Load and validate cases and their withheld goldens, and hash each half.

A case has two halves kept in two trees: what the agent may see (cases/<id>/) and
what it must never see (goldens/<id>/). Each half gets its own content hash, so a
result can prove which prompt and workspace it was given and which gate graded it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from .errors import CaseError, UsageError
from .hashing import tree_digest
from .gatespec import GateSpec
from .models import CaseSpec
from .paths import Project

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Case:
    id: str
    spec: CaseSpec
    gate: GateSpec
    dir: Path
    goldens_dir: Path

    @property
    def prompt_file(self) -> Path:
        return self.dir / "PROMPT.md"

    @property
    def workspace(self) -> Path:
        return self.dir / "workspace"

    @property
    def solution(self) -> Path:
        return self.goldens_dir / "solution"

    def context(self, arm: str) -> Path:
        return self.dir / "context" / arm

    @property
    def grader_image(self) -> str:
        return self.gate.image or self.spec.image

    def visible_hash(self) -> str:
        """Everything the agent may see: case.toml, PROMPT.md, workspace/, context/."""
        return tree_digest(self.dir)

    def goldens_hash(self) -> str:
        """Everything withheld: gate.toml, solution/, manifests."""
        return tree_digest(self.goldens_dir)


def load_toml(path: Path, model: type[M]) -> M:
    """Parse and validate one TOML file; any problem becomes one CaseError naming it."""
    if not path.is_file():
        raise CaseError(path, "(file)", "does not exist", f"create {path.name}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(path, "(syntax)", f"not valid TOML: {exc}", "fix the TOML syntax") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _case_error(path, exc) from None


def _case_error(path: Path, exc: ValidationError) -> CaseError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(root)"
    problem = first["msg"]
    if first["type"] != "missing":
        problem += f" (got {first['input']!r})"
    fixes = {
        "missing": "add this field",
        "extra_forbidden": "remove it, or check its spelling against provenance/schema/",
    }
    fix = fixes.get(first["type"], "see provenance/schema/ for the allowed values")
    if len(exc.errors()) > 1:
        fix += f"; {len(exc.errors()) - 1} more problem(s) after this one"
    return CaseError(path, field, problem, fix)


def known_cases(project: Project) -> list[str]:
    if not project.cases.is_dir():
        return []
    return sorted(p.name for p in project.cases.iterdir() if (p / "case.toml").is_file())


def load_case(project: Project, case_id: str) -> Case:
    """Load one case and its goldens, or fail with an error listing the known cases."""
    case_dir = project.case_dir(case_id)
    if not (case_dir / "case.toml").is_file():
        known = ", ".join(known_cases(project)) or "(none)"
        raise UsageError(f"unknown case {case_id!r}; known cases: {known}")
    spec = load_toml(case_dir / "case.toml", CaseSpec)
    gate = load_toml(project.goldens_dir(case_id) / "gate.toml", GateSpec)
    case = Case(case_id, spec, gate, case_dir, project.goldens_dir(case_id))
    _check_layout(project, case)
    return case


def image_names(project: Project) -> list[str]:
    """What a case may name: every images/ folder, and every image `bench images load --name` locked."""
    from .lock import read_lock

    loaded = [name for name, entry in read_lock(project).images.items() if entry.builder == "dockertools"]
    return sorted({p.parent.name for p in project.images.glob("*/image.toml")} | set(loaded))


def _check_layout(project: Project, case: Case) -> None:
    if not case.prompt_file.is_file():
        raise CaseError(case.prompt_file, "PROMPT.md", "does not exist", "write the task prompt there")
    known = image_names(project)
    for image in {case.spec.image, case.grader_image}:
        if image not in known:
            raise CaseError(case.dir / "case.toml", "image", f"no image {image!r} under images/ or loaded in the lock",
                            f"use one of: {', '.join(known)}")
    for index, check in enumerate(case.gate.checks):
        for path in getattr(check, "withheld", []):
            if not (case.goldens_dir / path).exists():
                raise CaseError(case.goldens_dir / "gate.toml", f"checks.{index}.withheld",
                                f"{path!r} does not exist under {case.goldens_dir.name}/", "add the file or fix the path")
    for arm in case.spec.arms:
        context = case.context(arm)
        if context.exists() and not context.is_dir():
            raise CaseError(context, "arms", f"context for arm {arm!r} is not a folder")


def load_all(project: Project) -> list[Case]:
    """Every case, validated; the first problem stops with its CaseError."""
    return [load_case(project, case_id) for case_id in known_cases(project)]


def validate_all(project: Project) -> list[tuple[str, str | None]]:
    """(case id, problem or None) for every case: validation that reports them all."""
    report: list[tuple[str, str | None]] = []
    for case_id in known_cases(project):
        try:
            load_case(project, case_id)
            report.append((case_id, None))
        except CaseError as exc:
            report.append((case_id, str(exc)))
    orphans = sorted(
        p.name for p in project.goldens.glob("*") if p.is_dir() and p.name not in known_cases(project)
    )
    report.extend((name, f"{project.goldens_dir(name)}: goldens without a case") for name in orphans)
    return report

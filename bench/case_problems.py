"""`bench cases validate`: every problem of every case, as data that the CLI renders (as text, or as JSON).

Why apart from loading (bench/cases.py): a run stops at a case's first problem, which is
all it needs (one line, exit 2); an author fixing a case wants every problem at once, in
every file (case.toml, gate.toml, each answer.toml), each naming its file, field and fix,
and wants to know what a run of one agent would not check: that the oracle has its
reference solution, that the reference answers and the golden data hold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Literal

from .case_spec import CaseSpec
from .cases import TRACK_SEP, Case, Scoped, layout_problems, load_case, read_toml
from .errors import CaseError
from .gatespec import GateSpec
from .paths import Project


@dataclass(frozen=True)
class Problem:
    """One problem: the case id it concerns (``<name>`` for the whole case, ``<name>@<track>`` for one track),
    the file (relative to the project root when inside it), the field, what is wrong, and the fix."""

    case: str
    file: str
    field: str
    problem: str
    fix: str = ""
    level: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.file}: field '{self.field}': {self.problem}" + (f" — {self.fix}" if self.fix else "")


@dataclass(frozen=True)
class Validation:
    """Every case id checked, in order, and every problem found (errors and warnings), each once."""

    cases: list[str]
    problems: list[Problem]

    def errors(self, case_id: str | None = None) -> list[Problem]:
        """The errors about ``case_id`` (its whole case's too), or every error."""
        about = None if case_id is None else {case_id, case_id.partition(TRACK_SEP)[0]}
        return [p for p in self.problems if p.level == "error" and (about is None or p.case in about)]

    def __iter__(self) -> Iterator[tuple[str, str | None]]:
        """(case id, its errors as one text, or None): the shape validate_all had before problems were data."""
        for case_id in self.cases:
            errors = self.errors(case_id)
            yield case_id, "; ".join(str(p) for p in errors) if errors else None


def validate_project(project: Project, warn: Callable[[str, str], None] = lambda case, line: None) -> Validation:
    """Every case folder under cases/ (whether its case.toml reads or not) and every goldens/ folder without one."""
    ids: list[str] = []
    problems: list[Problem] = []
    names = case_folders(project)
    for name in names:
        found_ids, found = _check_case(project, name)
        ids += found_ids
        problems += found
    for orphan in sorted(p.name for p in project.goldens.glob("*") if p.is_dir() and p.name not in names):
        ids.append(orphan)
        problems.append(_problem(project, orphan, CaseError(project.goldens_dir(orphan), "(folder)",
                                                            "goldens without a case", f"add cases/{orphan}/ or remove it")))
    problems = _once(problems)
    for problem in problems:
        if problem.level == "warning":
            warn(problem.case, f"{problem.field}: {problem.problem}")
    return Validation(ids, problems)


def case_folders(project: Project) -> list[str]:
    """Every folder under cases/ but shared fixtures (_fixtures/) and hidden ones: each is a case, even one whose
    case.toml is missing or a folder (which a run does not see as a case at all)."""
    if not project.cases.is_dir():
        return []
    return sorted(p.name for p in project.cases.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def _check_case(project: Project, name: str) -> tuple[list[str], list[Problem]]:
    """The case's ids and problems: its files, each track's solution; when all hold, its answers and golden data."""
    spec, found = read_toml(project.case_dir(name) / "case.toml", CaseSpec)
    gate, more = read_toml(project.goldens_dir(name) / "gate.toml", GateSpec)
    scoped: list[Scoped] = [(name, error) for error in found + more]
    scoped += layout_problems(project, name, spec, gate)
    if spec is None:
        return [name], [_problem(project, about, error) for about, error in scoped]
    ids = [f"{name}{TRACK_SEP}{t}" for t in spec.tracks] or [name]
    for case_id in ids:
        scoped += [(case_id, error) for error in solution_problems(project.goldens_dir(name), case_id)]
    if scoped:
        return ids, [_problem(project, about, error) for about, error in scoped]
    return ids, [problem for case_id in ids for problem in _needs(project, load_case(project, case_id))]


def solution_problems(goldens: Path, case_id: str) -> list[CaseError]:
    """The oracle agent copies the reference solution over /workspace (a track's own, else the shared one,
    as Case.solution picks); without it an oracle run is ERROR, so validation says so first."""
    track = case_id.partition(TRACK_SEP)[2]
    shared = goldens / "solution"
    own = goldens / "tracks" / track / "solution" if track else shared
    if own.is_dir() or shared.is_dir():
        return []
    problem = "is not a folder" if own.exists() else "does not exist"
    if track:
        problem += f" (nor is the shared {goldens.name}/solution/ a folder)"
    return [CaseError(own, "solution/", problem, "add the reference solution the oracle agent copies over "
                      "/workspace: `bench run CASE --agent oracle` must PASS")]


def _needs(project: Project, case: Case) -> list[Problem]:
    """What a loaded case's graders and answers need beyond its files: sound reference answers
    (bench/answers.py) and sound golden data (bench/allium/validate.py)."""
    from .answers import answer_problems

    return [_problem(project, case.id, error) for error in answer_problems(case)] + _golden(project, case)


def _golden(project: Project, case: Case) -> list[Problem]:
    """The golden data of each Allium check, in that check's manifest file (errors and warnings)."""
    from .grading.allium import KINDS, golden_problems

    found = []
    for index, check in enumerate(case.gate.checks):
        if check.kind not in KINDS:
            continue
        alone = replace(case, gate=case.gate.model_copy(update={"checks": [check]}))
        try:
            problems = golden_problems(alone, project.root)
        except CaseError as exc:
            found.append(_problem(project, case.id, exc))
            continue
        manifest = _relative(project, case.goldens_dir / check.manifest)
        for problem in problems:
            message, _, fix = problem.message.partition(" — ")  # a golden problem may say its fix after a dash
            fix = fix or ("" if problem.level == "warning" else f"fix the golden data of check {check.name!r} "
                          f"(checks.{index})")
            found.append(Problem(case.id, manifest, problem.where, message, fix, problem.level))
    return found


def _problem(project: Project, case_id: str, error: CaseError) -> Problem:
    return Problem(case_id, _relative(project, Path(error.path)), error.field, error.problem, error.fix)


def _relative(project: Project, path: Path) -> str:
    try:
        return str(path.relative_to(project.root))
    except ValueError:
        return str(path)


def _once(problems: list[Problem]) -> list[Problem]:
    """Each problem once: one met by several tracks of a case (a shared check's, an answer's) is the whole case's."""
    seen: dict[tuple[str, str, str, str], Problem] = {}
    for problem in problems:
        key = (problem.file, problem.field, problem.problem, problem.level)
        if key in seen and seen[key].case != problem.case:
            seen[key] = replace(seen[key], case=problem.case.partition(TRACK_SEP)[0])
        seen.setdefault(key, problem)
    return list(seen.values())

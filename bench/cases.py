"""Load and validate cases and their withheld goldens, and hash each half.

A case has two halves kept in two trees: what the agent may see (cases/<id>/) and
what it must never see (goldens/<id>/). Each half gets its own content hash, so a
result can prove which prompt and workspace it was given and which gate graded it.
A case may build on a shared fixture (cases/_fixtures/<name>/): the agent sees it, so its
hash is part of the visible hash, and it is recorded on its own as well.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import CaseError, UsageError
from .fixtures import Fixture, load_fixture
from .hashing import combine, tree_digest
from .gatespec import GateSpec
from .models import NAME, CaseRecord
from .case_spec import CaseSpec
from .paths import Project

M = TypeVar("M", bound=BaseModel)
TRACK_SEP = "@"  # <case>@<track>


@dataclass(frozen=True)
class Case:
    """One case as a trial runs it; a track of a tracked case is its own Case, ``<name>@<track>``.

    Why a track is a case of its own: results, summaries, resume and compare all key on
    the case id, so keying them on case x track x arm needs nothing more. ``spec`` and
    ``gate`` are the track's (its image and setup, the shared checks then its own).
    """

    id: str
    spec: CaseSpec
    gate: GateSpec
    dir: Path
    goldens_dir: Path
    fixture: Fixture | None = None
    track: str | None = None

    @property
    def name(self) -> str:
        """The case's folder name: the id without its track."""
        return self.id.partition(TRACK_SEP)[0]

    @property
    def prompt_file(self) -> Path:
        return self.dir / "PROMPT.md"

    def prompt(self) -> bytes:
        """The task: PROMPT.md, then the track's PROMPT.md (what it authors in, where), when it has one."""
        extra = self.dir / "tracks" / self.track / "PROMPT.md" if self.track else None
        return self.prompt_file.read_bytes() + (b"\n" + extra.read_bytes() if extra and extra.is_file() else b"")

    @property
    def workspace(self) -> Path:
        return self.dir / "workspace"

    def workspace_layers(self) -> list[Path]:
        """workspace/, then the track's starter over it (cases/<id>/tracks/<track>/workspace/)."""
        track = self.dir / "tracks" / self.track / "workspace" if self.track else None
        return [self.workspace, *([track] if track and track.is_dir() else [])]

    def skill_folders(self) -> list[Path]:
        """The track's skills (case.toml `tracks.<track>.skills`): folders under the project's skills/."""
        names = self.spec.tracks[self.track].skills if self.track else []
        return [self.dir.parents[1] / "skills" / name for name in names]

    @property
    def solution(self) -> Path:
        """The reference solution: the track's (goldens/<id>/tracks/<track>/solution/) when it has one."""
        own = self.goldens_dir / "tracks" / self.track / "solution" if self.track else None
        return own if own and own.is_dir() else self.goldens_dir / "solution"

    def context(self, arm: str) -> Path:
        return self.dir / "context" / arm

    @property
    def grader_image(self) -> str:
        return self.gate.image or self.spec.image

    def visible_hash(self, fixture_hash: str | None = None) -> str:
        """Everything the agent may see: case.toml, PROMPT.md, workspace/, context/, tracks/, and the fixture
        under them; a track's trials also hash which track they are."""
        if self.fixture is None and self.track is None:
            return tree_digest(self.dir)
        parts = {"case": tree_digest(self.dir), "track": self.track,
                 "skills": {folder.name: tree_digest(folder) for folder in self.skill_folders()}}
        if self.fixture is not None:
            parts["fixture"] = fixture_hash or self.fixture.digest()
        return combine(parts)

    def goldens_hash(self) -> str:
        """Everything withheld: gate.toml, solution/, manifests."""
        return tree_digest(self.goldens_dir)

    def record(self) -> CaseRecord:
        """The case's identity as every result records it: both halves' hashes, and its fixture's on its own."""
        fixture_hash = self.fixture.digest() if self.fixture else None
        return CaseRecord(id=self.id, track=self.track, visible_hash=self.visible_hash(fixture_hash),
                          goldens_hash=self.goldens_hash(), fixture=self.spec.fixture, fixture_hash=fixture_hash)


def load_toml(path: Path, model: type[M]) -> M:
    """Parse and validate one TOML file; any problem becomes one CaseError naming it."""
    if not path.exists():
        raise CaseError(path, "(file)", "does not exist", f"create {path.name}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except IsADirectoryError:
        raise CaseError(path, "(file)", "is a folder, not a file", f"replace it with a {path.name} file") from None
    except UnicodeDecodeError as exc:
        raise CaseError(path, "(encoding)", f"not UTF-8 text (byte {exc.start})", "save it as UTF-8") from None
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
    """Load one case (or one track, ``<name>@<track>``) and its goldens, or fail naming what is known."""
    name, _, track = case_id.partition(TRACK_SEP)
    case_dir = project.case_dir(name)
    if not NAME.match(name) or not (case_dir / "case.toml").is_file():
        known = ", ".join(known_cases(project)) or "(none)"
        raise UsageError(f"unknown case {name!r}; known cases: {known}")
    spec = load_toml(case_dir / "case.toml", CaseSpec)
    gate = load_toml(project.goldens_dir(name) / "gate.toml", GateSpec)
    if spec.tracks and not track:
        raise UsageError(f"case {name!r} runs on tracks: name one as {', '.join(f'{name}@{t}' for t in spec.tracks)} "
                         f"(`bench run {name}` runs every track)")
    if track:
        spec, gate = _for_track(project, name, spec, gate, track)
    elif gate.tracks:
        raise CaseError(project.goldens_dir(name) / "gate.toml", "tracks", "the case declares no tracks",
                        "declare them in case.toml `[tracks.<name>]`, or move these checks to [[checks]]")
    case = Case(case_id, spec, gate, case_dir, project.goldens_dir(name), _fixture(project, case_dir, spec),
                track or None)
    _check_layout(project, case)
    return case


def _for_track(project: Project, name: str, spec: CaseSpec, gate: GateSpec, track: str) -> tuple[CaseSpec, GateSpec]:
    """The case's spec and gate as one track runs them: its image and setup, the shared checks then its own."""
    if track not in spec.tracks:
        raise UsageError(f"case {name!r} has no track {track!r}; its tracks: {', '.join(spec.tracks) or '(none)'}")
    unknown = sorted(set(gate.tracks) - set(spec.tracks))
    if unknown:
        raise CaseError(project.goldens_dir(name) / "gate.toml", "tracks", f"{unknown} are not tracks of case.toml",
                        f"use one of: {', '.join(spec.tracks)}")
    own, graded = spec.tracks[track], gate.for_track(track)
    if not graded.checks:
        raise CaseError(project.goldens_dir(name) / "gate.toml", f"tracks.{track}.checks", f"no check for track {track!r}",
                        f"add [[checks]] (shared) or [[tracks.{track}.checks]]")
    return spec.model_copy(update={"image": own.image or spec.image, "setup": [*spec.setup, *own.setup]}), graded


def case_ids(project: Project, names: list[str], tracks: list[str] = ()) -> list[str]:
    """Names as a run takes them, one id per trial kind: a tracked case's name becomes each of its tracks
    (those in ``tracks``, when given); ``<name>@<track>`` stays as it is."""
    found: list[str] = []
    for name in names:
        if TRACK_SEP in name or not (project.case_dir(name) / "case.toml").is_file():
            found.append(name)  # load_case names what is wrong with it
            continue
        declared = list(load_toml(project.case_dir(name) / "case.toml", CaseSpec).tracks)
        chosen = [t for t in declared if not tracks or t in tracks]
        if declared and not chosen:
            raise UsageError(f"--track {', '.join(tracks)}: case {name!r} has tracks {', '.join(declared)} only")
        if declared:
            found.extend(f"{name}{TRACK_SEP}{t}" for t in chosen)
        else:
            found.append(name)
    return list(dict.fromkeys(found))


def _fixture(project: Project, case_dir: Path, spec: CaseSpec) -> Fixture | None:
    if spec.fixture is None:
        return None
    try:
        return load_fixture(project.root, spec.fixture)
    except UsageError as exc:
        raise CaseError(case_dir / "case.toml", "fixture", str(exc), "name a folder under cases/_fixtures/") from None


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
        named = [("withheld", path) for path in getattr(check, "withheld", [])]
        named += [("manifest", check.manifest)] if hasattr(check, "manifest") else []
        for field, path in named:
            if not (case.goldens_dir / path).exists():
                raise CaseError(case.goldens_dir / "gate.toml", f"checks.{index}.{field}",
                                f"{path!r} does not exist under {case.goldens_dir.name}/", "add the file or fix the path")
    for folder in case.skill_folders():
        if not (folder / "SKILL.md").is_file():
            raise CaseError(case.dir / "case.toml", f"tracks.{case.track}.skills", f"no skill {folder.name!r}: "
                            f"{folder}/SKILL.md does not exist", "add the skill folder under skills/, or fix the name")
    for arm in case.spec.arms:
        context = case.context(arm)
        if context.exists() and not context.is_dir():
            raise CaseError(context, "arms", f"context for arm {arm!r} is not a folder")


def with_tags(project: Project, names: list[str], tags: list[str]) -> list[str]:
    """The named cases, then every other case carrying any of ``tags`` (--tag), in id order; an unknown tag is
    refused listing the known ones, since running nothing for a typo would look like success."""
    if not tags:
        return list(names)
    carried = {case_id: load_toml(project.case_dir(case_id) / "case.toml", CaseSpec).tags
               for case_id in known_cases(project)}
    known = sorted({tag for found in carried.values() for tag in found})
    for tag in tags:
        if tag not in known:
            raise UsageError(f"--tag {tag!r}: no case carries it; known tags: {', '.join(known) or '(none)'} "
                             "(case.toml `tags`)")
    tagged = [case_id for case_id, found in carried.items() if set(found) & set(tags)]
    return list(dict.fromkeys([*names, *tagged]))


def _ids_or_names(project: Project) -> list[str]:
    """Every case id to validate; a case.toml that does not read stays its name, so its problem is reported."""
    ids: list[str] = []
    for name in known_cases(project):
        try:
            ids.extend(case_ids(project, [name]))
        except CaseError:
            ids.append(name)
    return ids


def load_all(project: Project) -> list[Case]:
    """Every case (every track of a tracked one), validated; the first problem stops with its CaseError."""
    return [load_case(project, case_id) for case_id in case_ids(project, known_cases(project))]


def validate_all(project: Project, warn: Callable[[str, str], None] = lambda case, line: None
                 ) -> list[tuple[str, str | None]]:
    """(case id, problem or None) for every case: validation that reports them all.

    Golden data is checked beyond its schema too (bench/allium/validate.py: states
    against the fixture's code, fingerprints, the planted spec): its errors are the
    case's problem, its warnings go to ``warn(case id, line)``. So are its reference
    answers (bench/answers.py: answer.toml, submission/, assessment.json).
    """
    from .answers import load_answers
    from .grading.allium import golden_problems

    report: list[tuple[str, str | None]] = []
    for case_id in _ids_or_names(project):
        try:
            case = load_case(project, case_id)
            load_answers(case)
            problems = golden_problems(case, project.root)
        except CaseError as exc:
            report.append((case_id, str(exc)))
            continue
        for problem in problems:
            if problem.level == "warning":
                warn(case_id, f"{problem.where}: {problem.message}")
        errors = [str(p) for p in problems if p.level == "error"]
        report.append((case_id, "; ".join(errors) if errors else None))
    orphans = sorted(
        p.name for p in project.goldens.glob("*") if p.is_dir() and p.name not in known_cases(project)
    )
    report.extend((name, f"{project.goldens_dir(name)}: goldens without a case") for name in orphans)
    return report

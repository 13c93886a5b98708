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
from typing import TYPE_CHECKING, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import CaseError, UsageError
from .fixtures import Fixture, load_fixture
from .hashing import combine, tree_digest
from .gatespec import GateSpec
from .models import NAME, CaseRecord
from .case_spec import CaseSpec
from .paths import Project

if TYPE_CHECKING:
    from .case_problems import Validation

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
    """Parse and validate one TOML file; its first problem becomes one CaseError naming it (and how many follow)."""
    parsed, problems = read_toml(path, model)
    raise_first(problems)
    return parsed


def read_toml(path: Path, model: type[M]) -> tuple[M | None, list[CaseError]]:
    """The file's model, or None and every problem of it (each pydantic error its own), for `bench cases validate`."""
    if not path.exists():
        return None, [CaseError(path, "(file)", "does not exist", f"create {path.name} (docs/cases.md lists its fields)")]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except IsADirectoryError:
        return None, [CaseError(path, "(file)", "is a folder, not a file", f"replace it with a {path.name} file")]
    except UnicodeDecodeError as exc:
        return None, [CaseError(path, "(encoding)", f"not UTF-8 text (byte {exc.start})", "save it as UTF-8")]
    except tomllib.TOMLDecodeError as exc:
        return None, [CaseError(path, "(syntax)", f"not valid TOML: {exc}", "fix the TOML syntax")]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, [_case_error(path, error) for error in exc.errors()]


def raise_first(problems: list[CaseError]) -> None:
    """A run stops at the first problem, saying how many more `bench cases validate` would list."""
    if len(problems) > 1:
        first = problems[0]
        more = f"{len(problems) - 1} more problem(s): `bench cases validate` lists them all"
        raise CaseError(first.path, first.field, first.problem, f"{first.fix}; {more}" if first.fix else more)
    if problems:
        raise problems[0]


FIXES = {
    "missing": "add this field",
    "extra_forbidden": "remove it, or check its spelling against docs/cases.md",
}


def _case_error(path: Path, error: dict) -> CaseError:
    field = ".".join(str(part) for part in error["loc"]) or "(root)"
    problem = error["msg"]
    if error["type"] != "missing":
        shown = repr(error["input"])
        problem += f" (got {shown if len(shown) <= 80 else shown[:77] + '...'})"
    return CaseError(path, field, problem, FIXES.get(error["type"], "docs/cases.md lists the allowed values"))


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
    if track and track not in spec.tracks:
        raise UsageError(f"case {name!r} has no track {track!r}; its tracks: {', '.join(spec.tracks) or '(none)'}")
    raise_first([error for about, error in layout_problems(project, name, spec, gate) if about in (name, case_id)])
    if track:
        own, gate = spec.tracks[track], gate.for_track(track)
        spec = spec.model_copy(update={"image": own.image or spec.image, "setup": [*spec.setup, *own.setup]})
    fixture = load_fixture(project.root, spec.fixture) if spec.fixture else None
    return Case(case_id, spec, gate, case_dir, project.goldens_dir(name), fixture, track or None)


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


def image_names(project: Project) -> list[str]:
    """What a case may name: every images/ folder, and every image `bench images load --name` locked."""
    from .lock import read_lock

    loaded = [name for name, entry in read_lock(project).images.items() if entry.builder == "dockertools"]
    return sorted({p.parent.name for p in project.images.glob("*/image.toml")} | set(loaded))


Scoped = tuple[str, CaseError]
"""A problem and the id it concerns: the case's name for the whole case, ``<name>@<track>`` for one track."""


def layout_problems(project: Project, name: str, spec: CaseSpec | None, gate: GateSpec | None) -> list[Scoped]:
    """Every problem of a case's files beyond their schemas, each in the file that declares it.

    ``spec`` or ``gate`` is None when it did not load: what can be checked without it still
    is, so `bench cases validate` reports everything at once while a run stops at the first.
    """
    case_toml, gate_toml = project.case_dir(name) / "case.toml", project.goldens_dir(name) / "gate.toml"
    found = [(name, error) for error in _prompt_problems(project.case_dir(name) / "PROMPT.md")]
    images = []  # (id, file, field, image name)
    if spec is not None:
        found += _spec_problems(project, name, spec)
        images += [(name, case_toml, "image", spec.image)]
        images += [(f"{name}{TRACK_SEP}{t}", case_toml, f"tracks.{t}.image", track.image)
                   for t, track in spec.tracks.items() if track.image]
    if gate is not None:
        found += [(name, error) for error in _withheld_problems(project.goldens_dir(name), gate.checks, "checks")]
        for t, track in gate.tracks.items():
            found += [(f"{name}{TRACK_SEP}{t}", error) for error in
                      _withheld_problems(project.goldens_dir(name), track.checks, f"tracks.{t}.checks")]
        images += [(name, gate_toml, "image", gate.image)] if gate.image else []
        images += [(f"{name}{TRACK_SEP}{t}", gate_toml, f"tracks.{t}.image", track.image)
                   for t, track in gate.tracks.items() if track.image]
    if spec is not None and gate is not None:
        found += _track_problems(name, spec, gate, gate_toml)
    known = image_names(project) if images else []
    found += [(about, CaseError(path, field, f"no image {image!r} under images/ or loaded in the lock",
                                f"use one of: {', '.join(known)}"))
              for about, path, field, image in images if image not in known]
    return found


def _prompt_problems(prompt: Path) -> list[CaseError]:
    if prompt.is_file():
        return []
    problem = "is a folder, not a file" if prompt.is_dir() else "does not exist"
    return [CaseError(prompt, "PROMPT.md", problem, "write the task prompt there")]


def _spec_problems(project: Project, name: str, spec: CaseSpec) -> list[Scoped]:
    """case.toml's names that must exist: its fixture, its arms' context folders, each track's skills."""
    case_toml, found = project.case_dir(name) / "case.toml", []
    if spec.fixture is not None:
        try:
            load_fixture(project.root, spec.fixture)
        except UsageError as exc:
            found.append((name, CaseError(case_toml, "fixture", str(exc), "name a folder under cases/_fixtures/")))
    for arm in spec.arms:
        context = project.case_dir(name) / "context" / arm
        if context.exists() and not context.is_dir():
            found.append((name, CaseError(context, "arms", f"context for arm {arm!r} is not a folder",
                                          f"make context/{arm}/ a folder of what the arm adds, or remove it")))
    for t, track in spec.tracks.items():
        for skill in track.skills:
            folder = project.root / "skills" / skill
            if not (folder / "SKILL.md").is_file():
                found.append((f"{name}{TRACK_SEP}{t}", CaseError(
                    case_toml, f"tracks.{t}.skills", f"no skill {skill!r}: {folder}/SKILL.md does not exist",
                    "add the skill folder under skills/, or fix the name")))
    return found


def _withheld_problems(goldens: Path, checks: list, where: str) -> list[CaseError]:
    """Every file a check names under goldens/<case>/ (withheld tests, manifests) must be there."""
    found = []
    for index, check in enumerate(checks):
        named = [("withheld", path) for path in getattr(check, "withheld", [])]
        named += [("manifest", check.manifest)] if hasattr(check, "manifest") else []
        found += [CaseError(goldens / "gate.toml", f"{where}.{index}.{field}",
                            f"{path!r} does not exist under {goldens.name}/", "add the file or fix the path")
                  for field, path in named if not (goldens / path).exists()]
    return found


def _track_problems(name: str, spec: CaseSpec, gate: GateSpec, gate_toml: Path) -> list[Scoped]:
    """gate.toml's tracks must be case.toml's, and every track must get at least one check."""
    unknown = sorted(set(gate.tracks) - set(spec.tracks))
    if unknown and not spec.tracks:
        return [(name, CaseError(gate_toml, "tracks", "the case declares no tracks",
                                 "declare them in case.toml `[tracks.<name>]`, or move these checks to [[checks]]"))]
    found = [(name, CaseError(gate_toml, "tracks", f"{unknown} are not tracks of case.toml",
                              f"use one of: {', '.join(spec.tracks)}"))] if unknown else []
    for t in spec.tracks:
        if not gate.checks and not (t in gate.tracks and gate.tracks[t].checks):
            found.append((f"{name}{TRACK_SEP}{t}", CaseError(gate_toml, f"tracks.{t}.checks", f"no check for track {t!r}",
                                                             f"add [[checks]] (shared) or [[tracks.{t}.checks]]")))
    return found


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


def load_all(project: Project) -> list[Case]:
    """Every case (every track of a tracked one), validated; the first problem stops with its CaseError."""
    return [load_case(project, case_id) for case_id in case_ids(project, known_cases(project))]


def validate_all(project: Project, warn: Callable[[str, str], None] = lambda case, line: None) -> "Validation":
    """Every problem of every case, as data (bench/case_problems.py): each names its case, file, field and fix.

    Iterating the result still gives (case id, its errors as one text or None), and
    ``warn(case id, line)`` still hears each warning, for callers written before.
    """
    from .case_problems import validate_project

    return validate_project(project, warn)

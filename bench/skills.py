"""Skill delivery: skill folders laid where the agent's CLI discovers them, the way users install skills.

A skill is a folder holding SKILL.md (the open agent-skills format). A run gets skills
two ways: an arm's ``skills:PATH`` (a folder of skill folders, or one skill folder —
the skills under test, compared across arms) and a track's ``skills = [...]`` in
case.toml (names of folders under the project's skills/, part of what that track
teaches). Each is packed once per run into a deterministic tar (bench/plugin.py's
packing: root-owned, read-only, no times, links kept) whose SHA-256 the trial's
provenance records, so two arms that got different skill bytes are never compared as
one; a track's skills are also hashed into the case's visible hash.

Where they land is where a user's CLI looks in a project: Claude Code reads
``.claude/skills/<name>/SKILL.md``, Codex (and the open standard) ``.agents/skills/``.
The skill files are root-owned and read-only: the agent reads its skills, it does not
rewrite the material it is judged with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError
from .hashing import sha256_bytes
from .models import SkillRecord
from .plugin import pack_tree
from .sandbox import Sandbox, dir_tar

SKILL_FILE = "SKILL.md"
WORKSPACE = "workspace"
DISCOVERED_AT = {"claude-code": ".claude/skills"}  # project-level skill folders each CLI reads
OPEN_STANDARD = ".agents/skills"  # Codex, and any other agent


@dataclass(frozen=True)
class Skill:
    record: SkillRecord
    tar: bytes = field(repr=False)


def skill_folders(path: Path) -> list[Path]:
    """One skill folder (SKILL.md at its top), or every such folder directly under ``path``."""
    if (path / SKILL_FILE).is_file():
        return [path]
    found = sorted(sub for sub in path.iterdir() if sub.is_dir() and (sub / SKILL_FILE).is_file()) \
        if path.is_dir() else []
    if not found:
        raise UsageError(f"skills {path}: no {SKILL_FILE} there nor in a folder directly under it — `skills:` takes a "
                         "skill folder or a folder of skill folders")
    return found


def pack_skill(folder: Path, source: str) -> Skill:
    data, files = pack_tree(folder, folder.name, "skill")
    return Skill(SkillRecord(name=folder.name, source=source, origin=str(folder), tarball_sha256=sha256_bytes(data),
                             files=files), data)


class Skills:
    """Every skill a run hands out, each folder packed once however many trials get it."""

    def __init__(self, project_root: Path) -> None:
        self.project_root = project_root
        self._packed: dict[tuple[Path, str], Skill] = {}

    def _get(self, folder: Path, source: str) -> Skill:
        key = (folder.resolve(), source)
        if key not in self._packed:
            self._packed[key] = pack_skill(key[0], source)
        return self._packed[key]

    def for_trial(self, arm_skills: str | None, track_skills: list[str]) -> tuple[Skill, ...]:
        """The track's skills, then the arm's; a name given twice is refused (one would hide the other)."""
        chosen = [self._get(self.project_root / "skills" / name, "track") for name in track_skills]
        if arm_skills:
            chosen += [self._get(folder, "arm") for folder in skill_folders(Path(arm_skills))]
        names = [skill.record.name for skill in chosen]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise UsageError(f"skill(s) {', '.join(twice)} given by both the track and the arm's skills: — rename one")
        return tuple(chosen)


def discovered_at(agent: str) -> str:
    """The workspace folder the agent's CLI reads project skills from."""
    return DISCOVERED_AT.get(agent, OPEN_STANDARD)


def lay(box: Sandbox, skills: tuple[Skill, ...], agent: str) -> None:
    """Put the skills in the created agent container: the folders the CLI reads are the agent's, the skills root's."""
    if not skills:
        return
    at = f"{WORKSPACE}/{discovered_at(agent)}"
    box.put(dir_tar(at))
    for skill in skills:
        box.put(skill.tar, at=f"/{at}")

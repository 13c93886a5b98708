"""The workspace a trial left (workspace.tar) and what changed from the one it started with.

Why the tar is read member by member and never extracted: it is the agent's, so its names may hold
``..``, absolute paths or links to anywhere; listing members as data (a link shown with its target,
never followed) is the only safe reading. Why the starting tree is rebuilt from the project only when
the case's visible hash still matches the trial's provenance: a diff against a case that has since
changed would show edits the agent never made, so then the page says the start is not available.

Sizes are capped: a file over ``DIFF_MAX_BYTES`` or that is not UTF-8 text is reported as changed
without a line diff, and each diff is cut at ``DIFF_MAX_LINES``.
"""

from __future__ import annotations

import difflib
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from ..cases import load_case
from ..errors import BenchError
from ..paths import Project
from ..staging import stage_layers

DIFF_MAX_BYTES = 256 * 1024
DIFF_MAX_LINES = 400
DIFF_MAX_FILES = 200
LIST_MAX_ENTRIES = 2000
START_MAX_FILES = 5000


@dataclass
class FileEntry:
    """One member of workspace.tar: a file with its size, a folder, or a link with its target."""

    name: str
    kind: str  # file | dir | symlink | hardlink | other
    size: int = 0
    target: str = ""


@dataclass
class FileDiff:
    name: str
    status: str  # added | removed | changed
    diff: str = ""
    note: str = ""


@dataclass
class Workspace:
    """What the page shows of the workspace; ``problem`` says why a part is missing."""

    entries: list[FileEntry] = field(default_factory=list)
    listing_note: str = ""
    diffs: list[FileDiff] = field(default_factory=list)
    unchanged: int = 0
    start_problem: str = ""
    problem: str = ""
    diffed: bool = False
    diff_total: int = 0  # files that differ; only the first DIFF_MAX_FILES are in diffs


def _strip(name: str) -> str:
    """Member names relative to the workspace: Docker exports `workspace/...`."""
    name = name[2:] if name.startswith("./") else name
    return name.split("/", 1)[1] if name.startswith("workspace/") else ("" if name == "workspace" else name)


def read_tar(path: Path) -> tuple[list[FileEntry], dict[str, bytes], str]:
    """(entries, contents of small regular files, a problem or ""). Nothing is extracted to disk."""
    entries, contents = [], {}
    try:
        with tarfile.open(path) as archive:
            for member in archive:
                name = _strip(member.name)
                if not name:
                    continue
                kind = ("file" if member.isreg() else "dir" if member.isdir() else "symlink" if member.issym()
                        else "hardlink" if member.islnk() else "other")
                entries.append(FileEntry(name, kind, member.size if member.isreg() else 0, member.linkname))
                if member.isreg() and member.size <= DIFF_MAX_BYTES:
                    contents[name] = archive.extractfile(member).read()
    except (OSError, tarfile.TarError) as exc:
        return entries, contents, f"workspace.tar unreadable: {exc}"
    return entries, contents, ""


@dataclass(frozen=True)
class Start:
    """What provenance.json says the trial started from: the case, its visible hash, the arm's context."""

    case: str
    visible_hash: str
    context: str | None = None

    @classmethod
    def of(cls, provenance: object) -> "Start | None":
        """From provenance.json as parsed JSON (a record too old or new to validate still names its case)."""
        case = provenance.get("case") if isinstance(provenance, dict) else None
        if not isinstance(case, dict) or not case.get("id") or not case.get("visible_hash"):
            return None
        arm = provenance.get("arm_spec") if isinstance(provenance.get("arm_spec"), dict) else {}
        return cls(str(case["id"]), str(case["visible_hash"]), arm.get("context"))


def starting_tree(project: Project | None, start: Start | None) -> tuple[dict[str, bytes | None], str]:
    """path -> bytes (None when too big to diff) of the workspace the trial started from, or a reason it is not
    available: no project, no provenance, or a case that changed since the trial ran."""
    if project is None or start is None:
        return {}, "the starting workspace is not available (no project or provenance to rebuild it from)"
    try:
        case = load_case(project, start.case)
        if case.visible_hash() != start.visible_hash:
            return {}, (f"the starting workspace is not available: case {case.id} changed since this trial "
                        f"(visible hash {case.visible_hash()} != recorded {start.visible_hash})")
        if case.spec.setup or case.spec.subject:
            return {}, (f"the starting workspace is not available: case {case.id} builds it inside its image "
                        f"({'setup commands' if case.spec.setup else 'the subject scaffold'}), not from the project's "
                        "files alone, so a diff from cases/ would show the image's files as the agent's")
        layers, _ = stage_layers(case, start.context)
    except BenchError as exc:
        return {}, f"the starting workspace is not available: {exc}"
    tree: dict[str, bytes | None] = {}
    for _, folder in layers:  # later layers over earlier ones, as staging lays them
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and len(tree) < START_MAX_FILES:
                small = path.stat().st_size <= DIFF_MAX_BYTES
                tree[path.relative_to(folder).as_posix()] = path.read_bytes() if small else None
    return tree, ""


def diff_trees(start: dict[str, bytes | None], end: dict[str, bytes], end_files: set[str]) -> tuple[list[FileDiff], int]:
    """Added, removed and changed files (a unified diff for text), and how many are unchanged."""
    diffs, unchanged = [], 0
    for name in sorted(set(start) | end_files):
        if name not in end_files:
            diffs.append(FileDiff(name, "removed"))
        elif name not in start:
            diffs.append(FileDiff(name, "added", *_text_diff(name, b"", end.get(name))))
        elif start[name] is not None and start[name] == end.get(name):
            unchanged += 1
        else:
            diffs.append(FileDiff(name, "changed", *_text_diff(name, start[name], end.get(name))))
    return diffs, unchanged


def _text_diff(name: str, before: bytes | None, after: bytes | None) -> tuple[str, str]:
    if before is None or after is None:
        return "", f"over {DIFF_MAX_BYTES // 1024} KiB: no line diff"
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return "", "binary: no line diff"
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"start/{name}", f"end/{name}",
                                      lineterm=""))
    note = f"diff cut at {DIFF_MAX_LINES} of {len(lines)} lines" if len(lines) > DIFF_MAX_LINES else ""
    return "\n".join(lines[:DIFF_MAX_LINES]), note


def load(trial_dir: Path, project: Project | None, start: Start | None) -> Workspace:
    """The workspace section of a trial page."""
    tar = trial_dir / "workspace.tar"
    if not tar.is_file():
        return Workspace(problem="no workspace.tar in this trial (the export failed or was never made)")
    entries, contents, problem = read_tar(tar)
    shown = Workspace(entries=entries[:LIST_MAX_ENTRIES], problem=problem)
    if len(entries) > LIST_MAX_ENTRIES:
        shown.listing_note = f"only the first {LIST_MAX_ENTRIES:,} of {len(entries):,} entries are listed"
    tree, shown.start_problem = starting_tree(project, start)
    if not shown.start_problem:
        files = {e.name for e in entries if e.kind == "file"}
        diffs, shown.unchanged = diff_trees(tree, contents, files)
        shown.diffs, shown.diff_total = diffs[:DIFF_MAX_FILES], len(diffs)
        shown.diffed = True
    return shown

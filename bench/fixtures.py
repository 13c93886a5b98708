"""Shared fixture codebases (cases/_fixtures/<name>/): located, counted and content-hashed.

Several cases build on one fixture (the courier service is the bed of both
distill-courier and weed-courier), so its identity is recorded on its own: a
result that quotes the fixture's digest proves which code the agent read, even
when two cases' other files differ. The digest is hashing.tree_digest of the
fixture folder, so it covers paths, executable bits, bytes and link targets and
nothing host-specific. Byte-code caches are refused rather than skipped: a
fixture is never executed by the harness, so a __pycache__ in it is a stray
local artefact that would otherwise change the digest on one machine only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .hashing import tree_digest, walk

FIXTURES_DIR = "cases/_fixtures"
CODE_SUFFIXES = (".py", ".ts", ".tsx", ".js", ".mjs", ".go", ".rb", ".java", ".kt", ".rs", ".zig", ".c", ".h")


@dataclass(frozen=True)
class Fixture:
    name: str
    dir: Path

    def digest(self) -> str:
        """The fixture's content hash ("sha256:<hex>"), the value results record."""
        strays = [p for p in walk(self.dir) if p.name in ("__pycache__", ".pytest_cache") or p.suffix == ".pyc"]
        if strays:
            raise UsageError(f"{strays[0]}: byte-code cache inside fixture {self.name!r} — delete it "
                             "(fixtures are hashed as committed)")
        return tree_digest(self.dir)

    def code_files(self) -> list[Path]:
        """Source files, sorted: what validators search when they cross-check a manifest."""
        return [p for p in walk(self.dir) if p.is_file() and p.suffix in CODE_SUFFIXES]

    def code_text(self) -> str:
        return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in self.code_files())

    def line_count(self) -> int:
        return sum(len(p.read_text(encoding="utf-8", errors="replace").splitlines()) for p in self.code_files())


def known_fixtures(root: Path) -> list[str]:
    folder = root / FIXTURES_DIR
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def load_fixture(root: Path, name: str) -> Fixture:
    """The fixture cases/_fixtures/<name>/ under the project root, or a UsageError listing the known ones."""
    folder = root / FIXTURES_DIR / name
    if not folder.is_dir():
        known = ", ".join(known_fixtures(root)) or "(none)"
        raise UsageError(f"unknown fixture {name!r} (looked in {folder}); known fixtures: {known}")
    return Fixture(name, folder)


def fixture_hash(root: Path, name: str) -> str:
    """Content hash of cases/_fixtures/<name>/: record it beside the case and goldens hashes."""
    return load_fixture(root, name).digest()

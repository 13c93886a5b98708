"""The harness's own identity: version, git commit and dirty flag, and the wheel graders import.

The grader never runs the host's checkout: it imports the gate runner from a wheel
built from it, and the wheel's SHA-256 is recorded, so a result names the exact
grading code. Hatchling builds wheels reproducibly (fixed timestamps), so the same
source gives the same SHA.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import bench

from .errors import InfrastructureError
from .hashing import sha256_file
from .models import HarnessRecord

PACKAGE_DIR = Path(bench.__file__).resolve().parent
WHEEL_IN_CONTAINER = "/opt/bench/harness.whl"
DIRTY_PATHS = ("bench", "cases", "goldens", "images", "provenance", "pyproject.toml")
"""Everything in the checkout that can change a result: the code, the cases, their withheld halves, the
images' sources, the pins and lock, the build. An uncommitted change to any of them makes the git SHA a lie.
(Only `bench images lock` writes the lock: a build never dirties the checkout.)"""


@dataclass(frozen=True)
class Harness:
    wheel: Path
    record: HarnessRecord


def git_state(root: Path) -> tuple[str | None, bool]:
    """(full commit SHA, dirty) of the checkout holding the harness; (None, False) outside git.

    Dirty means an uncommitted change under any of DIRTY_PATHS, not only the package.
    """
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)

    head = git("rev-parse", "HEAD")
    if head.returncode != 0:
        return None, False
    status = git("status", "--porcelain", "--untracked-files=normal", "--", *DIRTY_PATHS)
    return head.stdout.strip(), bool(status.stdout.strip())


def build_wheel(out_dir: Path) -> Path:
    """A wheel of the running harness: hatchling from the checkout, else a zip of the package."""
    out_dir.mkdir(parents=True, exist_ok=True)
    source_root = PACKAGE_DIR.parent
    if (source_root / "pyproject.toml").is_file():
        try:
            from hatchling.builders.wheel import WheelBuilder
        except ImportError:
            pass
        else:
            with tempfile.TemporaryDirectory() as tmp:
                built = Path(next(iter(WheelBuilder(str(source_root)).build(directory=tmp, versions=["standard"]))))
                target = out_dir / built.name
                shutil.copy2(built, target)
                return target
    return _zip_package(out_dir)


def _zip_package(out_dir: Path) -> Path:
    """An installed harness (no checkout) zips its own package with fixed timestamps."""
    target = out_dir / f"hermetic_bench-{bench.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE_DIR.rglob("*.py")):
            info = zipfile.ZipInfo(f"bench/{path.relative_to(PACKAGE_DIR).as_posix()}", (2020, 2, 2, 0, 0, 0))
            archive.writestr(info, path.read_bytes())
    return target


def prepare(out_dir: Path) -> Harness:
    """Build the wheel into out_dir and describe the harness that made it."""
    try:
        wheel = build_wheel(out_dir)
    except Exception as exc:
        raise InfrastructureError(f"could not build the harness wheel for the grader: {exc}") from exc
    sha, dirty = git_state(PACKAGE_DIR.parent)
    record = HarnessRecord(version=bench.__version__, git_sha=sha, dirty=dirty, wheel_sha256=sha256_file(wheel))
    return Harness(wheel, record)

"""`bench init DIR`: a new project of one's own, from the template shipped inside the package.

The template (bench/template/) is package data, so an installed wheel makes the same
project a checkout does and needs no checkout at all. It carries one example case that
the oracle passes and the null agent fails, the `base` image recipe with its pinned
inputs, and a lock holding base's entry: the very image this repository builds and locks,
so `--locked` and the lock states hold from the first run. tests/unit/test_init.py keeps
the recipe and the lock entry equal to the repository's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .errors import UsageError

TEMPLATE = Path(__file__).resolve().parent / "template"
EXAMPLE_CASE = "hello"


def init_project(target: Path) -> list[Path]:
    """Copy the template into ``target`` (new or empty); the files made, relative to it.

    Refuses a folder that holds anything, so nothing of the user's is overwritten or mixed in.
    """
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} is a file — bench init makes a new project; name a new or empty folder")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(f"{target} is not empty — bench init makes a new project; name a new or empty folder")
    try:
        shutil.copytree(TEMPLATE, target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    except OSError as exc:
        raise UsageError(f"cannot make a project in {target}: {exc.strerror or exc} — name a folder you can write") from exc
    return sorted(path.relative_to(target) for path in target.rglob("*") if path.is_file())

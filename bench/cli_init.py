"""`bench init DIR`: a verb only, like bench/cli.py; the template and the copying live in bench/init.py."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from .cli_common import console


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=True, path_type=Path))
def init_cmd(folder: Path) -> None:
    """Make a new project in FOLDER (new or empty): cases/ with an example case, goldens/, images/base, provenance/."""
    from .init import EXAMPLE_CASE, init_project

    made = init_project(folder)
    console.print(f"made a bench project in {folder.resolve()}:", markup=False)
    for path in made:
        console.print(f"  {path.as_posix()}", markup=False)
    console.print(f"next: bench --root {shlex.quote(str(folder))} run {EXAMPLE_CASE} --agent oracle", markup=False)

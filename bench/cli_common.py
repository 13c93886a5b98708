"""What every `bench` verb module shares: the consoles, option sets, the project root."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click
from rich.console import Console

from .errors import UsageError
from .progress import STDERR

console = Console(stderr=False, highlight=False, soft_wrap=True)
err = STDERR  # one stderr console, so lines printed during a live progress region land above it


def option_set(*options: Callable) -> Callable:
    """Several click options applied as one decorator, in the order given (that is --help's order)."""
    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command
    return apply


RESULTS_DEFAULT = "[default: <root>/results; $BENCH_RESULTS if set; a relative path is from the current folder]"


def results_option(help: str = "Folder holding the label folders.", needs_project: bool = True) -> Callable:
    """--results, else $BENCH_RESULTS, else the project's results/ folder.

    A path the user types (flag or variable) is taken from the current folder like any
    other; only the default follows the project, so a run from any folder lands in it.
    A verb that reads labels given as paths (compare, report) needs no project: without
    one, its default is results/ in the current folder.
    """
    def default(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path:
        if value is not None:
            return value
        try:
            return project().root / "results"
        except UsageError:
            if needs_project:
                raise
            return Path("results")

    return click.option("--results", type=click.Path(path_type=Path), envvar="BENCH_RESULTS", callback=default,
                        help=f"{help} {RESULTS_DEFAULT}")


def project():
    """The project a verb works on: --root, else $BENCH_ROOT, else the nearest one above the current folder."""
    from .paths import Project, find_root

    context = click.get_current_context(silent=True)
    return Project(find_root(context.find_root().params.get("root") if context else None))

"""What every `bench` verb module shares: the consoles, option sets, the project root."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import click
from rich.console import Console

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


def results_option(help: str = "Folder holding the label folders.") -> Callable:
    return click.option("--results", default="results", show_default=True, type=click.Path(path_type=Path), help=help)


def project():
    from .paths import Project, find_root

    return Project(find_root())

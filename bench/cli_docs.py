"""`bench docs`: write (or check) docs/cases.md, the case authoring reference, from the models and its template."""

from __future__ import annotations

import sys

import click

from .cli_common import console, project
from .cli_json import emit, json_option


@click.command("docs")
@click.option("--check", is_flag=True, help="Exit 1 if docs/cases.md is out of date instead of writing it.")
@json_option("Print {check: true, path, stale} with --check, else {check: false, wrote} on stdout.")
def docs_cmd(check: bool, as_json: bool) -> None:
    """Write docs/cases.md: every field of case.toml, gate.toml and answer.toml, the container contract, an example
    per check kind. Its tables come from the models, its prose from bench/case_docs.md; edit those, not the page."""
    from .case_docs import TARGET, is_current, write

    if check:
        stale = not is_current(project())
        if as_json:
            emit({"check": True, "path": TARGET, "stale": stale})
        else:
            console.print(f"stale {TARGET}: run `bench docs`" if stale else f"ok {TARGET}")
        sys.exit(1 if stale else 0)
    path = write(project())
    if as_json:
        emit({"check": False, "wrote": path})
    else:
        console.print(f"wrote {path}")

"""`bench docs`: write (or check) docs/cases.md, the case authoring reference, from the models and its template."""

from __future__ import annotations

import sys

import click

from .cli_common import console, project


@click.command("docs")
@click.option("--check", is_flag=True, help="Exit 1 if docs/cases.md is out of date instead of writing it.")
def docs_cmd(check: bool) -> None:
    """Write docs/cases.md: every field of case.toml, gate.toml and answer.toml, the container contract, an example
    per check kind. Its tables come from the models, its prose from bench/case_docs.md; edit those, not the page."""
    from .case_docs import TARGET, is_current, write

    if check:
        current = is_current(project())
        console.print(f"{'ok' if current else 'stale'} {TARGET}" + ("" if current else ": run `bench docs`"))
        sys.exit(0 if current else 1)
    console.print(f"wrote {write(project())}")

"""`bench metrics LABEL`: verbs only, like bench/cli.py; the counting is bench/authoring_metrics.py."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from .cli_common import console, err, project as _project, results_option
from .cli_json import emit, json_option


@click.command("metrics")
@click.argument("label")
@results_option("Where the label name is looked up (a path works as well).")
@json_option("Print authoring-metrics.json's data instead of the table.")
def metrics_cmd(label: str, results: Path, as_json: bool) -> None:
    """Authoring metrics of LABEL's transcripts per case x track x arm: first-pass compliance, retries-to-green,
    teaching-error encounters, per 1k generated lines; written to authoring-metrics.json (a derived view, not signed).

    Compliance commands and teaching errors are the case's gate.toml `[metrics]` patterns.
    """
    from .authoring_metrics import measure
    from .compare import resolve_label

    paths = resolve_label(label, results)
    found = measure(paths, _project(), note=lambda line: err.print(f"note: {line}", markup=False, highlight=False))
    if as_json:
        return emit(found)  # plain, not rich: rich would read ':name:' in a pattern as an emoji
    table = Table("case", "track", "arm", "trials", "task pass", "first-pass", "retries→green", "failing runs",
                  "teaching errors", "lines", "failing/1k", "teaching/1k", title=f"authoring metrics {paths.label}")
    rollup = found.tracks if len({g.case for g in found.groups}) > 1 else []  # one case: the rollup repeats it
    for row in [*found.groups, *rollup]:
        table.add_row(row.case or "(all)", row.track or "—", row.arm, str(row.trials), f"{row.task_pass}/{row.task_valid}",
                      f"{row.first_pass}/{row.first_pass_of}", _num(row.retries_to_green_mean), _num(row.failing_runs),
                      _num(row.teaching_errors), _num(row.generated_lines), _num(row.failing_runs_per_kloc),
                      _num(row.teaching_errors_per_kloc))
    console.print(table)
    console.print(f"wrote {paths.authoring_metrics}", markup=False, highlight=False)


def _num(value: float | int | None) -> str:
    if value is None:
        return "—"
    return f"{value:g}" if isinstance(value, float) else str(value)

"""`bench setup`, `bench grade` and `bench cases check-answers`: verbs only, like bench/cli.py.

Work made outside bench (bench/external.py) and a case's reference answers
(bench/answers.py) are graded by the run pipeline; these verbs parse, call it and render.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import click
from rich.table import Table
from rich.text import Text

from .cli_common import console, err, project as _project, results_option
from .cli_json import emit, json_option
from .errors import InfrastructureError
from .exit_status import HELP, NO_VERDICT


def _say(line: str) -> None:
    err.print(line, markup=False)


@contextmanager
def no_verdict_on_fault() -> Iterator[None]:
    """A harness fault before any trial had a verdict (an image that cannot be built, the engine gone) is exit 3,
    no verdict: exit 1 would charge the work with a failure nobody observed. cli.main reports it."""
    try:
        yield
    except InfrastructureError as exc:
        exc.exit_code = NO_VERDICT
        raise


@click.command("setup")
@click.argument("case")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--arm", help="The arm whose context the agent gets (default: the case's first arm).")
def setup_cmd(case: str, folder: Path | None, arm: str | None) -> None:
    """Lay out what an agent would get for CASE in FOLDER (default: a new temporary folder); print it last.

    FOLDER gets the staged workspace (the case's fixture, workspace/ and the arm's
    context, after the case's setup commands, as a trial's agent finds /workspace) and
    the task as PROMPT.md. Nothing of goldens/ is read. Work in FOLDER, then
    `bench grade CASE FOLDER`. A FOLDER that exists must be empty.
    """
    from .external import set_up

    console.print(str(set_up(_project(), case, arm, folder, _say)), markup=False, highlight=False)


@click.command("grade", epilog=HELP)
@click.argument("case")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--arm", help="The arm FOLDER was set up for (default: the case's first arm).")
@click.option("--label", help="Results folder name under --results (default: a UTC timestamp); one grade per "
                              "case x arm in a label.")
@results_option("Where label folders are written.")
@click.option("--seat", type=click.Choice(["software", "gpu"]), help="As `bench run --seat`, for cases that render.")
@json_option("Print the summary, the results folder and the exit status as one JSON object, as `bench run --json`.")
def grade_cmd(case: str, folder: Path, as_json: bool, **options) -> None:
    """Grade FOLDER as CASE's workspace with its withheld gate, recorded like a run with agent `external`.

    FOLDER is packed as an agent's exported workspace would be (symlinks kept as links,
    never followed; the export budget applies; a top-level PROMPT.md is left out), then
    graded, recorded, signed and summarized exactly as `bench run` does, so
    `bench verify-provenance` and `bench compare` take the label like any run's.
    """
    from .external import GradeRequest, grade_folder

    with no_verdict_on_fault():
        outcome = grade_folder(GradeRequest(case=case, folder=folder, **options), _project(), _say)
    finish_run(outcome, as_json)


def finish_run(outcome, as_json: bool = False) -> None:
    """The summary table (or under --json summary.json's data), where the results are, and the exit status of
    bench/exit_status.py."""
    dry = bool(outcome.results) and all(r.dry_run for r in outcome.results)
    status = _run_status(outcome, dry)
    if as_json:
        emit({**outcome.summary.model_dump(mode="json"), "results": str(outcome.paths.dir), "exit_status": status,
              "dry_run": dry, "engine_lost": outcome.engine_lost})
    else:
        _summary_table(outcome, dry)
    sys.exit(status)


def _run_status(outcome, dry: bool) -> int:
    from .exit_status import exit_status
    from .models import Verdict

    verdicts = [r.verdict for r in outcome.results] + ([Verdict.ERROR] if outcome.engine_lost else [])
    if dry:  # the scaffold is expected to FAIL; only a path that broke (ERROR, INCOMPLETE) is worth a nonzero exit
        verdicts = [Verdict.PASS if v is Verdict.FAIL else v for v in verdicts]
    return exit_status(verdicts)


def _summary_table(outcome, dry: bool) -> None:
    from .summary import check_marks

    title = f"run {outcome.summary.label}" + (" — dry run: no agent ran, FAILs grade the untouched scaffold" if dry else "")
    table = Table("case", "arm", "lane", "PASS", "FAIL", "INCOMPLETE", "ERROR", "pass rate", "checks", title=title)
    lanes: dict[tuple[str, str], set[str]] = {}  # a label's seat, and so its lane, is one run option: resume holds it
    for result in outcome.results:
        lanes.setdefault((result.case, result.arm), set()).add(result.lane)
    for arm in outcome.summary.arms:
        rate = "—" if arm.pass_rate is None else f"{arm.pass_rate:.0%}"
        lane = ", ".join(sorted(lanes.get((arm.case, arm.arm), ()))) or "—"
        table.add_row(arm.case, arm.arm, lane, *(str(arm.counts[v]) for v in arm.counts), rate, check_marks(arm.checks))
    console.print(table)
    console.print("checks: passed/ran per check in gate order; s = skipped (another lane's check, or a model's in a "
                  "dry run)", highlight=False)
    console.print(f"results: {outcome.paths.dir}")


@click.command("check-answers")
@click.argument("cases", nargs=-1)
@click.option("--label", help="Results folder name under --results (default: answers-<UTC timestamp>).")
@results_option("Where the label folder is written.")
def check_answers_cmd(cases: tuple[str, ...], label: str | None, results: Path) -> None:
    """Grade every reference answer of CASES (default: every case with answers) and compare each with its
    expectation: goldens/<case>/answers/<name>/answer.toml says expect = PASS | FAIL, optionally a reason
    regex and, with an operator's assessment, the combined ok.

    All answers are graded into one label, as `bench grade` grades a folder. Exit 0
    when every answer gives what it expects, 1 when one does not, 2 on a bad
    answer.toml (naming file and field), 3 when none differs but one got no verdict.
    """
    from .answers import check_answers

    with no_verdict_on_fault():
        checked = check_answers(_project(), list(cases), label, results, _say)
    table = Table("case", "answer", "expected", "got", "ok", title=f"answers {checked.outcome.paths.label}")
    for row in checked.rows:
        table.add_row(row.case, row.answer, Text(row.expected), Text(row.got),
                      Text("ok", "green") if row.ok else Text("NO", "red"))
    console.print(table)
    console.print(f"results: {checked.outcome.paths.dir}")
    sys.exit(checked.exit_code())

"""`bench assess`: an operator's scoring of a finished trial's expectations. A verb only, like bench/cli.py."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .cli_common import console
from .cli_json import emit, json_option
from .cli_provenance import trust_options
from .exit_status import HELP


@click.command("assess", epilog=HELP)
@click.argument("trial_dir", type=click.Path(path_type=Path))
@click.argument("assessment_json", type=click.Path(path_type=Path))
@click.option("--by", help="Who assessed, recorded in assessment.json (default: your login name).")
@trust_options
@json_option("Print the scored trial (result, assessment, the one it replaced, exit status) as one JSON object.")
def assess_cmd(trial_dir: Path, assessment_json: Path, by: str | None, keys: tuple[Path, ...],
               trusted_keys: Path | None, as_json: bool) -> None:
    """Score TRIAL_DIR's semantic expectations from ASSESSMENT_JSON, and re-sign its label.

    ASSESSMENT_JSON is {"schemaVersion": 1, "caseId": CASE, "expectations": [{"category":
    "mustDemonstrate"|"mustAvoid", "expectation": TEXT, "status": "pass"|"fail", "evidence":
    TEXT}]}, naming expectations exactly as the trial recorded them; those it leaves out
    stay unscored. For mustAvoid, pass means the behaviour was avoided. What the agent
    produced and its verdict never change. A label that does not verify is refused (exit 2).
    """
    from .assessment import assess, operator
    from .exit_status import exit_status
    from .keys import trusted_keys as load

    done = assess(trial_dir, assessment_json, by if by is not None else operator(), load(list(keys), trusted_keys))
    failed = any(e.status == "fail" for e in done.result.expectations)
    status = exit_status([done.result.verdict], assessment_failed=failed)
    if as_json:
        emit({"trial": done.trial.dir, "result": done.result, "assessment": done.record, "replaced": done.replaced,
              "exit_status": status})
    else:
        for line in done.lines():
            console.print(line, markup=False)
    sys.exit(status)

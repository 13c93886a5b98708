"""`bench run --json` and `bench grade --json` on the real engine: one JSON object on stdout, progress on stderr.

The object is summary.json's data plus where the results are and the exit status, so a
script needs neither the table nor a second read of the label.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]


def _same_as_summary(data: dict) -> Path:
    """The printed object holds summary.json's data (its created_at aside) and names the label it came from."""
    results = Path(data["results"])
    written = json.loads((results / "summary.json").read_text())
    assert {k: v for k, v in data.items() if k in written and k != "created_at"} == \
        {k: v for k, v in written.items() if k != "created_at"}
    return results


def test_run_json_is_the_summary_with_results_and_exit_status(docker_client, bench, tmp_path):
    done = bench("run", "hello", "c-rle", "--arm", "good=agent:oracle", "--arm", "bad=agent:null", "--trials", "1",
                 "--label", "js", "--json", check_rc=1)
    data = json.loads(done.stdout)  # the whole of stdout is one JSON object: no table, no progress
    assert data["exit_status"] == 1 and data["dry_run"] is False and data["label"] == "js"
    assert _same_as_summary(data) == tmp_path / "results" / "js"
    counts = {(arm["case"], arm["arm"]): (arm["counts"]["PASS"], arm["counts"]["FAIL"]) for arm in data["arms"]}
    assert counts == {("hello", "good"): (1, 0), ("hello", "bad"): (0, 1), ("c-rle", "good"): (1, 0),
                      ("c-rle", "bad"): (0, 1)}
    assert "hello/good/trial-1: PASS" in done.stderr  # progress stays on stderr


def test_grade_json(docker_client, bench, tmp_path):
    folder = tmp_path / "work"
    shutil.copytree(ROOT / "goldens" / "hello" / "solution", folder)
    done = bench("grade", "hello", str(folder), "--label", "graded", "--json", check_rc=0)
    data = json.loads(done.stdout)
    assert data["exit_status"] == 0 and [arm["counts"]["PASS"] for arm in data["arms"]] == [1]
    assert _same_as_summary(data) == tmp_path / "results" / "graded"

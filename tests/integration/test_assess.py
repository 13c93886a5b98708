"""`bench assess` on a trial the real engine recorded: c-rle solved by the oracle, then scored by an operator.

Each test scores its own copy of the one recorded label (same label name, another
results folder) through the real CLI in a subprocess, so exit codes are the ones a
script sees, and verify-provenance judges the label afterwards exactly as a reader would.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
TRIAL = "c-rle/default/trial-1"
DIRTY = "harness was dirty"  # named when the checkout running the tests has uncommitted changes; not ours to judge


def bench(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def recorded(docker_client, config_dir, tmp_path_factory) -> Path:
    """The label of one oracle trial of c-rle, PASS, its gate's expectations recorded unscored."""
    results = tmp_path_factory.mktemp("assess-recorded")
    done = bench("run", "c-rle", "--agent", "oracle", "--label", "scored", "--results", str(results), cwd=results)
    assert done.returncode == 0, done.stdout + done.stderr
    return results / "scored"


@pytest.fixture()
def label(recorded, tmp_path) -> Path:
    copy = tmp_path / "results" / recorded.name
    shutil.copytree(recorded, copy, symlinks=True)
    return copy


def expectations() -> list[dict]:
    return tomllib.loads((ROOT / "goldens" / "c-rle" / "gate.toml").read_text())["expectations"]


def scoring(tmp_path: Path, *picked: tuple[int, str], category: str | None = None) -> Path:
    """An operator's file scoring the gate's expectations at the given indexes with the given statuses."""
    gate = expectations()
    entries = [{"category": category or gate[i]["category"], "expectation": gate[i]["text"], "status": status,
                "evidence": f"read src/rle.c for expectation {i}"} for i, status in picked]
    path = tmp_path / "scoring.json"
    path.write_text(json.dumps({"schemaVersion": 1, "caseId": "c-rle", "expectations": entries}))
    return path


def result(label: Path) -> dict:
    return json.loads((label / TRIAL / "result.json").read_text())


def differences(label: Path) -> tuple[int, list[dict], bool]:
    """verify-provenance's exit status, its differences but the dirty flag, and whether that was named."""
    done = bench("verify-provenance", str(label), "--json", cwd=label.parent)
    found = json.loads(done.stdout)["differences"]
    dirty = any(d["what"].startswith(DIRTY) for d in found)
    return done.returncode, [d for d in found if not d["what"].startswith(DIRTY)], dirty


def test_the_trial_records_the_gates_expectations_unscored(recorded):
    recorded_result = result(recorded)
    assert recorded_result["verdict"] == "PASS"
    assert [(e["category"], e["text"], e["status"]) for e in recorded_result["expectations"]] == \
        [(e["category"], e["text"], "unscored") for e in expectations()]
    assert (recorded_result["assessment_status"], recorded_result["ok"]) == ("unscored", True)


def test_a_wrong_category_exits_2_naming_the_entry_and_changes_nothing(label, tmp_path):
    before = {p.name: p.read_bytes() for p in (label / TRIAL).iterdir() if p.is_file()}
    done = bench("assess", str(label / TRIAL), str(scoring(tmp_path, (0, "pass"), category="mustAvoid")),
                 cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "scoring.json: field 'expectations.0'" in done.stderr and "is a mustDemonstrate, not a mustAvoid" \
        in done.stderr
    assert {p.name: p.read_bytes() for p in (label / TRIAL).iterdir() if p.is_file()} == before


def test_a_partial_assessment_exits_0_leaving_the_rest_unscored_and_verifies(label, tmp_path):
    tar = (label / TRIAL / "workspace.tar").read_bytes()
    checks = result(label)["checks"]
    done = bench("assess", str(label / TRIAL), str(scoring(tmp_path, (1, "pass"))), "--by", "ops-ann", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    after = result(label)
    assert [e["status"] for e in after["expectations"]] == ["unscored", "pass", "unscored"]
    assert (after["verdict"], after["assessment_status"], after["ok"]) == ("PASS", "partial", True)
    assert after["checks"] == checks and (label / TRIAL / "workspace.tar").read_bytes() == tar
    assert json.loads((label / TRIAL / "assessment.json").read_text())["assessed_by"] == "ops-ann"
    assert done.stdout.strip().splitlines()[-1] == "c-rle/default/trial-1: verdict PASS, assessment partial, ok true"
    rc, found, dirty = differences(label)
    assert found == [], found
    assert rc == (1 if dirty else 0)


def test_a_failed_must_avoid_makes_ok_false_and_exits_1(label, tmp_path):
    done = bench("assess", str(label / TRIAL), str(scoring(tmp_path, (0, "pass"), (1, "pass"), (2, "fail"))),
                 cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    after = result(label)
    assert (after["verdict"], after["assessment_status"], after["ok"]) == ("PASS", "fail", False)
    assert f"mustAvoid       fail     {expectations()[2]['text']}" in done.stdout


def test_a_hand_edited_assessment_fails_verify_naming_the_file(label, tmp_path):
    assert bench("assess", str(label / TRIAL), str(scoring(tmp_path, (2, "fail"))), cwd=tmp_path).returncode == 1
    path = label / TRIAL / "assessment.json"
    edited = json.loads(path.read_text())
    edited["expectations"][0]["status"] = "pass"  # the operator's fail, turned into a pass afterwards
    path.write_text(json.dumps(edited, indent=2) + "\n")
    rc, found, _ = differences(label)
    assert rc == 1
    named = [f"{d['where']}: {d['what']}" for d in found]
    assert any("assessment.json: SHA-256 differs from the manifest" in line for line in named), named
    assert any(line.endswith(f"{TRIAL}/result.json: expectations[2] (mustAvoid {expectations()[2]['text']!r}): "
                             "status 'fail' disagrees with 'pass' from assessment.json") for line in named), named
    again = bench("assess", str(label / TRIAL), str(scoring(tmp_path, (2, "pass"))), cwd=tmp_path)
    assert again.returncode == 2 and "does not verify" in again.stderr  # never signed over


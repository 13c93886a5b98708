"""thermostat-core: one behavioural spec on two authoring tracks, each graded by its withheld harness.

The mutated arm is the oracle's core with one hysteresis comparison made strict (heat
starts only below `target - 1`), written by the `command` agent into whichever track's
starter it finds; on each track exactly the heat test must fail, by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_allium_cases import writes

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "goldens/thermostat-core/tracks"
ZIG = (SOLUTIONS / "zig/solution/src/core.zig").read_text()
TS = (SOLUTIONS / "ts/solution/src/core.ts").read_text()
ZIG_MUTATED = ZIG.replace(".heat => if (temp <= model.target - 1)", ".heat => if (temp < model.target - 1)")
TS_MUTATED = TS.replace('mode === "heat") return temp <= target - 1', 'mode === "heat") return temp < target - 1')
MUTATE = (f"if [ -f {{workspace}}/src/core.zig ]; then {writes('src/core.zig', ZIG_MUTATED)}; "
          f"else {writes('src/core.ts', TS_MUTATED)}; fi")
HEAT = "heat runs below the band and stops above it"


def results(label: Path) -> dict[str, dict]:
    return {f"{p.parents[2].name}/{p.parents[1].name}": json.loads(p.read_text())
            for p in sorted(label.glob("*/*/trial-1/result.json"))}


def harness(result: dict) -> dict:
    return next(check for check in result["checks"] if check["kind"] == "harness")


def test_oracle_passes_null_fails_and_a_mutation_fails_its_named_test_on_both_tracks(docker_client, bench, tmp_path):
    assert ZIG_MUTATED != ZIG and TS_MUTATED != TS
    bench("run", "thermostat-core", "--arm", "oracle=agent:oracle", "--arm", "null=agent:null",
          "--arm", f"mutated=agent:command,agent_cmd:{MUTATE}", "--label", "dual", check_rc=1)
    found = results(tmp_path / "results/dual")
    assert sorted(found) == [f"thermostat-core@{t}/{a}" for t in ("ts", "zig") for a in ("mutated", "null", "oracle")]
    for track, total in (("zig", 7), ("ts", 8)):
        oracle, null, mutated = (found[f"thermostat-core@{track}/{arm}"] for arm in ("oracle", "null", "mutated"))
        assert oracle["verdict"] == "PASS" and harness(oracle)["metrics"]["tests_passed"] == total
        assert null["verdict"] == "FAIL"
        assert mutated["verdict"] == "FAIL" and harness(mutated)["metrics"]["tests_failed"] == 1
        assert [name.removeprefix("harness.test.") for name in harness(mutated)["review"]["failed"]] == [HEAT]
    provenance = json.loads((tmp_path / "results/dual/thermostat-core@zig/oracle/trial-1/provenance.json").read_text())
    assert provenance["case"]["id"] == "thermostat-core@zig" and provenance["case"]["track"] == "zig"
    assert provenance["images"]["grader"]["toolchains"]["zig"] == "0.16.0"
    assert [(s["name"], s["source"]) for s in provenance["skills"]] == [("update-core", "track")]
    summary = json.loads((tmp_path / "results/dual/summary.json").read_text())
    assert {(arm["case"], arm["arm"]) for arm in summary["arms"]} >= {("thermostat-core@zig", "oracle"),
                                                                      ("thermostat-core@ts", "oracle")}
    verified = bench("verify-provenance", str(tmp_path / "results/dual"))
    differences = [line for line in verified.stdout.splitlines() if "/trial-1:" in line]
    assert verified.returncode == 0 or all("harness was dirty" in line for line in differences), verified.stdout


def test_track_selects_one_track_and_an_unknown_one_is_refused(docker_client, bench, tmp_path):
    bench("run", "thermostat-core", "--track", "ts", "--agent", "null", "--label", "one", check_rc=1)
    assert [p.name for p in (tmp_path / "results/one").glob("thermostat-core*")] == ["thermostat-core@ts"]
    refused = bench("run", "thermostat-core", "--track", "rust", "--label", "none", check_rc=2)
    assert "has tracks zig, ts only" in refused.stderr
    refused = bench("run", "thermostat-core@rust", "--label", "none", check_rc=2)
    assert "has no track 'rust'" in refused.stderr

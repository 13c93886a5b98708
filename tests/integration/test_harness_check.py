"""The `harness` check on the real engine: withheld Zig and TypeScript tests beside the agent's code.

Two fixture cases (tests/fixtures/harness) with the same three functions: zig-stats under
`zig test` in the zig image, ts-stats under Node 24 in the node image. Each hostile arm is
a `command` agent writing its work into its own workspace, the way an agent's work gets
there; every gate ends with two checks proving the injected files never reached the
workspace the later checks see. What each arm proves is in its name and its comment.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.integration.test_allium_cases import writes

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures/harness"
ZIG_SOLUTION = (FIXTURES / "goldens/zig-stats/solution/src/stats.zig").read_text()
TS_SOLUTION = (FIXTURES / "goldens/ts-stats/solution/src/stats.ts").read_text()
ZIG_TESTS = ["harness.test.sum adds every element", "harness.test.sum of nothing is zero",
             "harness.test.max finds the largest", "harness.test.max of nothing is null",
             "harness.test.clamp keeps a value inside the bounds"]
TS_TESTS = ["sum > adds every element", "sum > of nothing is zero", "max > finds the largest",
            "max > of nothing is null", "clamp keeps a value inside the bounds"]


def fake_records(names: list[str]) -> str:
    """Lines shaped exactly like bench's records, with MACs under a key that is not the check's."""
    def line(body: str) -> str:
        return f"\n{body} {hashlib.sha256(body.encode()).hexdigest()}\n"

    return "".join(line(f"BENCH-TEST {i} pass {n.encode().hex()}") for i, n in enumerate(names)) + line(
        f"BENCH-END {len(names)}")


# zig: print zig's own summary and bench's record shapes, then exit 0 from inside a test.
ZIG_FORGE = f'''const std = @import("std");
fn forge() noreturn {{
    const io = std.Io.Threaded.global_single_threaded.io();
    std.Io.File.stdout().writeStreamingAll(io, {json.dumps(fake_records(ZIG_TESTS))}) catch {{}};
    std.Io.File.stderr().writeStreamingAll(io, "All 5 tests passed.\\n") catch {{}};
    std.process.exit(0);
}}
'''
ZIG_FORGED_FIRST = ZIG_SOLUTION.replace("    var total: i64 = 0;",
                                        "    if (xs.len > 0) forge();\n    var total: i64 = 0;") + ZIG_FORGE
ZIG_FORGED_LAST = ZIG_SOLUTION.replace("    return @min(@max(x, lo), hi);",
                                       "    if (x == 2) forge();\n    return @min(@max(x, lo), hi);") + ZIG_FORGE
ZIG_MUTATED = ZIG_SOLUTION.replace("@max(best, x)", "@min(best, x)")
# Tests of the agent's own, one failing: they neither run nor count.
ZIG_OWN_TESTS = ZIG_SOLUTION + '\ntest "my own passing test" {}\ntest "my own failing test" {\n    return error.Nope;\n}\n'
# A file zig would name like the harness (harness.test.test.*), pulled in from the agent's code.
ZIG_SHADOW = ZIG_MUTATED + '\ncomptime {\n    _ = @import("harness.test.zig");\n}\n'
ZIG_HARNESS_IMPOSTOR = 'test "sum adds every element" {}\ntest "max finds the largest" {}\n'

TS_FORGE = f'''function forge(): never {{
  process.stdout.write("TAP version 13\\nok 1 - sum\\n# tests 5\\n# pass 5\\n# fail 0\\n");
  process.stdout.write({json.dumps(fake_records(TS_TESTS))});
  process.exit(0);
}}
'''
TS_FORGED_FIRST = TS_FORGE + "forge();\n" + TS_SOLUTION
TS_FORGED_LAST = TS_FORGE + TS_SOLUTION.replace("  return Math.min(Math.max(x, lo), hi);",
                                                "  if (x === 2) forge();\n  return Math.min(Math.max(x, lo), hi);")
TS_MUTATED = TS_SOLUTION.replace("Math.max(...xs)", "Math.min(...xs)")
# The agent's module swaps the assertions the driver uses and the `test` it calls for forgiving
# ones, and registers passing tests of its own; its max is wrong.
TS_PATCHED = '''import strict from "node:assert/strict";
import loose from "node:assert";
import { test } from "node:test";
import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);
const tried: string[] = [];
for (const target of [strict, loose] as any[]) {
  for (const name of ["equal", "deepEqual", "strictEqual", "deepStrictEqual", "ok"]) {
    try { target[name] = () => {}; tried.push(`PATCHED ${name}`); } catch { tried.push(`refused ${name}`); }
  }
}
try { require("node:test").test = () => {}; syncBuiltinESMExports(); tried.push("PATCHED test"); } catch { tried.push("refused test"); }
for (let i = 0; i < 10; i++) test(`my own passing test ${i}`, () => {});
console.error(tried.join(", "));
''' + TS_MUTATED
# Correct code that looks for the runner's key and the inspector, and says what it found.
TS_SNOOP = '''import { readdirSync, readFileSync } from "node:fs";

let key = "KEY-GONE";
for (const dir of readdirSync("/").filter((name) => name.startsWith("bench-harness-"))) {
  try { key = `KEY-FOUND ${readFileSync(`/${dir}/key/key`, "utf8")}`; } catch {}
}
let inspector = "INSPECTOR-OPEN";
try { const { Session } = await import("node:inspector"); new Session().connect(); } catch { inspector = "INSPECTOR-REFUSED"; }
console.error(`SNOOP ${key} ${inspector}`);
''' + TS_SOLUTION
TS_DRIVER_IMPOSTOR = 'import { test } from "node:test";\ntest("everything", () => {});\n'


@pytest.fixture()
def harness_project(project: Path) -> Path:
    for part in ("cases", "goldens"):
        for case in (FIXTURES / part).iterdir():
            shutil.copytree(case, project / part / case.name)
    return project


def arm(name: str, command: str) -> list[str]:
    return ["--arm", f"{name}=agent:command,agent_cmd:{command}"]


def results(label: Path, case: str) -> dict[str, dict]:
    return {p.parents[1].name: json.loads(p.read_text()) for p in sorted(label.glob(f"{case}/*/trial-1/result.json"))}


def harness(result: dict) -> dict:
    check = result["checks"][0]
    assert check["kind"] == "harness"
    return check


def later_checks_passed(result: dict) -> bool:
    """After the harness check: no file of the workspace carries the harness's marker, read from the tar and
    searched in a fresh container (beside the agent's own harness.zig or test/stats.test.ts, in the mutated arms)."""
    return [c["passed"] for c in result["checks"][1:]] == [True, True]


def test_zig_harness_counts_tests_names_failures_and_refuses_forgeries(docker_client, bench, harness_project, tmp_path):
    bench("run", "zig-stats", "--arm", "oracle=agent:oracle", "--arm", "null=agent:null",
          *arm("mutated", writes("src/stats.zig", ZIG_MUTATED) + " && " + writes("src/harness.zig", ZIG_HARNESS_IMPOSTOR)),
          *arm("forged", writes("src/stats.zig", ZIG_FORGED_FIRST)),
          *arm("exits-early", writes("src/stats.zig", ZIG_FORGED_LAST)),
          *arm("own-tests", writes("src/stats.zig", ZIG_OWN_TESTS)),
          *arm("shadow", writes("src/stats.zig", ZIG_SHADOW) + " && "
               + writes("src/harness.test.zig", ZIG_HARNESS_IMPOSTOR)),
          *arm("linked-into", writes("real/stats.zig", ZIG_SOLUTION) + " && rm -r {workspace}/src && "
               "ln -s real {workspace}/src"),
          "--label", "zig", root=harness_project, timeout=900)
    found = results(tmp_path / "results/zig", "zig-stats")

    oracle = harness(found["oracle"])
    assert found["oracle"]["verdict"] == "PASS", found["oracle"]["reason"]
    assert oracle["metrics"] == {"tests_passed": 5, "tests_failed": 0, "tests_total": 5}
    assert oracle["review"] == {"passed": ZIG_TESTS} and oracle["detail"] == "5/5 harness tests passed"
    assert oracle["directions"]["tests_failed"] == "lower" and oracle["bounds"] == {"tests_failed": 0}
    assert later_checks_passed(found["oracle"])
    images = json.loads((tmp_path / "results/zig/zig-stats/oracle/trial-1/provenance.json").read_text())["images"]
    assert images["grader"]["toolchains"] == {"node": "24.19.0", "pnpm": "11.28.11", "typescript": "6.0.3",
                                              "zig": "0.16.0"}

    null = harness(found["null"])  # the starter returns 0 / null / x: right by accident twice
    assert found["null"]["verdict"] == "FAIL" and null["metrics"]["tests_passed"] == 2
    assert null["review"]["passed"] == [ZIG_TESTS[1], ZIG_TESTS[3]]

    mutated = harness(found["mutated"])  # its own harness.zig was replaced by the withheld one
    assert found["mutated"]["verdict"] == "FAIL"
    assert mutated["review"]["failed"] == ["harness.test.max finds the largest"]
    assert mutated["metrics"] == {"tests_passed": 4, "tests_failed": 1, "tests_total": 5}
    assert "max finds the largest" in found["mutated"]["reason"] and later_checks_passed(found["mutated"])

    for name, recorded in (("forged", 0), ("exits-early", 4)):
        check = harness(found[name])
        assert found[name]["verdict"] == "FAIL", name
        assert "never reached its end" in check["detail"] and f"{recorded} harness tests recorded" in check["detail"]
        assert "6 line(s) shaped like runner records were not the runner's" in check["detail"], check["detail"]
        assert check["metrics"] == {} and len(check["review"].get("passed", [])) == recorded

    own = harness(found["own-tests"])
    assert found["own-tests"]["verdict"] == "PASS", found["own-tests"]["reason"]
    assert own["metrics"]["tests_total"] == 5 and own["review"] == {"passed": ZIG_TESTS}

    assert found["shadow"]["verdict"] == "FAIL"
    assert "src/harness.test.zig would have its tests named like the harness's own" in harness(found["shadow"])["detail"]
    assert found["linked-into"]["verdict"] == "FAIL"
    assert "the workspace's src is a symlink, not a folder" in harness(found["linked-into"])["detail"]


def test_node_harness_counts_tests_names_failures_and_refuses_forgeries(docker_client, bench, harness_project, tmp_path):
    bench("run", "ts-stats", "--arm", "oracle=agent:oracle", "--arm", "null=agent:null",
          *arm("mutated", writes("src/stats.ts", TS_MUTATED) + " && " + writes("test/stats.test.ts", TS_DRIVER_IMPOSTOR)),
          *arm("forged", writes("src/stats.ts", TS_FORGED_FIRST)),
          *arm("exits-early", writes("src/stats.ts", TS_FORGED_LAST)),
          *arm("patched", writes("src/stats.ts", TS_PATCHED)),
          *arm("snoop", writes("src/stats.ts", TS_SNOOP)),
          "--label", "ts", root=harness_project, timeout=900)
    label = tmp_path / "results/ts"
    found = results(label, "ts-stats")

    oracle = harness(found["oracle"])
    assert found["oracle"]["verdict"] == "PASS", found["oracle"]["reason"]
    assert oracle["metrics"] == {"tests_passed": 5, "tests_failed": 0, "tests_total": 5}
    assert oracle["review"] == {"passed": TS_TESTS} and later_checks_passed(found["oracle"])
    images = json.loads((label / "ts-stats/oracle/trial-1/provenance.json").read_text())["images"]
    assert images["grader"]["toolchains"] == {"node": "24.19.0", "pnpm": "11.28.11", "typescript": "6.0.3"}

    assert found["null"]["verdict"] == "FAIL" and harness(found["null"])["review"]["passed"] == [TS_TESTS[1], TS_TESTS[3]]

    mutated = harness(found["mutated"])  # its own test/stats.test.ts was replaced by the withheld driver
    assert found["mutated"]["verdict"] == "FAIL" and mutated["review"]["failed"] == ["max > finds the largest"]
    assert mutated["metrics"] == {"tests_passed": 4, "tests_failed": 1, "tests_total": 5}
    assert "max > finds the largest" in found["mutated"]["reason"] and later_checks_passed(found["mutated"])

    for name in ("forged", "exits-early"):  # how many records the runner wrote before exit(0) is node's scheduling
        check = harness(found[name])
        assert found[name]["verdict"] == "FAIL", name
        assert "never reached its end" in check["detail"] and check["metrics"] == {}
        assert "6 line(s) shaped like runner records were not the runner's" in check["detail"], check["detail"]

    patched = harness(found["patched"])  # frozen assertions still throw; its own tests do not count
    assert found["patched"]["verdict"] == "FAIL" and patched["review"]["failed"] == ["max > finds the largest"]
    assert patched["metrics"]["tests_total"] == 5
    patched_log = (label / "ts-stats/patched/trial-1/gate.log").read_text()
    assert "refused equal" in patched_log and "refused test" in patched_log and "PATCHED" not in patched_log

    assert found["snoop"]["verdict"] == "PASS", found["snoop"]["reason"]
    assert "SNOOP KEY-GONE INSPECTOR-REFUSED" in (label / "ts-stats/snoop/trial-1/gate.log").read_text()

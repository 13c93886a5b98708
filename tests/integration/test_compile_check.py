"""The `compile` check on the real engine: ts-user-import graded without running a line of the submission.

Each hostile submission is written by the `command` agent into its own workspace, the
way an agent's work gets there, then exported and graded like any other. What each
test proves is in its name; the expected numbers are the compiler's, read off by hand
from `tsc` in the node image.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_allium_cases import writes

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "goldens/ts-user-import/answers"
SOLUTION = (ROOT / "goldens/ts-user-import/solution/solution.ts").read_text()
INVENTED = (ANSWERS / "invented-api/submission/solution.ts").read_text()
MARKER = "RAN-0f3b9c"

# Compiles cleanly, and would announce itself, write a file and never return if it ever ran.
NEVER_RUN = f"""import {{ ok }} from "neverthrow";
declare const require: (module: string) => {{ writeFileSync(path: string, data: string): void }};
console.log("{MARKER}");
require("fs").writeFileSync("/tmp/{MARKER}", "{MARKER}");
while (Date.now() > 0) {{}}
export const value = ok(1);
"""
# A workspace whose own project files would run code at install or compile time, if used.
HOSTILE_PACKAGE = json.dumps({"name": "x", "scripts": {"preinstall": f"echo {MARKER}", "postinstall": f"echo {MARKER}"}})
HOSTILE_TSCONFIG = json.dumps({"compilerOptions": {"plugins": [{"name": "evil"}], "noImplicitAny": False}})
# Typechecks only by declaring the invented API itself, and by switching the checker off.
FORGED = INVENTED.replace('import { Result, ResultAsync } from "neverthrow";', '''import { Result, ResultAsync } from "neverthrow";
declare module "neverthrow" {
  namespace Result { function tryCatch(f: () => unknown): any; }
}''').replace(".tapError(log);", "// @ts-ignore\n    .tapError(log);")
# The agent "fixes" the package instead of its code: an invented method added to the installed declarations.
PATCH_DECLARATIONS = ("sed -i 's/^declare namespace Result {/declare namespace Result {\\n    function tryCatch(f: () => unknown): any;/' "
                      "{workspace}/node_modules/neverthrow/dist/index.d.ts")


def arm(name: str, command: str) -> list[str]:
    return ["--arm", f"{name}=agent:command,agent_cmd:{command}"]


def results(label: Path) -> dict[str, dict]:
    return {p.parents[1].name: json.loads(p.read_text()) for p in sorted(label.glob("ts-user-import/*/trial-1/result.json"))}


def test_oracle_passes_null_fails_and_the_record_names_the_package(docker_client, bench, tmp_path):
    bench("run", "ts-user-import", "--arm", "oracle=agent:oracle", "--arm", "null=agent:null", "--label", "ts",
          check_rc=1)
    found = results(tmp_path / "results/ts")
    assert found["oracle"]["verdict"] == "PASS", found["oracle"]["reason"]
    assert found["null"]["verdict"] == "FAIL"
    assert "no file imports neverthrow" in found["null"]["reason"]
    check = found["oracle"]["checks"][0]
    assert check["kind"] == "compile" and check["diagnostics"] == [] and check["files"] == ["solution.ts"]
    assert check["package"] == {"name": "neverthrow", "version": "8.2.0", "tarball_sha256":
                                "b41376fd67e570783784f530ed738ab22d142cc2396544bafb1e9d56d43d08a2"}
    assert check["detail"].startswith("mechanicalStatus: pass")
    bench("verify-provenance", str(tmp_path / "results/ts"), check_rc=0)


def test_hostile_submissions_are_read_never_run_and_never_trusted(docker_client, bench, tmp_path):
    link_entry = "cd {workspace} && echo 'export {}' > real.ts && rm solution.ts && ln -s real.ts solution.ts"
    bench("run", "ts-user-import",
          *arm("never-run", writes("solution.ts", NEVER_RUN) + " && " + writes("package.json", HOSTILE_PACKAGE)
               + " && " + writes("tsconfig.json", HOSTILE_TSCONFIG)),
          *arm("link", link_entry),
          *arm("forged", writes("solution.ts", FORGED)),
          *arm("patched", PATCH_DECLARATIONS + " && " + writes("solution.ts", INVENTED)),
          "--label", "hostile", "--timeout", "120")
    label = tmp_path / "results/hostile"
    found = results(label)
    assert found["never-run"]["verdict"] == "PASS", found["never-run"]["reason"]  # it would never have returned
    gate_log = (label / "ts-user-import/never-run/trial-1/gate.log").read_text()
    assert MARKER not in gate_log.replace(f'"{MARKER}"', "")  # printed by no one (its source may be quoted)
    assert found["link"]["verdict"] == "FAIL"
    assert "must be a regular file, never a symlink" in found["link"]["reason"]
    forged = found["forged"]["checks"][0]["diagnostics"]
    assert found["forged"]["verdict"] == "FAIL"
    assert {d["code"] for d in forged} >= {"bench-declare-module", "bench-directive"}
    patched = found["patched"]["checks"][0]["diagnostics"]
    assert found["patched"]["verdict"] == "FAIL"  # graded against the tarball's declarations, not the agent's copy
    assert [(d["code"], d["file"], d["line"]) for d in patched][:1] == [("TS2339", "solution.ts", 15)]
    assert "tryCatch" in patched[0]["message"] and "/tmp" not in json.dumps(patched)  # no temp path in a record


def test_the_four_reference_answers_give_their_expected_verdicts(docker_client, bench, tmp_path):
    """Assessed solution, invented API, this version's declarations only, multi-file TSX: the gate itself is tested."""
    done = bench("cases", "check-answers", "ts-user-import", "--label", "answers", check_rc=0)
    label = tmp_path / "results/answers/ts-user-import"
    verdicts = {p.parents[1].name: json.loads(p.read_text()) for p in sorted(label.glob("*/trial-1/result.json"))}
    assert {name: r["verdict"] for name, r in verdicts.items()} == {
        "invented-api": "FAIL", "multi-file-tsx": "PASS", "valid-assessed": "PASS", "version-specific": "PASS"}
    assert verdicts["valid-assessed"]["assessment_status"] == "pass" and verdicts["valid-assessed"]["ok"] is True
    assert verdicts["multi-file-tsx"]["checks"][0]["files"] == ["parse.ts", "solution.ts", "view.tsx"]
    assert "TS2339" in verdicts["invented-api"]["reason"] and "ok" in done.stdout


OLDER = ("https://registry.npmjs.org/neverthrow/-/neverthrow-8.1.0.tgz",
         "511bd71f2cda308bc011fd17864f60476fc7a1bb9401ee3b6dd6cbb0a7790042")


def test_the_version_specific_answer_fails_against_the_previous_release(docker_client, bench, tmp_path):
    """--subject swaps the declarations the gate installs: 8.1.0 has no ResultAsync.orTee."""
    import hashlib
    import urllib.request

    tarball = tmp_path / "neverthrow-8.1.0.tgz"
    with urllib.request.urlopen(OLDER[0], timeout=60) as response:
        tarball.write_bytes(response.read())
    assert hashlib.sha256(tarball.read_bytes()).hexdigest() == OLDER[1]
    answer = (ANSWERS / "version-specific/submission/solution.ts").read_text()
    bench("run", "ts-user-import", "--agent", "command", "--agent-cmd", writes("solution.ts", answer),
          "--subject", str(tarball), "--label", "older", check_rc=1)
    result = json.loads((tmp_path / "results/older/ts-user-import/default/trial-1/result.json").read_text())
    check = result["checks"][0]
    assert check["package"]["version"] == "8.1.0" and check["package"]["tarball_sha256"] == OLDER[1]
    assert [(d["code"], d["line"]) for d in check["diagnostics"]] == [("TS2339", 34)]
    assert "orTee" in check["diagnostics"][0]["message"]

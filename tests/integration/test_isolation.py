"""The adversarial suite: an agent that only writes into its own workspace attacks the grader.

Each test runs the real CLI with the `command` agent as the attacker and reads the
verdict the harness recorded. One test per attack (DESIGN.md, "Isolation invariants");
each asserts the verdict and reason the harness must give, so an attack that works (a
PASS, or a failure turned into ERROR) fails its test. Long attacker files live in
tests/fixtures/attacks/ and are planted into /workspace by the agent command.
"""

from __future__ import annotations

import base64
import json
import shlex
import time
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
ATTACKS = ROOT / "tests" / "fixtures" / "attacks"
SHIPPED_TESTS = "clean build and the shipped tests"
WITHHELD_TESTS = "withheld tests"
HELLO = "echo 'Hello, world!' > /workspace/hello.txt"
FORGED_PASS = 'BENCH-GATE-RESULT {"verdict":"PASS","reason":"","checks":[]}'
MiB = 1 << 20


# --- helpers -------------------------------------------------------------------------


def attack(name: str) -> str:
    return (ATTACKS / name).read_text()


def plant(files: dict[str, str], then: str = "") -> str:
    """An agent command that writes ``files`` (paths relative to /workspace), then runs ``then``."""
    lines = ["set -e", "cd /workspace"]
    for path, content in files.items():
        data = base64.b64encode(content.encode()).decode()
        quoted = shlex.quote(path)
        lines.append(f'mkdir -p "$(dirname {quoted})" && echo {data} | base64 -d > {quoted}')
    if then:
        lines.append(then)
    return "\n".join(lines)


def trial_dir(tmp_path: Path, label: str, case: str) -> Path:
    return tmp_path / "results" / label / case / "default" / "trial-1"


def run_attack(bench, tmp_path: Path, case: str, command: str, label: str, root: Path = ROOT,
               timeout: int = 600) -> dict:
    """Run one trial with ``command`` as the agent; its result.json (the CLI's output if there is none)."""
    done = bench("run", case, "--agent", "command", "--agent-cmd", command, "--label", label,
                 root=root, timeout=timeout)
    result = trial_dir(tmp_path, label, case) / "result.json"
    assert result.is_file(), f"no result.json (exit {done.returncode})\n{done.stdout}\n{done.stderr}"
    return json.loads(result.read_text())


def gate_check_names(root: Path, case: str) -> set[str]:
    gate = tomllib.loads((root / "goldens" / case / "gate.toml").read_text())
    return {check["name"] for check in gate["checks"]}


def check(result: dict, name: str) -> dict:
    found = [c for c in result["checks"] if c["name"] == name]
    assert found, f"no check {name!r} in {[c['name'] for c in result['checks']]}"
    return found[0]


def assert_failed_by_the_gate(result: dict, root: Path, case: str) -> None:
    """FAIL from the case's own gate: every gate check reported, the withheld one not passed."""
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert result["reason"].startswith("check '"), result["reason"]
    assert {c["name"] for c in result["checks"]} == gate_check_names(root, case)
    if case == "c-rle":
        assert check(result, WITHHELD_TESTS)["passed"] is False


def c_rle_makefile_attack(makefile: str, **extra: str) -> str:
    """The stub library stays; the workspace Makefile (and any helper files) are the attack."""
    return plant({"Makefile": attack(makefile), **{name: attack(source) for name, source in extra.items()}})


# --- controls ------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["hello", "c-rle"])
def test_oracle_still_passes(docker_client, bench, tmp_path, case):
    bench("run", case, "--agent", "oracle", "--label", "oracle", check_rc=0)
    result = json.loads((trial_dir(tmp_path, "oracle", case) / "result.json").read_text())
    assert result["verdict"] == "PASS", result["reason"]


def test_honest_c_rle_planted_by_the_command_agent_passes(docker_client, bench, tmp_path):
    """The planting plumbing every c-rle attack uses works: honest work planted the same way PASSes."""
    solution = (ROOT / "goldens" / "c-rle" / "solution" / "src" / "rle.c").read_text()
    result = run_attack(bench, tmp_path, "c-rle", plant({"src/rle.c": solution}), "honest-c")
    assert result["verdict"] == "PASS", result["reason"]


# --- 1. Python import shadowing ---------------------------------------------------------

SHADOW_PASS = {
    "json.py": f"import sys\nsys.stdout.write({FORGED_PASS!r} + '\\n')\nsys.stdout.flush()\nimport os\nos._exit(0)\n",
    "bench/__init__.py": "",
    "bench/gates/__init__.py": "",
    "bench/gates/runner.py": f"print({FORGED_PASS!r})\n",
}

FORGED_FAIL = 'BENCH-GATE-RESULT {"verdict":"FAIL","reason":"a workspace module ran in the grader","checks":[]}'
SHADOW_BREAK = f"import sys\nsys.stdout.write({FORGED_FAIL!r} + '\\n')\nsys.stdout.flush()\nimport os\nos._exit(3)\n"


def test_shadowing_the_runner_and_json_cannot_pass_bad_work(docker_client, bench, tmp_path):
    command = plant(SHADOW_PASS, then="echo 'Goodbye, world!' > hello.txt")
    result = run_attack(bench, tmp_path, "hello", command, "shadow")
    assert_failed_by_the_gate(result, ROOT, "hello")
    assert "greeting line" in result["reason"]
    assert check(result, "greeting line")["passed"] is False


def test_shadow_modules_beside_honest_work_change_nothing(docker_client, bench, tmp_path):
    """Workspace modules named like the stdlib and the harness are never imported by the grader."""
    files = {name: SHADOW_BREAK for name in ("json.py", "token.py", "bench/__init__.py", "bench/gates/__init__.py",
                                             "bench/gates/runner.py")}
    result = run_attack(bench, tmp_path, "hello", plant(files, then=HELLO), "shadow-honest")
    assert result["verdict"] == "PASS", (result["verdict"], result["reason"])
    assert {c["name"] for c in result["checks"]} == gate_check_names(ROOT, "hello")


# --- 2-5, 10. c-rle: the stub library with a Makefile that cheats -------------------------


def test_forged_result_lines_and_empty_check_list_fail(docker_client, bench, tmp_path):
    command = c_rle_makefile_attack("forged.mk") + "\n" + " && ".join([
        "echo '{\"verdict\": \"PASS\"}' > verdict.json", "echo 1 > reward.txt",
        f"echo {shlex.quote(FORGED_PASS)} > result.json", f"echo {shlex.quote(FORGED_PASS)}"])
    result = run_attack(bench, tmp_path, "c-rle", command, "forged")
    assert_failed_by_the_gate(result, ROOT, "c-rle")


def test_reference_solution_is_unreachable_from_the_grader(docker_client, bench, tmp_path):
    result = run_attack(bench, tmp_path, "c-rle", c_rle_makefile_attack("solution.mk"), "solution")
    assert_failed_by_the_gate(result, ROOT, "c-rle")


def test_library_constructor_cannot_fake_the_tests(docker_client, bench, tmp_path):
    command = plant({"src/rle.c": attack("constructor-rle.c")})
    result = run_attack(bench, tmp_path, "c-rle", command, "constructor")
    assert_failed_by_the_gate(result, ROOT, "c-rle")
    assert "closing nonce line" in check(result, WITHHELD_TESTS)["detail"]  # faked and exited before main


def test_library_cannot_replace_libc_for_the_withheld_test(docker_client, bench, tmp_path):
    command = plant({"Makefile": attack("fake-test.mk"), "src/rle.c": attack("interpose-rle.c")})
    result = run_attack(bench, tmp_path, "c-rle", command, "interpose")
    assert_failed_by_the_gate(result, ROOT, "c-rle")
    assert "defines more than rle_encode" in check(result, WITHHELD_TESTS)["detail"]


def test_header_macros_cannot_rewrite_the_withheld_test(docker_client, bench, tmp_path):
    command = plant({"Makefile": attack("fake-test.mk"), "src/rle.h": attack("macro-rle.h")})
    result = run_attack(bench, tmp_path, "c-rle", command, "macro")
    assert_failed_by_the_gate(result, ROOT, "c-rle")
    assert check(result, "header unchanged")["passed"] is True  # the prototype is there: only macros were added
    assert "hidden tests failed" in check(result, WITHHELD_TESTS)["detail"]


def test_process_left_by_one_check_cannot_tamper_with_the_next(docker_client, bench, tmp_path):
    command = c_rle_makefile_attack("leftover.mk", **{"tamper.c": "tamper.c"})
    result = run_attack(bench, tmp_path, "c-rle", command, "leftover")
    assert_failed_by_the_gate(result, ROOT, "c-rle")


def test_grader_files_cannot_be_overwritten_into_a_pass(docker_client, bench, tmp_path):
    command = c_rle_makefile_attack("grader-files.mk", **{"overwrite.sh": "overwrite.sh"})
    result = run_attack(bench, tmp_path, "c-rle", command, "grader-files")
    assert_failed_by_the_gate(result, ROOT, "c-rle")


# --- 6. killing or flooding the grader is the agent's FAIL, naming the check ---------------


def test_killing_the_grader_is_fail_naming_the_check(docker_client, bench, tmp_path):
    result = run_attack(bench, tmp_path, "c-rle", c_rle_makefile_attack("kill.mk"), "kill")
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert SHIPPED_TESTS in result["reason"]


def test_flooding_the_grader_is_fail_naming_the_check_and_the_budget(docker_client, bench, tmp_path):
    result = run_attack(bench, tmp_path, "c-rle", c_rle_makefile_attack("flood.mk"), "flood")
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert SHIPPED_TESTS in result["reason"]
    assert "output budget" in result["reason"]


# --- 7-9. trial budgets: FAIL naming the budget, records complete ---------------------------


def test_disk_budget(docker_client, bench, tmp_path):
    command = f"dd if=/dev/zero of=/tmp/fill bs=1M count=2048; {HELLO}"
    result = run_attack(bench, tmp_path, "hello", command, "disk")
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert "disk budget" in result["reason"]


def test_transcript_budget(docker_client, bench, tmp_path):
    command = f"head -c 1073741824 /dev/zero | tr '\\0' a; {HELLO}"
    result = run_attack(bench, tmp_path, "hello", command, "transcript")
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert "transcript budget" in result["reason"]
    transcript = trial_dir(tmp_path, "transcript", "hello") / "transcript.log"
    assert transcript.stat().st_size <= 64 * MiB + MiB
    bench("verify-provenance", str(tmp_path / "results" / "transcript"), check_rc=0)


def test_export_budget(docker_client, bench, tmp_path):
    command = f"dd if=/dev/zero of=/workspace/big bs=1M count=300; {HELLO}"
    started = time.monotonic()
    result = run_attack(bench, tmp_path, "hello", command, "export")
    elapsed = time.monotonic() - started
    assert result["verdict"] == "FAIL", (result["verdict"], result["reason"])
    assert "export budget" in result["reason"]
    assert elapsed < 60, f"bench run took {elapsed:.0f} s"  # a sanity bound, not a speed target
    # no container remains: the autouse no_leftover_containers fixture checks it

"""The Allium cases on the real engine: oracle and null, mutated outputs, plugin arms, the false-positive floor.

Mutated outputs come from the `command` agent: the test mutates the reference
solution on the host and the agent writes it into its workspace (base64, so no
quoting), exactly where an agent's own work would be; the grader then scores the
exported tar like any other. Each expected number is worked out by hand beside it.
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from bench.fixtures import fixture_hash

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "goldens/distill-courier/solution/spec/courier.allium").read_text()
FINDINGS = (ROOT / "goldens/weed-courier/solution/weed-findings.md").read_text()
INVENTED = ["\n## Webhook signatures\nThe spec says carrier webhooks are signed; the code never checks a signature.\n",
            "\n## Quiet hours\nThe spec forbids deliveries after 21:00; the code has no such rule.\n"]


def writes(path: str, text: str) -> str:
    """A `command` agent that writes ``text`` to ``path`` in its workspace (base64: no quotes, no commas)."""
    folder = posixpath.dirname(path)
    mkdir = f"mkdir -p {{workspace}}/{folder} && " if folder else ""
    return f"{mkdir}echo {base64.b64encode(text.encode()).decode()} | base64 -d > {{workspace}}/{path}"


def arm(name: str, path: str, text: str) -> list[str]:
    return ["--arm", f"{name}=agent:command,agent_cmd:{writes(path, text)}"]


def results(label: Path) -> dict[str, dict]:
    return {f"{p.parents[2].name}/{p.parents[1].name}": json.loads(p.read_text())
            for p in sorted(label.glob("*/*/trial-1/result.json"))}


def check(result: dict) -> dict:
    return result["checks"][0]


def without_block(text: str, header: str) -> str:
    """The spec without one top-level block (its header line through the closing brace)."""
    return re.sub(rf"\n{re.escape(header)} \{{\n.*?\n\}}\n", "\n", text, count=1, flags=re.S)


def test_oracle_passes_and_null_fails_both_cases(docker_client, bench, tmp_path):
    bench("run", "distill-courier", "weed-courier", "--arm", "oracle=agent:oracle", "--arm", "null=agent:null",
          "--label", "on", check_rc=1)  # the null arm FAILs
    label = tmp_path / "results/on"
    found = results(label)
    assert {key: r["verdict"] for key, r in found.items()} == {
        "distill-courier/null": "FAIL", "distill-courier/oracle": "PASS",
        "weed-courier/null": "FAIL", "weed-courier/oracle": "PASS"}
    assert found["distill-courier/null"]["reason"] == \
        "check 'spec quality' failed: no spec/courier.allium nor any .allium file in the workspace (as a regular file)"
    assert found["weed-courier/null"]["reason"] == \
        "check 'divergences' failed: no weed-findings.md in the workspace (as a regular file)"
    distill, weed = check(found["distill-courier/oracle"]), check(found["weed-courier/oracle"])
    assert distill["metrics"]["entity_recall"] == distill["metrics"]["rule_recall"] == 1.0
    assert distill["metrics"]["confabulations"] == distill["metrics"]["exclusion_violations"] == 0.0
    assert distill["decider"] == "harness-parser" and distill["directions"]["confabulations"] == "lower"
    assert weed["metrics"] == {"divergence_recall": 1.0, "false_positive_count": 0.0}
    assert max(c["duration_s"] for r in found.values() for c in r["checks"]) < 1.0  # scoring, on the host
    _the_fixture_is_recorded_and_laid_in_the_workspace(label)


def _the_fixture_is_recorded_and_laid_in_the_workspace(label: Path) -> None:
    digest = fixture_hash(ROOT, "courier")
    assert json.loads((label / "summary.json").read_text())["fixtures"] == {"courier": digest}
    provenance = json.loads((label / "weed-courier/null/trial-1/provenance.json").read_text())
    assert (provenance["case"]["fixture"], provenance["case"]["fixture_hash"]) == ("courier", digest)
    with tarfile.open(label / "weed-courier/null/trial-1/workspace.tar") as archive:
        names = set(archive.getnames())
        planted = archive.extractfile("workspace/spec/courier.allium").read()
    assert {"workspace/courier/models/parcel.py", "workspace/courier/tasks.py", "workspace/README.md"} <= names
    assert planted == (ROOT / "cases/weed-courier/workspace/spec/courier.allium").read_bytes()
    assert not [n for n in names if n.endswith(("divergences.toml", "manifest.toml", "gate.toml"))]


def test_mutated_specs_fail_on_the_named_metric(docker_client, bench, tmp_path):
    spec = "spec/courier.allium"
    no_attempt = without_block(SPEC, "entity DeliveryAttempt")
    lost = SPEC.replace("| failed_attempt | returned\n", "| failed_attempt | returned | lost\n", 1)
    redis = SPEC.replace("    requires: driver.on_shift\n", "    requires: driver.on_shift\n    requires: redis_lock.held\n", 1)
    assert len({SPEC, no_attempt, lost, redis}) == 4
    bench("run", "distill-courier", "--agent", "command", *arm("no-entity", spec, no_attempt),
          *arm("lost-state", spec, lost), *arm("redis-rule", spec, redis), "--label", "mutants", check_rc=1)
    found = results(tmp_path / "results/mutants")
    assert {r["verdict"] for r in found.values()} == {"FAIL"}
    # Parcel, PickupRequest, Driver, DeliveryAttempt and the external Customer: 4 of 5 found
    entity = check(found["distill-courier/no-entity"])
    assert entity["metrics"]["entity_recall"] == pytest.approx(4 / 5)
    assert found["distill-courier/no-entity"]["reason"] == "check 'spec quality' failed: entity_recall 0.8 < 1"
    # one enum value the code never sets, on a matched entity: one confabulation, every real state still found
    state = check(found["distill-courier/lost-state"])
    assert (state["metrics"]["confabulations"], state["metrics"]["state_recall"]) == (1.0, 1.0)
    assert state["review"]["confabulated"] == ["Parcel: state 'lost' is not in the code"]
    assert found["distill-courier/lost-state"]["reason"] == "check 'spec quality' failed: confabulations 1 > 0"
    # one normative word starting with the forbidden term 'redis'; the rule itself still matches
    leak = check(found["distill-courier/redis-rule"])
    assert (leak["metrics"]["exclusion_violations"], leak["metrics"]["rule_recall"]) == (1.0, 1.0)
    assert found["distill-courier/redis-rule"]["reason"] == \
        "check 'spec quality' failed: exclusion_violations 1 > 0"


def test_mutated_findings_fail_on_the_named_metric_and_compare_floors_false_positives(docker_client, bench, tmp_path):
    report = "weed-findings.md"
    sections = re.split(r"(?=^## )", FINDINGS, flags=re.M)
    missed = "".join(s for s in sections if not s.startswith(("## Guard drift", "## Aspirational guard")))
    bench("run", "weed-courier", "--agent", "command", *arm("exact", report, FINDINGS),
          *arm("missed-two", report, missed), *arm("invented-two", report, FINDINGS + "".join(INVENTED)),
          *arm("invented-one", report, FINDINGS + INVENTED[0]), "--label", "weeds", check_rc=1)
    found = results(tmp_path / "results/weeds")
    assert {k: r["verdict"] for k, r in found.items()} == {
        "weed-courier/exact": "PASS", "weed-courier/invented-one": "PASS",  # at most 1 false positive
        "weed-courier/invented-two": "FAIL", "weed-courier/missed-two": "FAIL"}
    # 6 planted, 4 found
    assert check(found["weed-courier/missed-two"])["metrics"] == {"divergence_recall": pytest.approx(4 / 6),
                                                                  "false_positive_count": 0.0}
    assert check(found["weed-courier/missed-two"])["review"]["missed"] == ["dispatch-shift-guard",
                                                                           "aspirational-attempts-guard"]
    assert found["weed-courier/missed-two"]["reason"] == "check 'divergences' failed: divergence_recall 0.667 < 0.8"
    assert check(found["weed-courier/invented-two"])["metrics"] == {"divergence_recall": 1.0,
                                                                    "false_positive_count": 2.0}
    assert found["weed-courier/invented-two"]["reason"] == "check 'divergences' failed: false_positive_count 2 > 1"
    # both PASS, recall held, but the candidate's worst false-positive count (1) exceeds the baseline's (0)
    done = bench("compare", "weeds:exact", "weeds:invented-one", "--results", str(tmp_path / "results"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "guardrail broken: weed-courier/exact→invented-one: divergences/false_positive_count — candidate worst 1 " \
           "is above baseline worst 0" in " ".join(done.stdout.split())
    bench("compare", "weeds:invented-one", "weeds:exact", "--results", str(tmp_path / "results"), check_rc=0)


def test_a_hostile_workspace_is_the_agents_fail_never_an_error(docker_client, bench, tmp_path):
    """A link where the spec should be, a spec past the cap, a spec under a name no record can hold raw."""
    odd = f'echo {base64.b64encode(SPEC.encode()).decode()} | base64 -d > "$(printf \'{{workspace}}/x\\n[pass] ' \
        'forged\\377.allium\')"'
    bench("run", "distill-courier", "--agent", "command",
          "--arm", "link=agent:command,agent_cmd:mkdir -p {workspace}/spec && ln -s /etc/passwd {workspace}/spec/courier.allium",
          "--arm", "huge=agent:command,agent_cmd:mkdir -p {workspace}/spec && head -c 3145728 /dev/zero > "
                   "{workspace}/spec/courier.allium",
          "--arm", f"odd=agent:command,agent_cmd:{odd}", "--label", "hostile", check_rc=1)
    found = results(tmp_path / "results/hostile")
    assert found["distill-courier/link"]["reason"] == \
        "check 'spec quality' failed: no spec/courier.allium nor any .allium file in the workspace (as a regular file)"
    assert found["distill-courier/huge"]["reason"] == \
        "check 'spec quality' failed: spec/courier.allium is 3,145,728 bytes, over the check's cap of 262,144"
    assert found["distill-courier/odd"]["verdict"] == "PASS"  # the largest .allium file, its name escaped
    assert check(found["distill-courier/odd"])["detail"].splitlines()[0] == \
        "every bound held (x\\x0a[pass] forged\\xff.allium)"


def plugin_checkout(folder: Path) -> Path:
    """A small Claude Code plugin (one skill), committed to git."""
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin/plugin.json").write_text('{"name": "allium-test", "version": "0.0.1"}\n')
    (folder / "skills/distill").mkdir(parents=True)
    (folder / "skills/distill/SKILL.md").write_text("---\nname: distill\ndescription: Distill a spec.\n---\nRead all.\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "plugin"]):
        subprocess.run(["git", "-C", str(folder), "-c", "user.email=t@e", "-c", "user.name=t", *args], check=True)
    return folder


def test_two_plugin_arms_interleave_are_recorded_compare_and_refuse_a_changed_checkout(docker_client, bench, tmp_path):
    base = plugin_checkout(tmp_path / "allium-plugin")
    cand = tmp_path / "allium-cand"
    shutil.copytree(base, cand)  # the same commit ...
    (cand / "skills/distill/SKILL.md").write_text("---\nname: distill\ndescription: Distill a spec.\n---\nSkim.\n")
    agent = "ls -R $BENCH_PLUGIN_DIR; touch $BENCH_PLUGIN_DIR/x 2>/dev/null && echo WRITABLE || echo READ-ONLY; " + \
        writes("spec/courier.allium", SPEC)
    args = ["run", "distill-courier", "--agent", "command", "--agent-cmd", agent, "--arm", f"base=plugin:{base}",
            "--arm", "cand=plugin:../allium-cand", "--trials", "2", "--concurrency", "1", "--label", "plugins"]
    (tmp_path / "work").mkdir()
    bench(*args, check_rc=0, cwd=tmp_path / "work")
    label = tmp_path / "work/results/plugins"
    trials = [json.loads(p.read_text()) for p in label.glob("distill-courier/*/trial-*/result.json")]
    assert [f"{r['arm']}-{r['trial']}" for r in sorted(trials, key=lambda r: r["started_at"])] == \
        ["base-1", "cand-1", "base-2", "cand-2"]
    assert {r["verdict"] for r in trials} == {"PASS"}
    plugins = {a: json.loads((label / f"distill-courier/{a}/trial-1/provenance.json").read_text())["plugin"]
               for a in ("base", "cand")}
    assert plugins["base"]["tarball_sha256"] != plugins["cand"]["tarball_sha256"]
    assert plugins["base"]["source_sha"] == plugins["cand"]["source_sha"]  # ... one file of it changed, uncommitted
    assert (plugins["base"]["dirty"], plugins["cand"]["dirty"]) == (False, True)
    assert plugins["cand"]["origin"] == str(cand)
    transcript = (label / "distill-courier/cand/trial-1/transcript.log").read_text()
    assert "SKILL.md" in transcript and "READ-ONLY" in transcript and "WRITABLE" not in transcript
    done = bench("compare", "plugins:base", "plugins:cand", "--results", str(label.parent), "--json", check_rc=0)
    pair = json.loads(done.stdout)["comparisons"][0]
    assert (pair["baseline_arm"], pair["candidate_arm"], pair["pairs"]) == ("base", "cand", 2)
    (cand / "skills/distill/SKILL.md").write_text("edited between runs\n")
    refused = bench(*args[:-2], "--trials", "3", "--label", "plugins", cwd=tmp_path / "work")
    assert refused.returncode == 2
    assert f"distill-courier plugins.cand: recorded {plugins['cand']['tarball_sha256']}, now " in refused.stderr
    assert not (label / "distill-courier/cand/trial-3").exists()


def test_claude_code_loads_the_plugin_from_its_read_only_copy(docker_client, bench, tmp_path):
    plugin = plugin_checkout(tmp_path / "allium-plugin")
    script = tmp_path / "look.toml"
    script.write_text('[[turns]]\ntext = "Looking."\ntool = "Bash"\n'
                      'input = { command = "touch /opt/bench/plugin/x || echo READ-ONLY", description = "Try" }\n'
                      '[[turns]]\ntext = "Done."\n')
    bench("run", "hello", "--agent", "claude-code", "--model-script", str(script), "--arm", f"plug=plugin:{plugin}",
          "--label", "cc", check_rc=1)  # hello.txt is never written: FAIL
    events = [json.loads(line) for line in
              (tmp_path / "results/cc/hello/plug/trial-1/transcript.jsonl").read_text().splitlines()]
    init = events[0]
    assert {"name": "allium-test", "path": "/opt/bench/plugin"}.items() <= next(
        p for p in init["plugins"] if p["name"] == "allium-test").items()
    assert "allium-test:distill" in init["slash_commands"]
    assert "READ-ONLY" in json.dumps(events) and "Permission denied" in json.dumps(events)

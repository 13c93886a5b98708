"""The Allium check kinds wired into cases and grading: gate fields, fixtures, validators, and hostile workspaces.

The scorers themselves are tested in test_allium_*.py; here the tests drive what the
harness adds around them: a gate that names a manifest and overrides bounds, a case
built on a shared fixture, `bench cases validate` on golden data, and the host-side
reader of the workspace tar, fed tars no honest export would produce.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from bench.cases import load_case, validate_all
from bench.errors import CaseError
from bench.gatespec import GateSpec
from bench.grading import GradeContext, grade
from bench.grading.allium import read_artifact
from bench.models import Limits
from bench.paths import Project
from bench.staging import stage_layers

ROOT = Path(__file__).resolve().parents[2]
ORACLE_SPEC = (ROOT / "goldens/distill-courier/solution/spec/courier.allium").read_bytes()
ORACLE_FINDINGS = (ROOT / "goldens/weed-courier/solution/weed-findings.md").read_bytes()


def workspace_tar(path: Path, members: list[tuple]) -> Path:
    """A tar as an export would lay it (workspace/...), from (name, bytes) files and (name, kind, target) links."""
    with tarfile.open(path, "w") as archive:
        for member in members:
            info = tarfile.TarInfo(member[0])
            if len(member) == 3:
                info.type, info.linkname = member[1], member[2]
                archive.addfile(info)
            elif member[1] is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            else:
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))
    return path


def graded(tmp_path: Path, case_id: str, members: list[tuple], project: Path = ROOT, gate: GateSpec | None = None):
    case = load_case(Project(project), case_id)
    ctx = GradeContext(sandboxes=None, labels=lambda role: {}, image="", limits=Limits(), goldens=case.goldens_dir,
                       workspace_tar=workspace_tar(tmp_path / "w.tar", members), gate_log=tmp_path / "gate.log",
                       artifacts=tmp_path / "artifacts", wheel=tmp_path / "wheel")
    return grade(ctx, gate or case.gate)


# --- gate.toml ------------------------------------------------------------------------


def test_the_kinds_default_their_manifest_and_keep_only_the_bounds_a_gate_sets():
    gate = GateSpec.model_validate({"checks": [{"kind": "allium-distill", "name": "d", "thresholds": {"rule_recall": 0.5}},
                                               {"kind": "allium-weed", "name": "w"}]})
    distill, weed = gate.checks
    assert (distill.manifest, weed.manifest, weed.thresholds) == ("manifest.toml", "divergences.toml", None)
    assert distill.thresholds.model_dump(exclude_unset=True) == {"rule_recall": 0.5}


@pytest.mark.parametrize("check, problem", [
    ({"manifest": "solution/spec/courier.allium"}, "the reference solution and gate.toml never reach a grader"),
    ({"manifest": "../distill-courier/manifest.toml"}, "is not a plain path relative to goldens/<case>/"),
    ({"path": "/etc/passwd"}, "is not a file path inside the workspace"),
    ({"thresholds": {"recall": 1}}, "Extra inputs are not permitted"),
    ({"max_kb": 0}, "greater than or equal to 1"),
])
def test_bad_allium_checks_are_refused(check, problem):
    with pytest.raises(ValidationError, match=problem):
        GateSpec.model_validate({"checks": [{"kind": "allium-weed", "name": "w", **check}]})


def test_a_missing_manifest_names_the_gate_field(project):
    (project / "goldens/weed-courier/divergences.toml").rename(project / "goldens/weed-courier/elsewhere.toml")
    with pytest.raises(CaseError, match=r"field 'checks.0.manifest': 'divergences.toml' does not exist"):
        load_case(Project(project), "weed-courier")


# --- the fixture ----------------------------------------------------------------------


def test_the_fixture_is_laid_first_and_the_case_workspace_over_it():
    case = load_case(Project(ROOT), "weed-courier")
    layers, files = stage_layers(case, "default")
    assert layers == [("workspace", ROOT / "cases/_fixtures/courier"), ("workspace", ROOT / "cases/weed-courier/workspace")]
    assert list(files) == ["task/PROMPT.md"]
    assert not (ROOT / "goldens/weed-courier/planted.allium").exists()  # the agent's file lives with the case


def test_the_fixture_hash_is_recorded_and_part_of_the_visible_hash(project):
    case = load_case(Project(project), "distill-courier")
    before = case.record()
    assert before.fixture == "courier" and before.fixture_hash == case.fixture.digest()
    (project / "cases/_fixtures/courier/courier/tasks.py").write_text("# changed\n")
    after = case.record()
    assert after.fixture_hash != before.fixture_hash and after.visible_hash != before.visible_hash
    assert after.goldens_hash == before.goldens_hash


def test_an_unknown_fixture_is_a_case_error(project):
    toml = project / "cases/distill-courier/case.toml"
    toml.write_text(toml.read_text().replace('fixture = "courier"', 'fixture = "parcels"'))
    with pytest.raises(CaseError, match=r"field 'fixture': unknown fixture 'parcels'.*known fixtures: courier"):
        load_case(Project(project), "distill-courier")


# --- bench cases validate ---------------------------------------------------------------


def test_validate_prints_warnings_and_fails_on_errors(project, bench):
    done = bench("cases", "validate", root=project, check_rc=0)
    assert "warn weed-courier: goldens/weed-courier/divergences.toml: field 'judgement call sms-flagged-off': term 'sms' "\
        "is shorter than 4 letters" in done.stdout
    assert "ok   weed-courier" in done.stdout and "ok   distill-courier" in done.stdout
    planted = project / "cases/weed-courier/workspace/spec/courier.allium"
    planted.write_text(planted.read_text() + "\nentity Broken {\n")
    done = bench("cases", "validate", root=project)
    assert done.returncode == 2
    assert "bad  weed-courier: goldens/weed-courier/divergences.toml: field 'planted spec': line " in done.stdout
    assert "never closed" in done.stdout


def test_a_manifest_for_another_fixture_and_a_state_not_in_the_code_are_errors(project):
    manifest = project / "goldens/distill-courier/manifest.toml"
    manifest.write_text(manifest.read_text().replace('"failed_attempt", "returned"]', '"failed_attempt", "returned", '
                                                     '"teleported"]', 1))
    (project / "cases/_fixtures/other").mkdir()
    toml = project / "cases/distill-courier/case.toml"
    toml.write_text(toml.read_text().replace('fixture = "courier"', 'fixture = "other"'))
    problem = dict(validate_all(Project(project)))["distill-courier"]
    assert "field 'check 'spec quality'': manifest.toml describes fixture 'courier', but case.toml names 'other'" \
        in problem
    assert "manifest.toml: field 'Parcel.teleported': appears nowhere in the fixture's code" in problem


# --- grading on the host ----------------------------------------------------------------


def test_the_oracle_spec_passes_with_every_metric_its_direction_and_the_decider(tmp_path):
    outcome = graded(tmp_path, "distill-courier", [("workspace/spec/courier.allium", ORACLE_SPEC)])
    check = outcome.checks[0]
    assert outcome.verdict.value == "PASS" and check.kind == "allium-distill"
    assert check.metrics["entity_recall"] == 1.0 and check.directions["entity_recall"] == "higher"
    assert check.directions["confabulations"] == "lower" and check.bounds["confabulations"] == 0
    assert check.bounds["rule_recall"] == 0.8 and "boundary_recall" not in check.bounds  # reported, not gated
    assert check.decider == "harness-parser"
    assert "[pass] spec quality (allium-distill)" in (tmp_path / "gate.log").read_text()


def test_a_gate_bound_overrides_the_manifest_and_leaves_the_rest(tmp_path):
    missing_rules = ORACLE_SPEC.replace(b"rule ", b"-- rule ")  # every rule block commented out
    strict = graded(tmp_path, "distill-courier", [("workspace/spec/courier.allium", missing_rules)])
    assert strict.verdict.value == "FAIL" and "rule_recall 0 < 0.8" in strict.reason
    lenient = GateSpec.model_validate({"checks": [{"kind": "allium-distill", "name": "spec quality",
                                                   "thresholds": {"rule_recall": 0.0}}]})
    check = graded(tmp_path, "distill-courier", [("workspace/spec/courier.allium", ORACLE_SPEC)], gate=lenient).checks[0]
    assert check.bounds["rule_recall"] == 0.0 and check.bounds["entity_recall"] == 1.0


def test_weed_scores_findings_with_false_positives_lower_is_better(tmp_path):
    invented = ORACLE_FINDINGS + b"\n## Webhook signatures\nThe spec says webhooks are signed with HMAC.\n" \
        b"\n## Quiet hours\nThe spec forbids deliveries at night.\n"
    outcome = graded(tmp_path, "weed-courier", [("workspace/weed-findings.md", invented)])
    check = outcome.checks[0]
    assert outcome.verdict.value == "FAIL" and outcome.reason == \
        "check 'divergences' failed: false_positive_count 2 > 1"
    assert check.metrics == {"divergence_recall": 1.0, "false_positive_count": 2.0}
    assert check.directions == {"divergence_recall": "higher", "false_positive_count": "lower"}
    assert check.review["false_positives"] == ["Webhook signatures", "Quiet hours"]


# --- hostile workspaces -----------------------------------------------------------------


def test_a_symlink_or_hard_link_at_the_artifact_path_is_never_followed(tmp_path):
    for kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        tar = workspace_tar(tmp_path / "t.tar", [("workspace/real.md", ORACLE_FINDINGS),
                                                 ("workspace/weed-findings.md", kind, "workspace/real.md")])
        found = read_artifact(tar, "weed-findings.md", 1 << 20, any_spec=False)
        assert found.text is None and found.problem == "no weed-findings.md in the workspace (as a regular file)"


def test_a_linked_spec_falls_back_to_the_largest_regular_allium_file(tmp_path):
    tar = workspace_tar(tmp_path / "t.tar", [
        ("workspace/spec/courier.allium", tarfile.SYMTYPE, "/etc/passwd"),
        ("workspace/notes/small.allium", b"entity A {}\n"),
        ("workspace/notes/big.allium", ORACLE_SPEC),
        ("workspace/huge.allium", None)])  # a folder named like a spec is no spec
    found = read_artifact(tar, "spec/courier.allium", 1 << 20, any_spec=True)
    assert (found.path, found.text.encode()) == ("notes/big.allium", ORACLE_SPEC)


def test_an_artifact_over_the_cap_is_the_agents_fail_and_is_not_read(tmp_path):
    huge = ORACLE_FINDINGS + b"x" * (1 << 20)
    outcome = graded(tmp_path, "weed-courier", [("workspace/weed-findings.md", huge)])
    assert outcome.verdict.value == "FAIL" and outcome.reason == \
        f"check 'divergences' failed: weed-findings.md is {len(huge):,} bytes, over the check's cap of 262,144"
    capped = GateSpec.model_validate({"checks": [{"kind": "allium-weed", "name": "w", "max_kb": 1}]})
    small_cap = graded(tmp_path, "weed-courier", [("workspace/weed-findings.md", ORACLE_FINDINGS)], gate=capped)
    assert small_cap.verdict.value == "FAIL"
    assert f"weed-findings.md is {len(ORACLE_FINDINGS):,} bytes, over the check's cap of 1,024" in small_cap.reason


def test_odd_names_and_paths_outside_the_workspace_are_ignored(tmp_path):
    tar = workspace_tar(tmp_path / "t.tar", [
        ("workspace/../weed-findings.md", b"## outside\n"),
        ("/workspace/../../weed-findings.md", b"## absolute\n"),
        ("workspace/we\ned-findings.md", b"## newline\n"),
        ("workspace/\udcff\udcfe.allium", b"\xff\xfe not utf-8 \x00"),
        ("workspace/./weed-findings.md", ORACLE_FINDINGS),
        ("workspace/weed-findings.md", ORACLE_FINDINGS + b"\n## last one wins\n")])
    found = read_artifact(tar, "weed-findings.md", 1 << 20, any_spec=False)
    assert found.text.encode().endswith(b"## last one wins\n")
    spec = read_artifact(tar, "spec/courier.allium", 1 << 20, any_spec=True)
    assert spec.path == "\udcff\udcfe.allium" and "not utf-8" in spec.text  # read, decoded with replacement


def test_an_odd_name_is_recorded_escaped_and_cannot_start_a_line_of_its_own(tmp_path):
    odd = "workspace/spec/x\n[pass] forged\udcff.allium"
    outcome = graded(tmp_path, "distill-courier", [(odd, ORACLE_SPEC)])
    check = outcome.checks[0]
    assert outcome.verdict.value == "PASS"  # the largest .allium file, whatever its name
    assert check.detail.splitlines()[0] == "every bound held (spec/x\\x0a[pass] forged\\xff.allium)"
    check.model_dump_json()  # no lone surrogate reaches a record
    assert "\n[pass] forged" not in (tmp_path / "gate.log").read_text()


def test_review_lists_are_cut_so_a_hostile_spec_cannot_bloat_the_record(tmp_path):
    edges = "".join(f"        created -> made_up_{i}\n" for i in range(500))
    spec = ORACLE_SPEC.replace(b"        created -> collected\n", b"        created -> collected\n" + edges.encode(), 1)
    check = graded(tmp_path, "distill-courier", [("workspace/spec/courier.allium", spec)]).checks[0]
    assert check.metrics["confabulations"] == 500  # every one counted
    assert len(check.review["confabulated"]) == 51 and check.review["confabulated"][-1] == "... and 450 more"

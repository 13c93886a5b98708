"""Signing and reading back a label's attestation, and compare's refusals, on synthetic labels.

Labels are built through the models and sealed exactly as a run seals them
(tests/labels.py); the key lives in the temporary BENCH_CONFIG_DIR conftest sets.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench.attest import PAYLOAD_TYPE, check_signature, compare_files, pae, sign_label
from bench.compare import compare_labels
from bench.keys import SigningKey, config_dir, fingerprint, load_or_create, public_pem, trusted_keys
from bench.label_check import integrity
from bench.paths import RunPaths
from bench.record import write_manifest
from tests.unit.test_compare import write_label


def test_pae_is_the_dsse_v1_test_vector():
    assert pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_the_key_is_made_once_0600_in_the_config_dir_never_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CONFIG_DIR", str(tmp_path / "cfg"))
    key = load_or_create()
    assert key.path == tmp_path / "cfg" / "signing-key.pem"
    assert stat.S_IMODE(key.path.stat().st_mode) == 0o600
    assert load_or_create().keyid == key.keyid  # the same key on every later run
    monkeypatch.delenv("BENCH_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_dir() == tmp_path / "xdg" / "hermetic-bench"


def test_a_sealed_label_verifies_with_a_statement_in_the_standard_shape(tmp_path):
    paths = RunPaths(write_label(tmp_path, "lbl", ["PASS", "FAIL"]))
    envelope = json.loads(paths.attestation.read_text())
    assert envelope["payloadType"] == PAYLOAD_TYPE == "application/vnd.in-toto+json"
    statement = json.loads(base64.b64decode(envelope["payload"]))
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    names = {s["name"] for s in statement["subject"]}
    assert {"run.json", "summary.json", "c/default/trial-1/result.json", "c/default/trial-2/manifest.json"} <= names
    assert any(name.startswith("harness/") for name in names)
    signature, found = integrity(paths, trusted_keys())
    assert (signature.status, found) == ("trusted", [])
    assert signature.keyid == load_or_create().keyid
    assert paths.signer_key.read_text() == public_pem(load_or_create().public)


def test_without_a_trusted_key_the_signature_is_valid_but_untrusted(tmp_path):
    paths = RunPaths(write_label(tmp_path, "lbl", ["PASS"]))
    signature = check_signature(paths, {})
    assert signature.status == "untrusted"
    assert signature.line.startswith(f"signature valid but by an untrusted key {load_or_create().keyid}")


def test_a_consistent_forgery_breaks_the_signature(tmp_path):
    """FAIL -> PASS, manifest recomputed, statement digests rewritten: only the key could sign that."""
    paths = RunPaths(write_label(tmp_path, "lbl", ["FAIL"]))
    trial = paths.trial("c", "default", 1)
    trial.result.write_text(trial.result.read_text().replace('"FAIL"', '"PASS"'))
    write_manifest(trial)
    envelope = json.loads(paths.attestation.read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    for subject in statement["subject"]:
        subject["digest"]["sha256"] = hashlib.sha256((paths.dir / subject["name"]).read_bytes()).hexdigest()
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    paths.attestation.write_text(json.dumps(envelope))
    signature = check_signature(paths, trusted_keys())
    assert signature.status == "invalid"
    assert signature.line.startswith("signature invalid:")


def test_re_signing_with_another_key_is_untrusted_naming_that_key(tmp_path):
    paths = RunPaths(write_label(tmp_path, "lbl", ["FAIL"]))
    other = SigningKey(Ed25519PrivateKey.generate(), tmp_path / "other.pem")
    sign_label(paths, other, ["r"], final=True)
    signature = check_signature(paths, trusted_keys())
    assert (signature.status, signature.keyid) == ("untrusted", other.keyid)
    assert fingerprint(other.public) != load_or_create().keyid


def test_a_changed_file_after_signing_is_named(tmp_path):
    paths = RunPaths(write_label(tmp_path, "lbl", ["PASS"]))
    (paths.dir / "c/default/trial-1/result.json").write_text("{}")
    (paths.dir / "c/default/trial-1/reward.txt").write_text("1")
    found = dict(compare_files(paths, check_signature(paths, trusted_keys())))
    assert found["c/default/trial-1/result.json"].startswith("SHA-256 differs from the signed attestation")
    assert found["c/default/trial-1/reward.txt"].startswith("present but not in the signed attestation")


def test_an_intermediate_statement_leaves_running_trials_out_and_says_so(tmp_path):
    paths = RunPaths(write_label(tmp_path, "lbl", ["PASS", "PASS"]))
    running = paths.trial("c", "default", 2).dir
    sign_label(paths, load_or_create(), ["r"], final=False, skip={running})
    found = compare_files(paths, check_signature(paths, trusted_keys()))
    assert found == [("c/default/trial-2", "not attested: the run stopped before this trial finished "
                                           "(resuming reruns it)")]


# --- compare refuses what it cannot judge -------------------------------------------------


def test_an_all_error_candidate_is_refused_never_holds(tmp_path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["ERROR"] * 3)
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert report.exit_code == 3
    assert report.nothing_to_judge == ["c/default: the candidate has no valid (PASS or FAIL) trial — nothing to judge"]
    assert not any("holds" in line for line in report.lines())


def test_an_unsigned_label_is_refused_unless_allowed(tmp_path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["PASS"] * 3)
    os.remove(tmp_path / "cand" / "attestation.dsse.json")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert report.exit_code == 3 and report.comparisons == []
    assert "cand: unsigned: attestation.dsse.json missing" in report.lines()[1]
    allowed = compare_labels(tmp_path / "base", tmp_path / "cand", allow_unsigned=True)
    assert allowed.exit_code == 0 and allowed.lines()[0].startswith("compared despite 1 finding(s) (--allow-unsigned)")


def test_a_deleted_manifest_or_trial_is_refused(tmp_path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["PASS"] * 3)
    os.remove(tmp_path / "cand/c/default/trial-2/manifest.json")
    report = compare_labels(tmp_path / "base", tmp_path / "cand")
    assert report.exit_code == 3
    assert any("trial-2/manifest.json: attested but missing" in line for line in report.unverified)


def test_a_label_from_someone_else_is_trusted_with_their_key(tmp_path):
    write_label(tmp_path, "base", ["PASS"] * 3)
    write_label(tmp_path, "cand", ["PASS"] * 3)
    other = SigningKey(Ed25519PrivateKey.generate(), tmp_path / "other.pem")
    sign_label(RunPaths(tmp_path / "cand"), other, ["r"], final=True)
    assert compare_labels(tmp_path / "base", tmp_path / "cand").exit_code == 3
    pub, mine = tmp_path / "other.pub", tmp_path / "mine.pub"
    pub.write_text(public_pem(other.public))
    mine.write_text(public_pem(load_or_create().public))
    only_theirs = compare_labels(tmp_path / "base", tmp_path / "cand", trusted=trusted_keys([pub]))
    assert only_theirs.exit_code == 3  # naming keys replaces the defaults: the baseline is now untrusted
    both = trusted_keys([pub, mine])
    assert compare_labels(tmp_path / "base", tmp_path / "cand", trusted=both).exit_code == 0


# --- the CLI: bench keys, verify-provenance --key ------------------------------------------


def test_keys_exports_the_public_key_and_verify_trusts_only_the_key_named(tmp_path):
    from click.testing import CliRunner

    from bench.cli import cli

    label = write_label(tmp_path, "lbl", ["PASS"])
    mine = tmp_path / "mine.pub"
    shown = CliRunner().invoke(cli, ["keys", "--export", str(mine)])
    assert shown.exit_code == 0 and f"fingerprint {load_or_create().keyid}" in shown.stdout
    assert mine.read_text() == public_pem(load_or_create().public)
    stranger = tmp_path / "stranger.pub"
    stranger.write_text(public_pem(Ed25519PrivateKey.generate().public_key()))
    report = lambda *args: CliRunner().invoke(cli, ["verify-provenance", str(label), "--json", *args])
    untrusted = report("--key", str(stranger))
    assert untrusted.exit_code == 1
    assert json.loads(untrusted.stdout)["signatures"][str(label.resolve())]["status"] == "untrusted"
    trusted = json.loads(report("--key", str(mine)).stdout)
    assert trusted["signatures"][str(label.resolve())]["status"] == "trusted"


def test_file_digests_reread_a_file_only_when_it_changed(tmp_path, monkeypatch):
    """Signing after every trial hashes each finished file once, and a changed file again."""
    import bench.attest as attest

    reads = []
    monkeypatch.setattr(attest, "sha256_file", lambda path: reads.append(path) or hashlib.sha256(path.read_bytes()).hexdigest())
    path = tmp_path / "workspace.tar"
    path.write_bytes(b"one")
    digests = attest.FileDigests()
    first = digests(path)
    assert digests(path) == first and len(reads) == 1
    path.write_bytes(b"two, longer")
    assert digests(path) == hashlib.sha256(b"two, longer").hexdigest() and len(reads) == 2

"""The tamper matrix: a label recorded by a real run on the real engine, attacked one way at a time.

The files are enumerated from the label itself, so a record file added later is
attacked (flipped, truncated, deleted) without touching this test. Each attack runs
on a fresh copy of the one recorded label and is verified in-process; it counts as
detected only if verify reports a difference the untouched copy does not have, and
that difference names what was changed (the file, its trial folder or the label).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench.attest import sign_label
from bench.keys import SigningKey, trusted_keys
from bench.paths import Project, RunPaths
from bench.provenance import verify
from bench.record import write_manifest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
T1, T2 = "hello/default/trial-1", "hello/default/trial-2"


def _run(results: Path, label: str, trials: int) -> Path:
    env = {**os.environ, "BENCH_ROOT": str(ROOT), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench.cli", "run", "hello", "--agent", "oracle", "--trials",
                           str(trials), "--label", label, "--results", str(results)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return results / label


@pytest.fixture(scope="module")
def labels(docker_client, config_dir, tmp_path_factory) -> tuple[Path, Path]:
    """One label of two oracle trials to attack, and another to transplant a trial from."""
    results = tmp_path_factory.mktemp("recorded")
    return _run(results, "rec", 2), _run(results, "other", 1)


def findings(label: Path) -> set[str]:
    """Every difference verify reports, with the copy's own path taken out so copies compare."""
    report = verify(label, Project(ROOT), trusted_keys())
    return {f"{d.where}: {d.what}".replace(str(label), "<label>") for d in report.differences}


Attack = Callable[[Path], None]


def flip(rel: str) -> Attack:
    def attack(label: Path) -> None:
        path = label / rel
        data = bytearray(path.read_bytes()) or bytearray(b"\0")  # an empty file gains a byte
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
    return attack


def truncate(rel: str) -> Attack:
    def attack(label: Path) -> None:
        path = label / rel
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2] if path.stat().st_size else b"x")
    return attack


def delete(rel: str) -> Attack:
    return lambda label: (label / rel).unlink()


def add(rel: str) -> Attack:
    return lambda label: (label / rel).write_text("1\n")


def edit_tar_member(label: Path) -> None:
    """Rewrite workspace.tar with hello.txt's content changed: a valid tar, one member edited."""
    path = label / T1 / "workspace.tar"
    out = io.BytesIO()
    with tarfile.open(path) as old, tarfile.open(fileobj=out, mode="w") as new:
        for member in old.getmembers():
            data = old.extractfile(member).read() if member.isfile() else None
            if member.isfile() and member.name.endswith("hello.txt"):
                data = b"Hello, forger!\n"
                member.size = len(data)
            new.addfile(member, io.BytesIO(data) if data is not None else None)
    path.write_bytes(out.getvalue())


def malform_image_id(label: Path) -> None:
    """One image ID's hex digit becomes a backtick: the engine answers such a reference with a 400, not 404."""
    path = label / T1 / "provenance.json"
    record = json.loads(path.read_text())
    image = next(iter(record["images"].values()))
    image["id"] = image["id"].replace("sha256:", "sha256:`", 1)[:71]
    path.write_text(json.dumps(record, indent=2))


def swap(label: Path) -> None:
    a, b = label / T1, label / T2
    a.rename(label / "swap")
    b.rename(a)
    (label / "swap").rename(b)


def transplant(other: Path) -> Attack:
    def attack(label: Path) -> None:
        shutil.rmtree(label / T1)
        shutil.copytree(other / T1, label / T1)
    return attack


def attacks(recorded: Path, other: Path) -> list[tuple[str, Attack, str]]:
    """(name, attack, what the finding must name) for every file of the label, then the whole-label ones."""
    files = sorted(p.relative_to(recorded).as_posix() for p in recorded.rglob("*") if p.is_file())
    assert {"run.json", "summary.json", "attestation.dsse.json", "signer.pub", f"{T1}/manifest.json",
            f"{T1}/workspace.tar"} <= set(files)
    found = [(f"{op.__name__} {rel}", op(rel), rel) for rel in files for op in (flip, truncate, delete)]
    found += [("add trial file", add(f"{T1}/reward.txt"), f"{T1}/reward.txt"),
              ("add label file", add("notes.json"), "notes.json"),
              ("add wheel", add("harness/other.whl"), "harness/other.whl"),
              ("edit a workspace.tar member", edit_tar_member, f"{T1}/workspace.tar"),
              ("delete trial", lambda label: shutil.rmtree(label / T2), T2),
              ("duplicate trial", lambda label: shutil.copytree(label / T1, label / "hello/default/trial-9"),
               "hello/default/trial-9"),
              ("malform an image ID", malform_image_id, f"{T1}/provenance.json"),
              ("swap trials", swap, T1),
              ("transplant a trial from another label", transplant(other), T1)]
    return found


def test_every_tamper_is_detected_and_named(labels, tmp_path):
    recorded, other = labels
    clean = tmp_path / "clean" / "rec"
    shutil.copytree(recorded, clean)
    baseline = findings(clean)
    assert all("harness was dirty" in line for line in baseline), baseline  # a clean label has nothing else
    missed, unnamed = [], []
    matrix = attacks(recorded, other)
    for n, (name, attack, names) in enumerate(matrix):
        copy = tmp_path / f"attack-{n}" / "rec"
        shutil.copytree(recorded, copy)
        attack(copy)
        new = findings(copy) - baseline
        if not new:
            missed.append(name)
        elif not any(names in line for line in new):
            unnamed.append((name, sorted(new)))
    renamed = tmp_path / "renamed" / "mine"
    shutil.copytree(recorded, renamed)
    rename_new = findings(renamed) - baseline
    assert any("named 'mine' but run.json says 'rec'" in line for line in rename_new), rename_new
    print(f"tamper matrix: {len(matrix) + 1} attempts, {len(matrix) + 1 - len(missed)} detected")
    assert missed == [], f"undetected: {missed}"
    assert unnamed == [], f"detected without naming what changed: {unnamed}"


def test_a_consistent_forgery_is_rejected_and_a_re_signed_label_is_untrusted(labels, tmp_path):
    """FAIL<-PASS in result.json and gate.log, every hash recomputed: the signature is what stops it."""
    label = tmp_path / "forged" / "rec"
    shutil.copytree(labels[0], label)
    trial = RunPaths(label).trial("hello", "default", 1)
    trial.result.write_text(trial.result.read_text().replace('"PASS"', '"FAIL"'))
    trial.gate_log.write_text(trial.gate_log.read_text() + "forged\n")
    write_manifest(trial)
    envelope = json.loads((label / "attestation.dsse.json").read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    for subject in statement["subject"]:
        subject["digest"]["sha256"] = hashlib.sha256((label / subject["name"]).read_bytes()).hexdigest()
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    (label / "attestation.dsse.json").write_text(json.dumps(envelope))
    report = verify(label, Project(ROOT), trusted_keys())
    assert report.signatures[str(label)]["status"] == "invalid" and not report.ok
    assert any(d.what.startswith("signature invalid") for d in report.differences)

    forger = SigningKey(Ed25519PrivateKey.generate(), tmp_path / "forger.pem")
    sign_label(RunPaths(label), forger, ["forged"], final=True)
    report = verify(label, Project(ROOT), trusted_keys())
    assert report.signatures[str(label)] == {"status": "untrusted", "keyid": forger.keyid,
                                             "line": report.signatures[str(label)]["line"]}
    assert not report.ok and any(f"untrusted key {forger.keyid}" in d.what for d in report.differences)

"""The label's signed attestation: an in-toto Statement in a DSSE envelope, Ed25519.

Per-trial manifests catch accidental damage but not a forger, who can edit a record
and recompute its hashes with the harness's own code. So the run signs, with a key
that never leaves the user's config directory (bench/keys.py), one statement listing
every recorded file of the label by SHA-256: each trial's files, run.json,
summary.json, the harness wheel. It is rewritten after every trial and at the end,
each time atomically, so a run killed at any moment leaves a statement whose listed
files (the finished trials) still verify; ``complete`` says whether the run ended.
Derived views written later, report.html and authoring-metrics.json (`bench metrics`),
are neither listed nor checked: each is recomputed from signed files whenever asked.

The shapes are the field's standard ones so other tools can read them: in-toto
Statement v1, a SLSA-provenance-v1-style predicate, a DSSE envelope whose signature
covers PAE(payloadType, payload) exactly as the DSSE v1 protocol defines it.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import __version__
from .hashing import sha256_file
from .keys import SigningKey, fingerprint, parse_public, public_pem, verifies
from .models import utcnow
from .paths import RunPaths

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://hermetic-bench.dev/run/v1"
BUILDER_ID = "urn:hermetic-bench:local-docker"


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE v1 Pre-Authentication Encoding: what the signature covers, type and body both."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def attestable(paths: RunPaths, skip: set[Path] = frozenset(), final: bool = True) -> list[Path]:
    """Every recorded file of the label: all but the signature's own files, derived views and ``skip`` trials.

    A trial still running when an intermediate statement is written is skipped (its
    files are half written); summary.json is listed only by the final statement,
    because until then it describes an earlier run.
    """
    own = {paths.attestation, paths.signer_key, paths.report, paths.authoring_metrics}
    if not final:
        own.add(paths.summary)
    files = []
    for path in sorted(paths.dir.rglob("*")):
        if path in own or not path.is_file() or path.name.endswith(".partial"):
            continue
        if any(folder in path.parents for folder in skip):
            continue
        files.append(path)
    return files


class FileDigests:
    """SHA-256 per file, read again only when the file changed (inode, size or mtime).

    A run signs its label after every trial: without this, each signature would re-read
    every finished trial's files (workspace tars included), quadratic in the trials.
    """

    def __init__(self) -> None:
        self._seen: dict[Path, tuple[tuple[int, int, int], str]] = {}

    def __call__(self, path: Path) -> str:
        stat = path.stat()
        key = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        known = self._seen.get(path)
        if known is None or known[0] != key:
            known = self._seen[path] = (key, sha256_file(path))
        return known[1]


def statement(paths: RunPaths, files: list[Path], run_ids: list[str], final: bool,
              digest: Callable[[Path], str] = sha256_file) -> dict:
    """The in-toto Statement: subjects by digest, and a provenance predicate naming the run."""
    subjects = [{"name": p.relative_to(paths.dir).as_posix(), "digest": {"sha256": digest(p)}} for p in files]
    trials = sorted({s["name"].rsplit("/", 1)[0] for s in subjects if "/trial-" in s["name"]})
    wheels = [s for s in subjects if s["name"].startswith("harness/")]
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"label": paths.label},
                "internalParameters": {"complete": final, "trials": trials},
                "resolvedDependencies": [{"name": s["name"], "digest": s["digest"]} for s in wheels],
            },
            "runDetails": {
                "builder": {"id": BUILDER_ID, "version": {"hermetic-bench": __version__}},
                "metadata": {"invocationId": ",".join(run_ids), "finishedOn": utcnow().isoformat()},
            },
        },
    }


def envelope(body: bytes, key: SigningKey) -> dict:
    signature = key.sign(pae(PAYLOAD_TYPE, body))
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(body).decode(),
            "signatures": [{"keyid": key.keyid, "sig": base64.b64encode(signature).decode()}]}


def sign_label(paths: RunPaths, key: SigningKey, run_ids: list[str], final: bool,
               skip: set[Path] = frozenset(), digest: Callable[[Path], str] = sha256_file) -> dict:
    """Write the label's attestation (atomically) and its signer's public key; returns the statement.

    ``digest`` is a run's FileDigests when it signs repeatedly.
    """
    found = statement(paths, attestable(paths, skip, final), run_ids, final, digest)
    body = json.dumps(found, indent=1, sort_keys=True).encode()
    _atomic_write(paths.attestation, json.dumps(envelope(body, key), indent=2).encode() + b"\n")
    pem = public_pem(key.public).encode()
    if not paths.signer_key.is_file() or paths.signer_key.read_bytes() != pem:
        _atomic_write(paths.signer_key, pem)
    return found


def _atomic_write(path: Path, data: bytes) -> None:
    """A kill between the two steps leaves the previous file whole, never half of the new one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    os.replace(partial, path)


# --- reading it back ------------------------------------------------------------------


@dataclass
class Signature:
    """What the envelope proves: status is trusted, untrusted, unsigned or invalid."""

    status: str
    keyid: str | None = None
    detail: str = ""
    statement: dict | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def line(self) -> str:
        return {
            "trusted": f"signature valid, by trusted key {self.keyid}",
            "untrusted": f"signature valid but by an untrusted key {self.keyid} — if you trust whoever holds it, "
                         f"pass --key with its public key (`bench keys --export FILE` on their machine)",
            "unsigned": f"unsigned: {self.detail} — this label cannot be proven; rerun it to get signed evidence",
            "invalid": f"signature invalid: {self.detail} — the label was changed after it was signed",
        }[self.status]


def check_signature(paths: RunPaths, trusted: dict) -> Signature:
    """Verify the envelope against a trusted key, else against the key the label names (then untrusted)."""
    if not paths.attestation.is_file():
        return Signature("unsigned", detail=f"{paths.attestation.name} missing")
    try:
        env = json.loads(paths.attestation.read_text())
        body = base64.b64decode(env["payload"], validate=False)
        sig = env["signatures"][0]
        signature, keyid = base64.b64decode(sig["sig"]), sig.get("keyid")
        payload_type = env["payloadType"]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        return Signature("invalid", detail=f"{paths.attestation.name} does not parse as a DSSE envelope ({exc!r})")
    candidates = [(k, "trusted") for k in trusted.values()] + [(k, "untrusted") for k in _label_keys(paths)]
    for key, status in candidates:
        if verifies(key, signature, pae(payload_type, body)):
            if payload_type != PAYLOAD_TYPE:
                return Signature("invalid", detail=f"payloadType {payload_type!r} is not {PAYLOAD_TYPE}")
            return _parsed(status, fingerprint(key), body)
    named = f" (it names key {keyid})" if keyid else ""
    return Signature("invalid", keyid, f"no trusted key and not the label's {paths.signer_key.name} verifies "
                     f"{paths.attestation.name}{named}")


def signer_mismatch(paths: RunPaths, sig: Signature) -> list[tuple[str, str]]:
    """The label's signer.pub must hold the key that signed it: the label says who made it, exportably."""
    if sig.keyid is None or sig.status not in ("trusted", "untrusted"):
        return []
    if [fingerprint(key) for key in _label_keys(paths)] == [sig.keyid]:
        return []
    return [(paths.signer_key.name, f"does not hold the key that signed {paths.attestation.name} ({sig.keyid}): "
                                     f"changed or removed after signing")]


def _label_keys(paths: RunPaths) -> list:
    try:
        return parse_public(paths.signer_key.read_bytes(), str(paths.signer_key))
    except Exception:
        return []  # a missing or damaged signer.pub leaves only trusted keys to try


def _parsed(status: str, keyid: str, body: bytes) -> Signature:
    try:
        found = json.loads(body)
        assert found["_type"] == STATEMENT_TYPE and found["predicateType"] == PREDICATE_TYPE
        assert all(isinstance(s["digest"]["sha256"], str) for s in found["subject"])
        assert isinstance(found["predicate"]["buildDefinition"]["internalParameters"]["complete"], bool)
    except (ValueError, KeyError, TypeError, AssertionError):
        return Signature("invalid", keyid, "the signed payload is not an in-toto Statement this harness wrote")
    return Signature(status, keyid, statement=found)


def attested_files(sig: Signature) -> dict[str, str]:
    """name -> sha256 of every subject of a verified statement."""
    return {s["name"]: s["digest"]["sha256"] for s in sig.statement["subject"]} if sig.statement else {}


def compare_files(paths: RunPaths, sig: Signature) -> list[tuple[str, str]]:
    """(where, what) for every file that differs from the statement, is missing, or was added.

    Nothing without a verified statement: the signature's own line already says the label proves nothing.
    """
    if sig.statement is None:
        return []
    listed = attested_files(sig)
    final = bool(sig.statement["predicate"]["buildDefinition"]["internalParameters"].get("complete"))
    present = {p.relative_to(paths.dir).as_posix(): p for p in attestable(paths, final=final)}
    found = []
    for name, digest in sorted(listed.items()):
        if name not in present:
            found.append((name, "attested but missing (deleted or moved after signing)"))
        elif sha256_file(present[name]) != digest:
            found.append((name, "SHA-256 differs from the signed attestation (changed after signing)"))
    attested_trials = {_trial_of(name) for name in listed}
    unfinished: set[str] = set()
    for name in sorted(set(present) - set(listed)):
        trial = _trial_of(name)
        if trial and trial not in attested_trials and not final:
            unfinished.add(trial)
        else:
            found.append((name, "present but not in the signed attestation (added after signing)"))
    found += [(trial, "not attested: the run stopped before this trial finished (resuming reruns it)")
              for trial in sorted(unfinished)]
    return found


def _trial_of(name: str) -> str | None:
    """The trial folder (case/arm/trial-n) a label-relative file name lies in, if any."""
    parts = name.split("/")
    return "/".join(parts[:3]) if len(parts) > 3 and parts[2].startswith("trial-") else None

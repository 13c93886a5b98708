"""`bench verify-provenance`: prove who made a label, recompute what can be recomputed, name every difference.

A result is only evidence if it can be checked later, by someone who assumes it was
edited. Per label this checks the signed attestation (bench/attest.py: a trusted key,
an untrusted one, none, or a broken signature) and the label as a whole
(bench/label_check.py: every file against the signed statement, the trial set,
each record's identity, summary.json, the wheel). Per trial it verifies the manifest,
that the case, its fixture and its goldens still hash as recorded, that every image is present on this
engine with the recorded ID and still derives from images/ as it is today, and that
the harness that made it was a clean commit. A trial folder given alone is verified
with its whole label, since a trial proves nothing outside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .cases import load_case
from .errors import BenchError, RecordError, UsageError
from .hashing import sha256_file
from .keys import trusted_keys
from .label_check import SourceTags, image_source_drift, integrity, trial_folders
from .models import LEVELS, Manifest, Provenance
from .paths import Project, RunPaths, TrialPaths
from .readback import read_record

IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")
FIX = "the trial's record was changed after recording; rerun the trial to get evidence again"


@dataclass
class Difference:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass
class Report:
    trials: int = 0
    differences: list[Difference] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)
    signatures: dict[str, dict] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.trials > 0 and not self.differences

    def lines(self) -> list[str]:
        lines = [f"{label}: {found['line']}" for label, found in self.signatures.items()
                 if found["status"] == "trusted"] + [str(d) for d in self.differences]
        levels = ", ".join(f"{self.levels[level]} {level}" for level in LEVELS if level in self.levels)
        verdict = "ok" if self.ok else f"{len(self.differences)} difference(s)"
        lines.append(f"{self.trials} trial(s) checked ({levels or 'none'}): {verdict}")
        return lines

    def as_dict(self) -> dict:
        return {"ok": self.ok, "trials": self.trials, "levels": self.levels, "signatures": self.signatures,
                "differences": [{"where": d.where, "what": d.what} for d in self.differences]}


def find_labels(results: Path) -> list[RunPaths]:
    """The labels under a results root, a label folder itself, or the label of one trial folder."""
    if not results.exists():
        raise UsageError(f"{results} does not exist — pass a results folder, a label folder or a trial folder")
    results = results.resolve()
    if results.name.startswith("trial-") and len(results.parents) > 3:
        return [RunPaths(results.parents[2])]
    if _is_label(results):
        return [RunPaths(results)]
    return [RunPaths(p) for p in sorted(p for p in results.iterdir() if p.is_dir() and _is_label(p))]


def _is_label(folder: Path) -> bool:
    return (folder / "run.json").is_file() or (folder / "attestation.dsse.json").is_file() or \
        any(p.is_dir() for p in folder.glob("*/*/trial-*"))


def verify(results: Path, project: Project, trusted: dict | None = None) -> Report:
    """Every label found at ``results``: signature and whole-label integrity, then each trial."""
    report = Report()
    trusted = trusted_keys() if trusted is None else trusted
    images = _ImageProbe(project)
    for paths in find_labels(results):
        signature, found = integrity(paths, trusted)
        report.signatures[str(paths.dir)] = {"status": signature.status, "keyid": signature.keyid,
                                             "line": signature.line}
        report.differences += [Difference(str(paths.dir / where) if where != "." else str(paths.dir), what)
                               for where, what in found]
        for trial in trial_folders(paths):
            report.trials += 1
            _verify_trial(report, trial, project, images)
    if report.trials == 0:
        report.differences.append(Difference(str(results), "no trial results found"))
    return report


def _verify_trial(report: Report, trial: TrialPaths, project: Project, images: "_ImageProbe") -> None:
    where = str(trial.dir)
    report.differences += [Difference(where, what) for what in check_manifest(trial)]
    provenance, problem = _load_provenance(trial)
    if provenance is None:
        report.differences.append(Difference(where, problem))
        return
    report.levels[provenance.reproducibility] = report.levels.get(provenance.reproducibility, 0) + 1
    report.differences += [Difference(where, what) for what in check_provenance(provenance, project, images)]


def check_manifest(trial: TrialPaths) -> list[str]:
    if not trial.manifest.is_file():
        return ["manifest.json missing"]
    try:
        manifest = read_record(trial.manifest, Manifest, FIX)
    except RecordError as exc:
        return [f"manifest.json unreadable: {exc}"]
    problems = []
    for name, digest in manifest.files.items():
        path = trial.dir / name
        if not path.is_file():
            problems.append(f"{name}: recorded but missing")
        elif sha256_file(path) != digest:
            problems.append(f"{name}: SHA-256 differs from the manifest (file changed after recording)")
    present = {p.relative_to(trial.dir).as_posix() for p in trial.dir.rglob("*") if p.is_file()}
    for name in sorted(present - set(manifest.files) - {"manifest.json"}):
        problems.append(f"{name}: present but not in the manifest (added after recording)")
    return problems


def _load_provenance(trial: TrialPaths) -> tuple[Provenance | None, str]:
    """The trial's provenance, or None and the difference to report (missing, or which field is bad)."""
    if not trial.provenance.is_file():
        return None, "provenance.json missing"
    try:
        return read_record(trial.provenance, Provenance, FIX), ""
    except RecordError as exc:
        return None, f"provenance.json unreadable: {exc}"


def check_provenance(provenance: Provenance, project: Project, images: "_ImageProbe") -> list[str]:
    problems = []
    try:
        case = load_case(project, provenance.case.id)
    except BenchError as exc:
        return [f"case {provenance.case.id!r} cannot be loaded here: {exc}"]
    if case.visible_hash() != provenance.case.visible_hash:
        problems.append(f"case {case.id} changed: visible hash {case.visible_hash()} != recorded {provenance.case.visible_hash}")
    if provenance.case.fixture_hash and case.fixture and case.fixture.digest() != provenance.case.fixture_hash:
        problems.append(f"fixture {case.fixture.name} of {case.id} changed: hash {case.fixture.digest()} != recorded "
                        f"{provenance.case.fixture_hash}")
    if case.goldens_hash() != provenance.case.goldens_hash:
        problems.append(f"goldens of {case.id} changed: hash {case.goldens_hash()} != recorded {provenance.case.goldens_hash}")
    for role, image in provenance.images.items():
        if problem := images.check(image.tag, image.id):
            problems.append(f"{role} image {image.tag}: {problem}")
        if drift := images.source_drift(image):
            problems.append(f"{role} image: {drift}")
    if provenance.harness.dirty:
        problems.append(f"harness was dirty (uncommitted changes at {provenance.harness.git_sha}) when recorded")
    return problems


class _ImageProbe:
    """Looks images up once each; says so once if the engine cannot be asked."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._client = None
        self._unreachable: str | None = None
        self._drift: dict[str, str | None] = {}

    def _connect(self):
        from .engine import connect

        if self._client is None and self._unreachable is None:
            try:
                self._client = connect(timeout=10)
            except BenchError as exc:
                self._unreachable = str(exc)
        return self._client

    def check(self, tag: str, image_id: str) -> str | None:
        """A recorded ID is hostile input: one of the wrong form is named, never sent to the engine."""
        from docker.errors import APIError, ImageNotFound

        if not IMAGE_ID.fullmatch(image_id):
            return f"recorded image ID {image_id!r} is not of the form sha256:<64 hex digits>"
        if self._connect() is None:
            return f"cannot check the image ID: {self._unreachable}"
        try:
            self._client.images.get(image_id)
        except ImageNotFound:
            return f"image {image_id} is not present on this engine (rebuild or load it)"
        except APIError as exc:
            return f"the engine refused to look up image {image_id}: {exc.explanation or exc}"
        return None

    def source_drift(self, image) -> str | None:
        """Whether images/ still derives the recorded tag (once per tag; needs the engine for parents)."""
        if image.tag not in self._drift:
            client = self._connect()
            self._drift[image.tag] = None if client is None else \
                image_source_drift(SourceTags(client, self.project), image)
        return self._drift[image.tag]

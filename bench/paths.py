"""Where everything lives, owned in one place so no module builds paths by hand.

Project layout (``Project``)::

    <root>/
      cases/<case>/        case.toml, PROMPT.md, workspace/, context/<arm>/   (agent-visible)
      goldens/<case>/      gate.toml, solution/                              (withheld)
      images/<name>/       image.toml (+ Dockerfile and files)
      provenance/          images.lock.json, schema/*.json

Results layout (``RunPaths`` and ``TrialPaths``), in <root>/results unless --results or $BENCH_RESULTS
name another folder::

    results/<label>/
      summary.json
      run.json                          the run's options, arms and identity, for resume
      authoring-metrics.json            `bench metrics`: derived from the transcripts, not signed (like report.html)
      attestation.dsse.json             the signed in-toto statement listing every file below by SHA-256
      signer.pub                        the public half of the key that signed it
      harness/<wheel>                   the harness wheel the browser observer and sidecars imported
      <case>/<arm>/trial-<n>/
        result.json  provenance.json  manifest.json
        assessment.json                 an operator's scoring of the gate's expectations (`bench assess`)
        transcript.log | .jsonl         the agent's output, streamed as produced (JSONL for event CLIs)
        agent-stderr.log                an event CLI's stderr, kept apart from its JSONL
        setup.log                       the case's setup, when this trial staged it
        endpoint.log                    the scripted model endpoint's requests (no headers, no bodies)
        proxy.log                       the credential proxy's requests (no headers, no bodies)
        gate.log                        what each check did, written by the host (each check's output, capped)
        workspace.tar                   the exported workspace (symlinks kept)
        artifacts/                      frames and other files a gate saved
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError


NO_PROJECT_FIX = "run `bench init DIR`, or pass --root / set BENCH_ROOT"


def is_project(folder: Path) -> bool:
    """A bench project holds cases/ and images/ (goldens/ and provenance/ may come later)."""
    return (folder / "cases").is_dir() and (folder / "images").is_dir()


def find_root(named: Path | None = None, start: Path | None = None) -> Path:
    """The project root: ``named`` (--root), else $BENCH_ROOT, else the nearest project folder above start.

    Never a guess: a named root that is no project, or no project above start, is a
    UsageError saying how to get one, so no verb lists nothing or writes into a random folder.
    """
    given, source = (named, "--root") if named else (os.environ.get("BENCH_ROOT"), "BENCH_ROOT")
    if given:
        root = Path(given).resolve()
        if not is_project(root):
            raise UsageError(f"no bench project at {root} ({source}): no cases/ and images/ there — point {source} "
                             f"at a project folder, or make one with `bench init {root}`")
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if is_project(folder):
            return folder
    raise UsageError(f"no bench project here (no cases/ and images/ above {here}); {NO_PROJECT_FIX}")


@dataclass(frozen=True)
class Project:
    root: Path

    @property
    def cases(self) -> Path:
        return self.root / "cases"

    @property
    def goldens(self) -> Path:
        return self.root / "goldens"

    @property
    def images(self) -> Path:
        return self.root / "images"

    @property
    def lock_file(self) -> Path:
        return self.root / "provenance" / "images.lock.json"

    @property
    def schema_dir(self) -> Path:
        return self.root / "provenance" / "schema"

    def case_dir(self, case: str) -> Path:
        return self.cases / case

    def goldens_dir(self, case: str) -> Path:
        return self.goldens / case

    def image_dir(self, name: str) -> Path:
        return self.images / name


@dataclass(frozen=True)
class TrialPaths:
    dir: Path

    @property
    def result(self) -> Path:
        return self.dir / "result.json"

    @property
    def provenance(self) -> Path:
        return self.dir / "provenance.json"

    @property
    def manifest(self) -> Path:
        return self.dir / "manifest.json"

    @property
    def assessment(self) -> Path:
        return self.dir / "assessment.json"

    @property
    def transcript(self) -> Path:
        return self.dir / "transcript.log"

    def named(self, name: str) -> Path:
        """A file of this trial by its plain name (an adapter's transcript file)."""
        return self.dir / name

    @property
    def agent_stderr(self) -> Path:
        return self.dir / "agent-stderr.log"

    @property
    def setup_log(self) -> Path:
        return self.dir / "setup.log"

    @property
    def endpoint_log(self) -> Path:
        return self.dir / "endpoint.log"

    @property
    def proxy_log(self) -> Path:
        return self.dir / "proxy.log"

    @property
    def gate_log(self) -> Path:
        return self.dir / "gate.log"

    @property
    def workspace_tar(self) -> Path:
        return self.dir / "workspace.tar"

    @property
    def artifacts(self) -> Path:
        return self.dir / "artifacts"


@dataclass(frozen=True)
class RunPaths:
    dir: Path

    @property
    def label(self) -> str:
        return self.dir.name

    @property
    def summary(self) -> Path:
        return self.dir / "summary.json"

    @property
    def run_record(self) -> Path:
        return self.dir / "run.json"

    @property
    def attestation(self) -> Path:
        return self.dir / "attestation.dsse.json"

    @property
    def signer_key(self) -> Path:
        return self.dir / "signer.pub"

    @property
    def report(self) -> Path:
        return self.dir / "report.html"

    @property
    def authoring_metrics(self) -> Path:
        return self.dir / "authoring-metrics.json"

    @property
    def harness_dir(self) -> Path:
        return self.dir / "harness"

    def trial(self, case: str, arm: str, n: int) -> TrialPaths:
        return TrialPaths(self.dir / case / arm / f"trial-{n}")

    def trials(self) -> list[TrialPaths]:
        """Every trial folder that holds a result, in a stable order."""
        return [TrialPaths(p.parent) for p in sorted(self.dir.glob("*/*/trial-*/result.json"))]

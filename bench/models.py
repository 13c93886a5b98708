"""Every record the harness reads or writes, as strict pydantic models.

Files read from disk (case.toml, gate.toml, image.toml) forbid unknown fields, so a
typo is an error rather than a silently ignored setting. Files written carry a
``schema_version``; their JSON Schemas are published under provenance/schema/, and
they forbid unknown fields too, because they are read back (resume, compare, verify):
a record another harness version wrote is refused by bench/readback.py, never half
understood. Timestamps are UTC-aware.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from enum import Enum
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1
RUN_SCHEMA_VERSION = 3  # run.json: 3 adds the run's options, its trials and run ids, and each case's arms
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Strict(BaseModel):
    """Base of everything read from disk: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Record(BaseModel):
    """Base of everything the harness writes and reads back: unknown fields are errors.

    Not frozen: a trial's result is filled in phase by phase before it is written.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)


Level = Literal["pinned", "content-reproducible", "bit-reproducible"]
LEVELS: tuple[str, ...] = get_args(Level)
LockState = Literal["locked", "content-equal", "drifted", "unlocked"]
"""An image against provenance/images.lock.json: same ID / same content digest / other content / no entry."""
"""The reproducibility levels a result can claim, in rising order (DESIGN.md)."""


class Verdict(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCOMPLETE = "INCOMPLETE"
    ERROR = "ERROR"


# --- case.toml -----------------------------------------------------------------------


class Limits(Strict):
    """Resource limits applied to the agent's and the grader's containers."""

    cpus: float = Field(1.0, gt=0, description="CPU share (Docker --cpus).")
    memory_mb: int = Field(2048, ge=64, description="Memory limit in MiB, swap included.")
    pids: int = Field(512, ge=16, description="Process-count limit.")
    timeout_s: int = Field(600, ge=1, description="Agent wall clock; the container is killed at it.")
    max_turns: int = Field(50, ge=1, description="Model turns an agent CLI may take (e.g. claude --max-turns).")
    export_max_mb: int = Field(256, ge=1, description="Export budget: the largest workspace export accepted (MiB).")
    disk_max_mb: int = Field(1024, ge=16, description="Disk budget: what one container (agent or check) may write "
                             "to its workspace and writable layer (MiB), polled while it runs.")
    transcript_max_mb: int = Field(64, ge=1, description="Transcript budget: the agent's output kept (MiB).")
    check_output_max_mb: int = Field(16, ge=1, description="Check-output budget: what one grading check may print (MiB).")


# --- images/<name>/image.toml ----------------------------------------------------------


class LockEntry(Record):
    name: str
    tag: str
    id: str
    content_digest: str | None = None
    parent: str | None = None
    context_hash: str = Field(description="What the image was made from: images/<name> + parent ID, "
                              "or the SHA-256 of a loaded archive.")
    packages: dict[str, str] = Field(default_factory=dict, description="dpkg name -> version.")
    builder: Literal["mmdebstrap", "layer", "dockerfile", "dockertools"] | None = Field(
        None,
        description="How the image was made. mmdebstrap (images/base), layer (pinned inputs installed "
        "offline, written as one deterministic layer) and dockertools (the flake's image outputs, loaded "
        "with `bench images load`) are bit-reproducible-capable: the same inputs give the same image ID. "
        "Dockerfile builds stamp build times, so at best content-reproducible.",
    )
    verified: Literal["content", "bit"] | None = Field(
        None,
        description="What the last `bench images rebuild` proved for this entry: `bit` = the rebuild "
        "gave this exact image ID, `content` = the same content digest only, null = never verified or drifted.",
    )
    registry_digests: dict[str, str] = Field(
        default_factory=dict,
        description="Registry (host[:port][/path]) -> the manifest digest (sha256:...) `bench images push` got "
        "there; `bench images pull` fetches exactly that digest and checks the image ID against `id`.",
    )

    @property
    def bit_capable(self) -> bool:
        """Whether a rebuild can ever reproduce the image ID, not only the content digest."""
        return self.builder in ("mmdebstrap", "layer", "dockertools")


class ImageLock(Record):
    schema_version: int = SCHEMA_VERSION
    images: dict[str, LockEntry] = Field(default_factory=dict)


# --- arms and run.json --------------------------------------------------------------


class ArmSpec(Strict):
    """One named variant under test, from `--arm NAME=SPEC` (or a case's own arm list)."""

    name: str
    context: str | None = Field(None, description="Which context/<dir> of the case the agent gets.")
    agent: str | None = Field(None, description="Agent for this arm (default: --agent).")
    agent_cmd: str | None = Field(None, description="Command template when agent is `command`.")
    model: str | None = Field(None, description="Model name handed to model-driven agents.")
    plugin: str | None = Field(
        None, description="A plugin checkout (folder) under test: packed once per run, put read-only into the "
        "agent's container, handed to Claude Code as --plugin-dir (to any agent as $BENCH_PLUGIN_DIR).")
    skills: str | None = Field(
        None, description="Skills under test: a skill folder (SKILL.md at its top) or a folder of them, packed once per "
        "run and laid where the agent's CLI discovers skills; recorded by content hash.")
    subject: str | None = Field(
        None, description="A subject source under test (a checkout or .tgz path, or GIT_URL@COMMIT, as --subject "
        "takes): packed once per run; this arm's trials of every case that pins a subject install it instead.")

    @field_validator("name")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(f"{value!r} is not a plain lowercase name (a-z, 0-9, '.', '_', '-')")
        return value


class CaseInputs(Record):
    """What one case's trials in a label were run with; any change refuses a resume."""

    visible_hash: str
    goldens_hash: str
    images: dict[str, str] = Field(description="Image ID by role: agent, grader, agent:<cli layer>; an arm with its own "
                                   "subject has its images as <role>@<arm>.")
    seat: str | None = Field(None, description="The run's --seat (or auto), for cases that render.")
    subject_sha256: str | None = Field(
        None, description="The subject tarball installed, for cases with a subject (in the arms without their own).")
    fixture: str | None = Field(None, description="The case's fixture (cases/_fixtures/<name>/), if it has one.")
    fixture_hash: str | None = Field(None, description="Its content hash.")
    plugins: dict[str, str] = Field(
        default_factory=dict, description="Arm name -> SHA-256 of its packed plugin checkout: a checkout whose "
        "content changed refuses a resume.")
    skills: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Arm name -> skill name -> SHA-256 of the packed skill, for arms or tracks "
        "with skills: skill content that changed refuses a resume.")
    subjects: dict[str, str] = Field(
        default_factory=dict, description="Arm name -> SHA-256 of the subject tarball its `subject:` packed to, for "
        "arms with their own subject (subject_sha256 is the other arms'): a source that changed refuses a resume.")
    arms: list[ArmSpec] = Field(description="The arms this case runs, each with its agent, command, model and context "
                                "resolved: what every trial folder <case>/<arm>/ of the label must agree with.")


class RunOptions(Record):
    """Every `bench run` option that changes what an agent does or how it is held (one experiment per label).

    Fields are the flags of the same name; --model-script and --judge-script are recorded by
    the SHA-256 of their bytes (the content, not the path, decides what is answered), --agent-env by names only.
    """

    agent: str
    agent_cmd: str | None = None
    model: str | None = None
    model_script_sha256: str | None = None
    max_turns: int | None = None
    timeout_s: int | None = None
    seat: str | None = None
    subject: str | None = None
    agent_env: list[str] = Field(default_factory=list)
    agent_network: bool = False
    judge_model: str | None = None
    judge_script_sha256: str | None = None
    dry_run: bool = Field(False, description="--dry-run: no agent ran; a label is a dry run or a real run, never both.")


class RunRecord(Record):
    """results/<label>/run.json: what a label was run with (resume refuses drift; verify knows its trials)."""

    schema_version: int = RUN_SCHEMA_VERSION
    label: str
    harness_version: str
    wheel_sha256: str
    options: RunOptions
    arms: list[ArmSpec] = Field(description="--arm as given, with the run's defaults applied; empty without --arm.")
    trials: int = Field(ge=1, description="Trials per case x arm: the most any run of this label asked for.")
    run_ids: list[str] = Field(description="Every run (invocation) that wrote trials into this label.")
    cases: dict[str, CaseInputs] = Field(description="Per case: its hashes, images, seat, subject and arms.")


# --- provenance.json ------------------------------------------------------------------


class HarnessRecord(Record):
    version: str
    git_sha: str | None
    dirty: bool
    wheel_sha256: str


class CaseRecord(Record):
    id: str = Field(description="The case, as <id>@<track> for a track of a tracked case.")
    track: str | None = Field(None, description="The authoring track, for a tracked case.")
    visible_hash: str
    goldens_hash: str
    fixture: str | None = Field(None, description="The shared fixture the workspace was built on (cases/_fixtures/<name>/).")
    fixture_hash: str | None = Field(None, description="Its content hash; also part of visible_hash.")


TOOLCHAIN_LABEL = "bench.toolchain."


def toolchains_of(labels: dict[str, str] | None) -> dict[str, str]:
    """tool -> version from an image's `bench.toolchain.<tool>` labels (images/<name>/image.toml sets them).

    Read off the image itself, not the recipe, so an image built on a toolchain image
    (a subject's project image, an agent layer, a staged workspace) reports what it inherited.
    """
    return {key[len(TOOLCHAIN_LABEL):]: value for key, value in sorted((labels or {}).items())
            if key.startswith(TOOLCHAIN_LABEL) and len(key) > len(TOOLCHAIN_LABEL)}


class ImageRecord(Record):
    name: str
    tag: str
    id: str
    content_digest: str | None = None
    toolchains: dict[str, str] = Field(
        default_factory=dict, description="Tool -> version from the image's `bench.toolchain.<tool>` labels, inherited "
        "from its parent images (e.g. node, typescript, pnpm; zig).")
    built_on: str | None = Field(
        None, description="A subject's project image only: what it was built from besides the subject (its recipe "
        "folder's digest, the parent image's content), so two project images that differ only by subject are known.")


class AgentRecord(Record):
    name: str
    version: str
    binary_sha256: str | None = None
    model: str | None = None


class EngineRecord(Record):
    version: str
    api_version: str

    def __init__(self, version: str, api_version: str, **data: object) -> None:
        super().__init__(version=version, api_version=api_version, **data)


class ExecutorRecord(Record):
    """Where a trial ran when bench handed it to a cluster: the executor, its node and that node's host.

    Recorded because a cluster's nodes are different machines: the engine in the same
    provenance is the node's engine, and the node says which machine to look at again.
    """

    name: Literal["ray"] = Field(description="The executor (`bench run --executor`).")
    node_id: str = Field(description="The executor's id of the node that ran the trial (a Ray node ID).")
    host: str = Field(description="That node's host name.")


class SubjectRecord(Record):
    """The package under test, always as a tarball whose SHA-256 is what was installed."""

    name: str = Field(description="The pin's name in provenance/subjects.toml.")
    package: str
    version: str
    source: Literal["registry", "path", "git"]
    origin: str = Field(description="name@version, the checkout path, or the git URL@commit.")
    tarball_sha256: str
    source_sha: str | None = Field(None, description="Commit the tarball was packed from (path or git).")
    dirty: bool | None = Field(None, description="The checkout had uncommitted changes when packed.")


class PluginRecord(Record):
    """A plugin checkout under test (an arm's `plugin:`), as the agent got it: a packed tar, read-only."""

    origin: str = Field(description="The checkout's absolute path on the host that ran the trial.")
    tarball_sha256: str = Field(description="SHA-256 of the deterministic tar it was packed to (.git left out).")
    files: int = Field(description="Regular files in it.")
    source_sha: str | None = Field(None, description="The checkout's commit, when it is a git checkout.")
    dirty: bool | None = Field(None, description="It had uncommitted changes when packed.")


class SkillRecord(Record):
    """A skill the agent got (a track's or its arm's), as a packed tar laid where its CLI discovers skills."""

    name: str = Field(description="The skill folder's name, as the CLI lists it.")
    source: Literal["track", "arm"] = Field(description="track: case.toml `tracks.<t>.skills`; arm: its `skills:`.")
    origin: str = Field(description="The folder it was packed from, on the host that ran the trial.")
    tarball_sha256: str = Field(description="SHA-256 of the deterministic tar it was packed to.")
    files: int


class Provenance(Record):
    """results/<label>/<case>/<arm>/trial-<n>/provenance.json"""

    schema_version: int = SCHEMA_VERSION
    harness: HarnessRecord
    case: CaseRecord
    arm: str
    arm_spec: ArmSpec | None = None
    lane: str = Field("local-docker", description="Where the trial ran and was graded (bench/lanes.py); compare "
                      "refuses to mix lanes unless --allow-drift.")
    images: dict[str, ImageRecord] = Field(description="By role: agent, grader, staged.")
    agent: AgentRecord
    seat: dict[str, str] = Field(
        default_factory=lambda: {"class": "none"},
        description="class (none / absent / fallback / unidentified / real), mode (the run's --seat), chromium, "
        "adapter, webgl, viewport, encoding. compare refuses to mix classes.")
    subject: SubjectRecord | None = None
    plugin: PluginRecord | None = Field(None, description="The arm's plugin checkout, for plugin arms.")
    skills: list[SkillRecord] = Field(default_factory=list, description="The skills the agent got, where its CLI "
                                      "discovers them (.claude/skills/ for Claude Code, .agents/skills/ otherwise).")
    engine: EngineRecord
    executor: ExecutorRecord | None = Field(
        None, description="The cluster node that ran the trial (`--executor ray`), whose engine `engine` is; "
        "absent for a trial run on the local engine.")
    limits: Limits
    command_line: list[str]
    timings: dict[str, float] = Field(default_factory=dict, description="Seconds per phase of this trial.")
    reproducibility: Level = "pinned"
    lock: dict[str, LockState] = Field(
        default_factory=dict,
        description="Every pinned image the run used (by name) against provenance/images.lock.json before the "
        "first trial: locked (same ID), content-equal (same content digest), drifted, unlocked (no entry).")
    recorded_at: datetime


class Manifest(Record):
    """SHA-256 of every file recorded beside it (itself excluded)."""

    schema_version: int = SCHEMA_VERSION
    files: dict[str, str]

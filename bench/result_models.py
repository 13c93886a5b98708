"""result.json: what a trial's checks observed and the verdict, as strict pydantic models.

Apart from bench/models.py (the other records) so each stays a size a reader takes in
at once; the JSON Schema is published with the others.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .gatespec import Category
from .models import SCHEMA_VERSION, Record, Verdict

AssessmentStatus = Literal["none", "unscored", "partial", "pass", "fail"]


class ExpectationResult(BaseModel):
    """One of the gate's semantic expectations as this trial stands: scored by an operator, or not yet."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    category: Category
    text: str = Field(description="Exactly as gate.toml words it; an assessment names it by this text.")
    status: Literal["pass", "fail", "unscored"] = Field(
        "unscored", description="From the trial's assessment.json; for mustAvoid, pass means the behaviour was "
        "avoided.")
    evidence: str = Field("", description="What the operator saw, from assessment.json.")


class Diagnostic(BaseModel):
    """One compiler diagnostic of a `compile` check, with paths relative to the submission."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    code: str = Field(description="TS<n> (the compiler's) or bench-<rule> (a refused construct).")
    category: str = "error"
    file: str | None = Field(None, description="Relative to the submission root; a subject file as node_modules/...")
    line: int | None = None
    column: int | None = None
    message: str


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # a grader reporting a field this harness does not know is ERROR

    name: str
    kind: str
    gating: bool
    passed: bool
    detail: str = ""
    duration_s: float = 0.0
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="Numeric quality metrics a gate reports (e.g. recall). `bench compare` holds each to the "
        "guardrail floor in its direction.",
    )
    directions: dict[str, Literal["higher", "lower"]] = Field(
        default_factory=dict, description="Per metric: higher (recall) or lower (a false-positive count) is better; "
        "a metric not named here is higher-is-better.")
    bounds: dict[str, float] = Field(
        default_factory=dict, description="The gate's bound per gating metric: a floor (higher) or a ceiling (lower).")
    decider: str | None = Field(None, description="What read the artifact (an Allium check: harness-parser or allium-cli).")
    review: dict[str, list[str]] = Field(
        default_factory=dict, description="Named lists for a person (found, missed, confabulated, false positives, ...).")
    incomplete: bool = Field(False, description="The check could not observe (seat refused): INCOMPLETE, not FAIL.")
    skipped: bool = Field(False, description="Not run at all: the check is for other lanes, or asks a model in a dry "
                          "run (bench/lanes.py); never a failure, counted apart. passed is false.")
    seat: dict[str, str] | None = Field(None, description="A browser check's seat: class, chromium, adapter, ...")
    timings: dict[str, float] = Field(
        default_factory=dict, description="A browser check's seconds per stage: launch, seat, build, ready, steps, "
        "measure (where its time went; never a metric).")
    diagnostics: list[Diagnostic] = Field(
        default_factory=list, description="A compile check's compiler diagnostics and refused constructs, in order.")
    package: dict[str, str] | None = Field(
        None, description="A compile check's installed subject: name, version, tarball_sha256.")
    files: list[str] = Field(default_factory=list, description="The submission files a compile check typechecked.")
    judge: dict[str, str] | None = Field(
        None, description="A judge check's model, endpoint (scripted:sha256:<script> or the provider's URL) and "
        "prompt_sha256: the SHA-256 of the exact system prompt and messages sent (canonical JSON), so results judged "
        "with different prompts are told apart.")
    predicates: list[dict] = Field(
        default_factory=list,
        description="A browser check's predicates: name, kind, passed, values (the numbers), frames (saved as "
        "artifacts/<check>/<frame>.png), detail.",
    )


class TrialResult(Record):
    """results/<label>/<case>/<arm>/trial-<n>/result.json"""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    label: str
    case: str
    arm: str
    trial: int
    agent: str
    lane: str = Field("local-docker", description="Where the trial ran and was graded: local-docker, gpu-seat (--seat "
                      "gpu), or a remote executor's name (bench/lanes.py); records before lanes were local-docker.")
    dry_run: bool = Field(False, description="`bench run --dry-run`: no agent ran, the untouched scaffold was graded; "
                          "its verdict says whether the harness path works, never how an agent did.")
    verdict: Verdict
    reason: str = Field("", description="Why, in one line, when not PASS.")
    checks: list[CheckResult] = Field(default_factory=list)
    agent_exit_code: int | None = None
    timed_out: bool = False
    interrupted: bool = Field(False, description="The run was stopped before this trial finished.")
    export_bytes: int | None = None
    pinned_changes: list[str] | None = Field(
        None, description="What the agent changed under the case's pinned paths, as the engine's diff of its "
        "container saw it (\"A|C|D path\"), at most 200; graders used the image's copy regardless. None: the case "
        "pins nothing, or the work was made outside bench (not observed).")
    pinned_changes_total: int | None = Field(None, description="How many pinned changes there were in all.")
    phases: dict[str, float] = Field(default_factory=dict, description="Seconds per phase.")
    usage: dict[str, float] = Field(
        default_factory=dict,
        description="What the agent consumed, when its adapter knows (read from its transcript): turns, "
        "input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens, cost_usd, duration_s.",
    )
    agent_status: str | None = Field(
        None, description="How the agent CLI's run ended, from its transcript: completed, capped (a turn or budget "
        "limit), timeout (killed at the wall clock) or error; None for agents without a transcript format.")
    session_id: str | None = Field(None, description="The agent CLI's own session id, from its transcript.")
    started_at: datetime
    finished_at: datetime | None = None
    expectations: list[ExpectationResult] = Field(
        default_factory=list, description="The gate's semantic expectations in its order, each unscored until "
        "`bench assess` scores it (bench/assessment.py).")
    assessment_status: AssessmentStatus = Field(
        "none", description="none: the gate has no expectations; unscored: none scored; partial: some scored, none "
        "failed; pass: all scored and passed; fail: a scored one failed.")
    ok: bool = Field(False, description="The combined outcome: verdict PASS and assessment_status not fail.")

    @model_validator(mode="before")
    @classmethod
    def _ok(cls, data: object) -> object:
        """A record written before `ok` existed had no expectations: its ok is its verdict."""
        if isinstance(data, dict) and "ok" not in data:
            data = {**data, "ok": data.get("verdict") in (Verdict.PASS, "PASS")
                    and data.get("assessment_status", "none") != "fail"}
        return data

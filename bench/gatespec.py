"""gate.toml: the withheld checks, one model per check kind and per pixel predicate.

Kept apart from the records in models.py because this is the richest file a case
author writes: every field carries the description the published JSON Schema shows,
and the host validates it all before a plan reaches the stdlib-only grader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator, model_validator

from .allium.manifest import DistillThresholds, WeedThresholds
from .check_base import CheckBase
from .compile_spec import CompileCheck
from .harness_spec import HarnessCheck
from .judge_spec import JudgeCheck
from .metrics_spec import MetricsSpec
from .models import Strict


class CommandCheck(CheckBase):
    """Run a shell command in the workspace; its exit code and output decide."""

    kind: Literal["command"]
    run: str = Field(description="Shell command, run with `sh -c` in /workspace.")
    expect_exit: int = Field(0, description="The exit code the command must end with.")
    stdout_matches: list[str] = Field(default_factory=list, description="Regexes stdout must match (searched, "
                                      "multiline: ^ and $ match at each line).")
    stderr_matches: list[str] = Field(default_factory=list, description="Regexes stderr must match (likewise).")
    timeout_s: int = Field(120, ge=1, description="Wall clock for the command; past it the check's container is "
                           "killed and the check fails.")
    withheld: list[str] = Field(
        default_factory=list, description="Files or folders of goldens/<case>/ this check needs (a withheld "
        "test). Each check runs in a fresh container of its own holding only these, root-owned and read-only, "
        "under a random path named by $BENCH_WITHHELD. Never solution/, answers/ or gate.toml.")
    nonce: bool = Field(
        False, description="The check passes only if stdout has a line equal to $BENCH_NONCE, a fresh random "
        "value per check: a withheld test prints it last, so linked code that fakes the output and exits "
        "before the test's main fails.")

    @field_validator("withheld")
    @classmethod
    def _withheld(cls, value: list[str]) -> list[str]:
        return [goldens_path(path) for path in value]


def goldens_path(path: str) -> str:
    """A plain path under goldens/<case>/ that a check may read: never the solution, the reference answers
    (a grader holding them could grade by them) or the gate itself."""
    parts = Path(path).parts
    if not parts or Path(path).is_absolute() or ".." in parts:
        raise ValueError(f"{path!r} is not a plain path relative to goldens/<case>/")
    if parts[0] in ("solution", "answers", "gate.toml"):
        raise ValueError(f"{path!r}: the reference solution and gate.toml never reach a grader, nor do the reference "
                         "answers")
    return path


def workspace_file(path: str | None) -> str | None:
    """A file path inside the workspace, or None (the manifest's own path is used)."""
    if path is not None and (Path(path).is_absolute() or ".." in Path(path).parts or not Path(path).parts):
        raise ValueError(f"{path!r} is not a file path inside the workspace")
    return path


class GrepCheck(CheckBase):
    """A regex must (or must not) match in the files a glob selects."""

    kind: Literal["grep"]
    files: list[str] = Field(min_length=1, description="Globs relative to the workspace (** allowed).")
    pattern: str = Field(description="A Python regular expression, searched in each file (multiline: ^ and $ match at "
                         "each line).")
    must_match: bool = Field(True, description="False: the pattern must match nowhere.")

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value


Region = tuple[float, float, float, float]


class PredicateBase(Strict):
    name: str = Field(description="Shown in the verdict with the numbers it decided on.")
    region: Region = Field((0.0, 0.0, 1.0, 1.0), description="x0, y0, x1, y1 as fractions of the frame.")

    @field_validator("region", "against", check_fields=False)
    @classmethod
    def _box(cls, value: Region) -> Region:
        x0, y0, x1, y1 = value
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise ValueError(f"region {list(value)} is not 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1")
        return value

    @field_validator("rules", check_fields=False)
    @classmethod
    def _rules(cls, value: list[str]) -> list[str]:
        from .gates.pixels import parse_rule

        for text in value:
            parse_rule(text)
        return value

    def frame_names(self) -> list[str]:
        return [name for f in ("frame", "frames", "baseline") for name in _as_list(getattr(self, f, None))]


def _as_list(value: str | list[str] | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


FRAME = "The frame decided on: a `capture` step's name, or <name>-<i> for the i-th frame of a `sample` step."
RULES = "Colour rules, all of which must hold: r>110, r>1.7g, b>r+30, g<=80 (channels 0–255)."


class RegionPredicate(PredicateBase):
    """The region's mean colour satisfies every rule (r>110, r>1.7g, b>r+30); negate: not all."""
    kind: Literal["region"]
    frame: str = Field(description=FRAME)
    rules: list[str] = Field(min_length=1, description=RULES + " Applied to the region's mean R, G, B.")
    negate: bool = Field(False, description="True: passes when not every rule holds (the colour is absent).")


class ContrastPredicate(PredicateBase):
    """sum(mean RGB of region) - sum(mean RGB of against) > min."""
    kind: Literal["contrast"]
    frame: str = Field(description=FRAME)
    against: Region = Field(description="The region compared with, x0, y0, x1, y1 as fractions of the frame.")
    min: float = Field(description="How much brighter `region` must be: its R+G+B mean sum minus `against`'s "
                       "(0–765 scale).")


class StillPredicate(PredicateBase):
    """Every consecutive pair of frames differs by a mean absolute difference < max."""
    kind: Literal["still"]
    frames: list[str] = Field(min_length=2, description="Two or more frames, in order.")
    max: float = Field(description="The largest mean absolute difference (R, G, B, 0–255) allowed between consecutive "
                       "frames inside `region`.")


class DifferPredicate(PredicateBase):
    """frames[0] vs frames[1] differ by > min (and by > times x the baseline pair's difference)."""
    kind: Literal["differ"]
    frames: list[str] = Field(min_length=2, max_length=2, description="The two frames compared (before, after).")
    min: float = Field(description="Their mean absolute difference (R, G, B, 0–255) inside `region` must exceed it.")
    baseline: list[str] | None = Field(None, min_length=2, max_length=2, description="Two frames showing how much "
                                       "the scene changes on its own (e.g. with no input between them).")
    times: float = Field(1.0, description="With `baseline`: the difference must also exceed times x the baseline's.")


class CentroidPredicate(PredicateBase):
    """The centroid of the pixels matching rules moves along axis by > moves_min (fraction), then settles."""
    kind: Literal["centroid"]
    series: str = Field(description="A `sample` step's name: its frames in order.")
    rules: list[str] = Field(min_length=1, description=RULES + " Applied to each pixel: the mask whose centroid moves.")
    axis: Literal["x", "y"] = Field("y", description="The axis the centroid is followed along (y grows downwards).")
    moves_min: float = Field(description="From the first frame to the last, the centroid must move by more than this "
                             "fraction of the frame (positive: down or right).")
    settles_max: float = Field(1.0, description="Between the last two frames it must move less than this fraction "
                               "(it has come to rest).")
    min_share: float = Field(0.001, description="The mask must cover at least this share of `region` in every frame.")


class ProfilePredicate(PredicateBase):
    """Brightness along axis inside region swings by > peak_to_peak_min with >= crossings_min band crossings."""
    kind: Literal["profile"]
    frame: str = Field(description=FRAME)
    axis: Literal["x", "y"] = Field("x", description="The axis the brightness profile runs along (64 slices).")
    peak_to_peak_min: float = Field(description="The profile's brightest slice minus its darkest ((R+G+B)/3, 0–255) "
                                    "must exceed it.")
    crossings_min: int = Field(2, description="At least this many crossings of the profile's mid level (beyond a "
                               "15 % band): stripes, not one gradient.")


Predicate = Annotated[Union[RegionPredicate, ContrastPredicate, StillPredicate, DifferPredicate,
                            CentroidPredicate, ProfilePredicate], Field(discriminator="kind")]
ACTIONS = ("capture", "sample", "wait_ms", "press", "click", "drag", "reload", "fresh_load")


class Step(Strict):
    """One action of a browser check, in order; exactly one action field per step."""

    capture: str | None = Field(None, description="Capture a frame under this name.")
    sample: str | None = Field(None, description="Capture `count` frames `every_ms` apart as <name>-0, <name>-1, ...")
    count: int = Field(4, ge=2, le=20, description="With `sample`: how many frames.")
    every_ms: int = Field(0, ge=0, description="With `sample`: each frame at least this long after the previous began "
                          "(0: as fast as frames can be captured).")
    wait_ms: int | None = Field(None, ge=0, le=60000, description="Wait this long (ms), e.g. for an animation to run.")
    press: str | None = Field(None, description="A key, as Playwright names it: Space, Digit3, KeyA, ArrowLeft.")
    click: tuple[float, float] | None = Field(None, description="x, y as fractions of the viewport (focuses a canvas).")
    drag: Region | None = Field(None, description="x0, y0 -> x1, y1 as fractions of the viewport, left button.")
    drag_steps: int = Field(12, ge=1, le=100, description="With `drag`: the mouse moves in this many steps.")
    reload: bool = Field(False, description="Reload the page, then wait until it is ready again.")
    fresh_load: bool = Field(False, description="Close the page and open the URL in a new one (same storage).")

    @model_validator(mode="after")
    def _one_action(self) -> "Step":
        chosen = [name for name in ACTIONS if getattr(self, name) not in (None, False)]
        if len(chosen) != 1:
            raise ValueError(f"a step takes exactly one of {', '.join(ACTIONS)}; got {chosen or 'none'}")
        return self

    def frame_names(self) -> list[str]:
        if self.sample:
            return [f"{self.sample}-{i}" for i in range(self.count)]
        return [self.capture] if self.capture else []


class BrowserCheck(CheckBase):
    """Build and serve the project, drive it in Chromium at 1280x720@1, decide on pixel predicates."""

    kind: Literal["browser"]
    build: str | None = Field(None, description="Shell command run in /workspace first (e.g. `bunx shallot build`).")
    build_timeout_s: int = Field(240, ge=1, description="Wall clock for `build`; past it the check fails.")
    serve: str = Field(description="Folder, relative to the workspace, served as static files on 127.0.0.1.")
    path: str = Field("/", description="URL path opened on the server.")
    ready: Literal["signal-or-stable", "signal-or-structured"] = Field(
        "signal-or-stable", description="Readiness: window.__harness.ready, else two identical structured frames "
        "(stable) or the first structured frame (for scenes that move on their own).")
    ready_timeout_s: int = Field(90, ge=1, description="How long the page may take to become ready (each load).")
    timeout_s: int = Field(300, ge=1, description="Wall clock for the whole check, build included.")
    steps: list[Step] = Field(min_length=1, description="What to do on the ready page, in order: capture frames, "
                              "press keys, click, drag, wait, reload.")
    predicates: list[Predicate] = Field(min_length=1, description="Pixel predicates over the captured frames, decided "
                                        "on the host; every one must hold.")

    @field_validator("serve")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = Path(value).parts
        if not parts or Path(value).is_absolute() or ".." in parts or parts == (".",):
            raise ValueError(f"{value!r} is not a folder inside the workspace (e.g. dist)")
        return value

    @model_validator(mode="after")
    def _frames_exist(self) -> "BrowserCheck":
        captured = {name for step in self.steps for name in step.frame_names()}
        series = {step.sample for step in self.steps if step.sample}
        for predicate in self.predicates:
            wanted = [predicate.series] if isinstance(predicate, CentroidPredicate) else predicate.frame_names()
            known = series if isinstance(predicate, CentroidPredicate) else captured
            missing = [name for name in wanted if name not in known]
            if missing:
                raise ValueError(f"predicate {predicate.name!r} uses {missing}, which no step captures "
                                 f"(captured: {sorted(captured)})")
        return self


class AlliumCheck(CheckBase):
    """Shared by the Allium kinds: scored on the host from the exported workspace tar; nothing runs.

    The artifact is read only as a regular file member of the tar (a link is never
    followed) and only up to ``max_kb``; a larger or missing artifact is the agent's FAIL.
    """

    manifest: str = Field(description="The golden data, a file under goldens/<case>/ (read on the host only).")
    path: str | None = Field(None, description="The artifact in the workspace; default: the manifest's path.")
    max_kb: int = Field(256, ge=1, le=16384, description="The largest artifact scored (KiB); larger is FAIL. A "
                        "faithful spec of a 1,000-line codebase is ~10 KiB; the cap bounds scoring time on the host.")

    @field_validator("manifest")
    @classmethod
    def _manifest(cls, value: str) -> str:
        return goldens_path(value)

    @field_validator("path")
    @classmethod
    def _artifact(cls, value: str | None) -> str | None:
        return workspace_file(value)


class AlliumDistillCheck(AlliumCheck):
    """A distilled Allium spec against a golden manifest: recall, confabulation, exclusions, structure."""

    kind: Literal["allium-distill"]
    manifest: str = Field("manifest.toml", description="The distill manifest, a file under goldens/<case>/ (read on "
                          "the host only): what a faithful spec of the fixture contains, and must not.")
    thresholds: DistillThresholds | None = Field(
        None, description="Bounds this gate sets; any left out keep the manifest's quality_pass (itself the seed's).")


class AlliumWeedCheck(AlliumCheck):
    """A weed findings report against the planted divergences: divergence recall and false positives."""

    kind: Literal["allium-weed"]
    manifest: str = Field("divergences.toml", description="The divergence list, a file under goldens/<case>/ (read "
                          "on the host only): the planted divergences and the judgement calls excused.")
    thresholds: WeedThresholds | None = Field(
        None, description="Bounds this gate sets; any left out keep the divergence list's gate (itself the seed's).")


Check = Annotated[Union[CommandCheck, GrepCheck, BrowserCheck, AlliumDistillCheck, AlliumWeedCheck,
                        CompileCheck, JudgeCheck, HarnessCheck],
                  Field(discriminator="kind")]


Category = Literal["mustDemonstrate", "mustAvoid"]


class Expectation(Strict):
    """A semantic expectation an operator scores after the trial (`bench assess`); it never decides the verdict.

    Checks decide what can be observed; whether a design materially demonstrates an idea
    (or avoids a bad one) takes a person, so it is recorded beside the verdict, never in it.
    """

    category: Category = Field(
        description="mustDemonstrate: the work must materially show this. mustAvoid: the work must not do this "
        "(an assessment's `pass` means it was avoided).")
    text: str = Field(description="The expectation in one line. An assessment names it by this exact text, so "
                      "changing it orphans earlier assessments.")

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an expectation's text is empty: write what the operator scores")
        return value


class TrackGate(Strict):
    """gate.toml `[tracks.<track>]`: the checks only that track's trials get, after the shared ones."""

    checks: list[Check] = Field(default_factory=list, description="Track-only checks, run after the shared checks.")
    image: str | None = Field(None, description="The track's grader image (default: the gate's, else the track's).")


class GateSpec(Strict):
    """goldens/<id>/gate.toml: the withheld checks. The agent never sees this file."""

    image: str | None = Field(None, description="Grader image; defaults to the case's image.")
    timeout_s: int = Field(600, ge=1, description="Wall clock for the whole gate, every check together; a check not "
                           "reached in it fails.")
    checks: list[Check] = Field(default_factory=list, description="Shared checks: every trial (every track) runs them.")
    tracks: dict[str, TrackGate] = Field(
        default_factory=dict, description="Per authoring track (case.toml `tracks`): its own checks and grader image.")
    expectations: list[Expectation] = Field(
        default_factory=list, description="Semantic expectations, in the order every result lists them; scored by "
        "an operator with `bench assess`, each starting `unscored`.")
    metrics: MetricsSpec = Field(default_factory=MetricsSpec, description="What `bench metrics` counts in the "
                                 "transcripts: compliance commands and teaching errors (bench/metrics_spec.py).")

    @model_validator(mode="after")
    def _some_check(self) -> "GateSpec":
        empty = [name for name, track in self.tracks.items() if not self.checks and not track.checks]
        if (not self.checks and not self.tracks) or empty:
            where = f" for track(s) {', '.join(empty)}" if empty else ""
            raise ValueError(f"no check{where}: add [[checks]] (shared) or [[tracks.<track>.checks]]")
        return self

    def for_track(self, track: str) -> "GateSpec":
        """The gate one track's trials are graded by: the shared checks, then the track's own."""
        own = self.tracks.get(track, TrackGate())
        return self.model_copy(update={"checks": [*self.checks, *own.checks], "tracks": {},
                                       "image": own.image or self.image})

    @field_validator("expectations")
    @classmethod
    def _distinct(cls, value: list[Expectation]) -> list[Expectation]:
        seen = set()
        for item in value:
            if (item.category, item.text) in seen:
                raise ValueError(f"{item.category} {item.text!r} is listed twice: an assessment could not say which")
            seen.add((item.category, item.text))
        return value

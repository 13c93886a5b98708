"""gate.toml ``[metrics]``: what `bench metrics` looks for in a case's transcripts (bench/authoring_metrics.py).

Why in gate.toml, withheld: these patterns say what is being measured about how the
agent worked (which of its commands count as compliance checks, which diagnostics are
the ones the subject's docs or skills are meant to teach). An agent that could read
them could play to them, so they live with the other withheld files; changing them
changes the goldens hash, like any withheld change. They never decide a verdict.

Every pattern is a Python regular expression, searched (``re.search``) in each shell
command the agent ran (``compliance``) or in each tool result it got back
(``teaching_errors``). A track adds its own under ``[metrics.tracks.<track>]``, after
the shared ones, as its checks follow the shared checks::

    [metrics]
    compliance = ['\\bnpm test\\b']
    teaching_errors = ['NS1004']

    [metrics.tracks.zig]
    compliance = ['zig build test', 'zig test']
    teaching_errors = ["no member named '\\w+'"]
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from .models import Strict


def _regexes(value: list[str]) -> list[str]:
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression ({exc}); write a Python regex "
                             r"(escape '.', '(', '\' and the like)") from None
    return value


class TrackMetrics(Strict):
    """``[metrics.tracks.<track>]``: patterns only that track's trials are searched for, after the shared ones."""

    compliance: list[str] = Field(default_factory=list, description="Regexes matching the track's compliance commands.")
    teaching_errors: list[str] = Field(default_factory=list, description="Regexes matching the track's teaching errors.")

    _compliance = field_validator("compliance", "teaching_errors")(_regexes)


class MetricsSpec(Strict):
    """``[metrics]``: the shared patterns and each track's own."""

    compliance: list[str] = Field(
        default_factory=list, description="Regexes searched in every shell command the agent ran: a match is a "
        "compliance run (e.g. 'zig build test', '\\btsc\\b', 'npm test'); it passed when the command exited 0.")
    teaching_errors: list[str] = Field(
        default_factory=list, description="Regexes searched in every tool result the agent got: a result matching "
        "any is one teaching-error encounter (the diagnostics the subject's docs or skills should teach).")
    tracks: dict[str, TrackMetrics] = Field(
        default_factory=dict, description="Per authoring track (case.toml `tracks`): patterns added to the shared ones.")

    _patterns = field_validator("compliance", "teaching_errors")(_regexes)

    def for_track(self, track: str | None) -> TrackMetrics:
        """The patterns one track's trials are searched for: the shared ones, then the track's."""
        own = self.tracks.get(track, TrackMetrics()) if track else TrackMetrics()
        return TrackMetrics(compliance=[*self.compliance, *own.compliance],
                            teaching_errors=[*self.teaching_errors, *own.teaching_errors])

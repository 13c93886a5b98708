"""What a scorer returns: metrics that each declare their direction, and a verdict with reasons.

The direction is what compare's guardrail floor needs: a recall's worst run may
not fall, a false-positive count's worst run may not rise. A metric is *gating*
when a threshold decided on it; the others are reported for review only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..models import Record

Direction = Literal["higher", "lower"]


class Metric(Record):
    value: float
    direction: Direction = Field(description="higher: more is better (recall); lower: less is better (counts).")
    gating: bool = Field(False, description="True when a threshold on this metric decided the verdict.")
    threshold: float | None = Field(None, description="The bound it was held to: a floor (higher) or a ceiling (lower).")

    def holds(self) -> bool:
        if self.threshold is None:
            return True
        return self.value >= self.threshold if self.direction == "higher" else self.value <= self.threshold


class AlliumScore(Record):
    """One artifact scored against its golden data."""

    schema_version: Literal[1] = 1
    kind: Literal["distill", "weed"]
    passed: bool
    reasons: list[str] = Field(description="Why it failed, one line per broken bound; empty on a pass.")
    metrics: dict[str, Metric]
    decider: str | None = Field(None, description="What read the spec: harness-parser or allium-cli (distill).")
    review: dict[str, list[str]] = Field(
        default_factory=dict, description="Named lists for a human: found / missed items, invented entities, ...")

    def value(self, name: str) -> float:
        return self.metrics[name].value


def metric(value: float, direction: Direction, threshold: float | None = None) -> Metric:
    return Metric(value=value, direction=direction, gating=threshold is not None, threshold=threshold)


def broken(metrics: dict[str, Metric]) -> list[str]:
    """One reason per gating metric outside its bound, naming the metric, its value and the bound."""
    reasons = []
    for name, m in metrics.items():
        if not m.holds():
            relation = "<" if m.direction == "higher" else ">"
            reasons.append(f"{name} {_show(m.value)} {relation} {_show(m.threshold)}")
    return reasons


def _show(value: float | None) -> str:
    return f"{value:.3g}" if value is not None and value != int(value) else str(int(value or 0))

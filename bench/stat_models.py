"""The statistics records: what bench/stats.py computes, summary.json holds and `bench compare` reports.

Kept apart from bench/models.py (the records of one trial and one run) because they
are derived: every one of them can be recomputed from the trials' result.json files,
which is how verify-provenance checks a summary.json.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .models import SCHEMA_VERSION, Record, Strict, Verdict


# --- statistics (bench/stats.py computes them; summaries and compare report them) ---------


class MetricSpread(Strict):
    """Median and full range of one metric over the valid (PASS or FAIL) trials."""

    median: float
    low: float
    high: float
    n: int = Field(description="Trials that reported the metric.")


class FloorRow(Strict):
    """The guardrail floor for one metric: the candidate's worst trial against the baseline's."""

    metric: str
    baseline_worst: float | None = Field(description="None when either side has no value: nothing to compare.")
    candidate_worst: float | None
    holds: bool = Field(description="The candidate's worst is no worse than the baseline's (a tie holds).")
    direction: Literal["higher", "lower"] = Field(
        "higher", description="Which way is better: worst is the minimum (higher) or the maximum (lower).")


class CheckTally(Record):
    """How often one check passed, over the trials that ran it; the trials that skipped it apart."""

    name: str
    gating: bool
    passed: int
    total: int = Field(description="Trials that ran the check (a skipped one did not).")
    skipped: int = Field(0, description="Trials that skipped it: graded on another lane, or a dry run's model check.")
    metrics: dict[str, MetricSpread] = Field(default_factory=dict, description="The check's own metrics.")


class ArmSummary(Record):
    case: str
    arm: str
    counts: dict[Verdict, int]
    pass_rate: float | None = Field(description="PASS / (PASS + FAIL); None when neither.")
    pass_interval: tuple[float, float] | None = Field(
        None, description="Wilson 95% interval on pass_rate; None when no trial was PASS or FAIL."
    )
    pass_at_k: dict[int, float] = Field(
        default_factory=dict, description="Unbiased pass@k for k in 1, 3, 5, 10 where PASS + FAIL >= k."
    )
    checks: list[CheckTally] = Field(default_factory=list, description="Per check, gating or not.")
    metrics: dict[str, MetricSpread] = Field(
        default_factory=dict, description="wall_s (sum of phases) and every usage key, over valid trials."
    )


class Summary(Record):
    """results/<label>/summary.json"""

    schema_version: int = SCHEMA_VERSION
    label: str
    run_id: str
    created_at: datetime
    harness_version: str | None = Field(None, description="The harness that ran the label (run.json's).")
    fixtures: dict[str, str] = Field(
        default_factory=dict, description="Fixture name -> content hash, for the label's cases built on one: quote "
        "it with the numbers, so others can tell whether they trialled the same code.")
    images_built: list[str] = Field(default_factory=list)
    arms: list[ArmSummary]

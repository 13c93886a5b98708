"""The `external` agent: work made outside bench (a person, an IDE agent, another harness).

`bench grade CASE DIR` records a trial whose agent is this one. Nothing runs in a
container for it: the lifecycle packs the graded folder as the exported workspace
(TrialSpec.submission, bench/submission.py), then grades and records it like any other
trial, so its results verify and compare like a run's. `bench run --agent external`
is refused: there is no folder to grade.
"""

from __future__ import annotations

import bench

from ..cases import Case
from ..models import AgentRecord
from .base import AgentPlan

EXTERNAL = "external"


class ExternalAgent:
    name = EXTERNAL

    def record(self) -> AgentRecord:
        """The harness version that packed and graded the folder; what made the work is not known to bench."""
        return AgentRecord(name=self.name, version=bench.__version__)

    def plan(self, case: Case, arm: str) -> AgentPlan:
        return AgentPlan(command=["true"])  # never run: the trial's submission is packed instead

"""The `null` agent changes nothing: every gate must FAIL it, or the gate proves nothing."""

from __future__ import annotations

import bench

from ..cases import Case
from ..models import AgentRecord
from .base import AgentPlan


class NullAgent:
    name = "null"

    def record(self) -> AgentRecord:
        return AgentRecord(name=self.name, version=bench.__version__)

    def plan(self, case: Case, arm: str) -> AgentPlan:
        return AgentPlan(command=["true"])

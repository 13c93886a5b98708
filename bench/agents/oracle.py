"""The `oracle` agent applies the case's reference solution: every gate must PASS it.

It is the one agent given part of the goldens, and only solution/: the gate itself
stays out of its container like any other agent's.
"""

from __future__ import annotations

import bench

from ..cases import Case
from ..errors import CaseError
from ..models import AgentRecord
from ..sandbox import WORKSPACE
from .base import AgentPlan

SOLUTION = "/opt/bench/solution"


class OracleAgent:
    name = "oracle"

    def record(self) -> AgentRecord:
        return AgentRecord(name=self.name, version=bench.__version__)

    def plan(self, case: Case, arm: str) -> AgentPlan:
        if not case.solution.is_dir():
            raise CaseError(case.solution, "solution/", "does not exist", "add the reference solution for --agent oracle")
        return AgentPlan(
            command=["sh", "-c", f"cp -a {SOLUTION}/. {WORKSPACE}/ && echo oracle applied the reference solution"],
            trees={SOLUTION: case.solution},
        )

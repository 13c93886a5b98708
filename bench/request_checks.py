"""A run request checked before anything is built: every bad flag is one line naming it and the fix.

A label is a name, not a path: it becomes a folder under --results, so `..`, `a/b`, an
absolute path or an empty string would write somewhere else or nowhere the user meant
(issue 16). A negative timeout would be charged to the agent as a FAIL, and a flag
that the chosen agent ignores would silently run something other than what was asked.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .errors import UsageError

if TYPE_CHECKING:
    from .run import RunRequest

LABEL = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")
PER_CORE = 4  # trials mostly wait on containers; beyond this many per core they only starve each other


def check_label(label: str) -> str:
    """The label, or UsageError saying what a label may be."""
    if not LABEL.match(label):
        raise UsageError(f"--label {label!r} is not a label name: use letters, digits, '.', '_' and '-' "
                         "(not starting with '.', at most 100), e.g. --label baseline-1")
    return label


def check_request(request: RunRequest) -> None:
    """Every run flag that cannot mean what was asked, refused before anything runs."""
    if not request.cases and not request.tags:
        raise UsageError("name the CASES to run, or --tag TAG to run every case carrying it (`bench cases` lists both)")
    if request.label is not None:
        check_label(request.label)
    if request.trials < 1:
        raise UsageError("--trials must be at least 1")
    if request.timeout_s is not None and request.timeout_s < 1:
        raise UsageError(f"--timeout {request.timeout_s}: the agent's wall clock must be at least 1 second")
    cores = os.cpu_count() or 1
    if request.concurrency is not None and not 1 <= request.concurrency <= PER_CORE * cores:
        raise UsageError(f"--concurrency {request.concurrency}: give 1 to {PER_CORE * cores} "
                         f"({PER_CORE} per core, {cores} cores here)")


def check_agent_cmd(request: RunRequest, arm_agents: list[str | None]) -> None:
    """--agent-cmd feeds the command agent; given to a run where no arm runs it, it would be silently ignored."""
    agents = {agent or request.agent for agent in arm_agents} or {request.agent}
    if request.agent_cmd and "command" not in agents:
        raise UsageError(f"--agent-cmd is only used by the command agent, and this run's agents are "
                         f"{', '.join(sorted(agents))}: drop --agent-cmd or add --agent command")

"""What every gate check shares, apart from bench/gatespec.py so a check kind can live in a module of its own.

gatespec.py gathers every kind into the ``Check`` union; a kind defined elsewhere (the
judge's, bench/judge_spec.py) imports its base from here, so neither module imports the
other half-initialised.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from .lanes import LANES, check_lanes
from .models import Strict


class CheckBase(Strict):
    name: str = Field(description="Shown in results and per-check pass counts.")
    gating: bool = Field(True, description="False: reported, but does not decide the verdict.")
    lanes: list[str] = Field(
        default_factory=list, description=f"The lanes this check is graded on ({', '.join(LANES)}); on any other it is "
        "skipped (recorded, never failed). Empty: every lane (bench/lanes.py).")

    @field_validator("lanes")
    @classmethod
    def _lanes(cls, value: list[str]) -> list[str]:
        return check_lanes(value)

"""What every gate check shares, apart from bench/gatespec.py so a check kind can live in a module of its own.

gatespec.py gathers every kind into the ``Check`` union; a kind defined elsewhere (the
judge's, bench/judge_spec.py) imports its base from here, so neither module imports the
other half-initialised.
"""

from __future__ import annotations

from pydantic import Field

from .models import Strict


class CheckBase(Strict):
    name: str = Field(description="Shown in results and per-check pass counts.")
    gating: bool = Field(True, description="False: reported, but does not decide the verdict.")

"""Lanes: where a trial ran and was graded, and which checks a lane grades.

Why a lane on every record: the same gate can be graded in places that observe
different things (a local engine without a GPU, a seat with one, later a remote
executor), so a result is only read right beside where it was made. A check may name
the lanes it is meaningful on (``lanes = [...]`` in gate.toml, on every kind: see
bench/check_base.py); on any other lane it is **skipped**: not run at all, recorded as
skipped, never failed, so "fails" and "not graded here" stay apart. A dry run
(`bench run --dry-run`) skips the checks that would call a model (judge) the same way.

The lane names a check may declare are the ones below, so a typo is refused rather
than skipping the check everywhere; a record's lane is read as any plain name, so a
result written by a newer executor still reads.
"""

from __future__ import annotations

LOCAL = "local-docker"
GPU = "gpu-seat"
RAY = "ray"  # a remote executor; named so gates can declare it before it ships
LANES = (LOCAL, GPU, RAY)
MODEL_KINDS = ("judge",)  # check kinds that call a model: skipped in a dry run


def lane_for(seat: str | None) -> str:
    """The lane of a local run: the GPU seat when the run asked for one (``--seat gpu``), else local Docker."""
    return GPU if seat == "gpu" else LOCAL


def check_lanes(names: list[str]) -> list[str]:
    """A check's declared lanes, or ValueError naming the unknown one and the known ones."""
    for name in names:
        if name not in LANES:
            raise ValueError(f"{name!r} is not a lane; lanes are {', '.join(LANES)}")
    if len(set(names)) != len(names):
        raise ValueError("a lane is named twice")
    return names


def skip_reason(lanes: list[str], kind: str, lane: str, dry_run: bool) -> str | None:
    """Why a check is not run on this lane (or in a dry run), or None when it runs."""
    if lanes and lane not in lanes:
        return f"not graded on the {lane} lane (the check is for {', '.join(lanes)})"
    if dry_run and kind in MODEL_KINDS:
        return "not graded in a dry run: it would call a model"
    return None

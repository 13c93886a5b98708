"""Resume: the same command with the same label continues, or refuses and says why.

A label's run.json records what its trials were run with. Continuing is only honest
when nothing that decides a verdict changed: the cases and goldens, the images, the
harness, the arms and the timeout. Adding new cases to a label is allowed.
"""

from __future__ import annotations

from pathlib import Path

from .errors import UsageError
from .models import RunRecord


def differences(old: RunRecord, new: RunRecord) -> list[str]:
    """Every field of the record that differs, for the cases both runs share."""
    found = []
    for field in ("harness_version", "wheel_sha256", "timeout_s"):
        if getattr(old, field) != getattr(new, field):
            found.append(f"{field}: recorded {getattr(old, field)!r}, now {getattr(new, field)!r}")
    if [a.model_dump() for a in old.arms] != [a.model_dump() for a in new.arms]:
        found.append(f"arms: recorded {_arms(old)}, now {_arms(new)}")
    for case in sorted(set(old.cases) & set(new.cases)):
        for key in sorted(set(old.cases[case]) | set(new.cases[case])):
            before, after = old.cases[case].get(key), new.cases[case].get(key)
            if before != after:
                found.append(f"{case} {key}: recorded {before}, now {after}")
    return found


def _arms(record: RunRecord) -> str:
    return "; ".join(f"{a.name}({', '.join(f'{k}={v}' for k, v in a.model_dump(exclude={'name'}).items() if v)})"
                     for a in record.arms)


def reconcile(path: Path, new: RunRecord) -> RunRecord:
    """Refuse a resume that would mix incomparable trials; else merge and write run.json."""
    if path.is_file():
        old = RunRecord.model_validate_json(path.read_text())
        found = differences(old, new)
        if found:
            listing = "\n  ".join(found)
            raise UsageError(f"refusing to continue label {new.label!r}: what its trials were run with changed:\n"
                             f"  {listing}\nuse a new --label (or restore what changed)")
        new = new.model_copy(update={"cases": {**old.cases, **new.cases}})
    path.write_text(new.model_dump_json(indent=2) + "\n")
    return new

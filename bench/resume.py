"""Resume: the same command with the same label continues, or refuses and says why.

A label's run.json records what its trials were run with. A label holds one
experiment, so continuing is only honest when nothing that decides a verdict changed:
the cases, their fixtures and goldens, the images, the harness, the arms (agents,
commands, models, contexts, and the content of each plugin checkout and subject
source, by the SHA-256 it packed to) and every run option (timeout, turns, seat, subject, model script, agent
environment and network, judge model and script). Adding new cases, or more trials, to a label is allowed.

Finished trials (a verdict about the agent) are kept; a trial whose result.json does
not read back stops the resume naming that file, because guessing — rerunning it
silently, or skipping it — would either hide a damaged record or count it.
"""

from __future__ import annotations

from pathlib import Path

from .errors import UsageError
from .models import ArmSpec, RunRecord, Verdict
from .result_models import TrialResult
from .paths import TrialPaths
from .readback import read_record, rerun_fix

KEPT = (Verdict.PASS, Verdict.FAIL, Verdict.INCOMPLETE)


def differences(old: RunRecord, new: RunRecord) -> list[str]:
    """Every field of the record that differs, for the cases both runs share."""
    found = []
    for field in ("harness_version", "wheel_sha256"):
        if getattr(old, field) != getattr(new, field):
            found.append(f"{field}: recorded {getattr(old, field)!r}, now {getattr(new, field)!r}")
    before, after = old.options.model_dump(), new.options.model_dump()
    found += [f"{key}: recorded {before[key]!r}, now {after[key]!r}" for key in before if before[key] != after[key]]
    if [a.model_dump() for a in old.arms] != [a.model_dump() for a in new.arms]:
        found.append(f"arms: recorded {_arms(old.arms)}, now {_arms(new.arms)}")
    for case in sorted(set(old.cases) & set(new.cases)):
        before, after = _flat(old.cases[case].model_dump()), _flat(new.cases[case].model_dump())
        for key in sorted(before.keys() | after.keys()):
            if before.get(key) != after.get(key):
                found.append(f"{case} {key}: recorded {before.get(key)}, now {after.get(key)}")
    return found


def _flat(inputs: dict) -> dict[str, str | None]:
    """images.grader, arms.cand, plugins.cand, subjects.cand and the like, so a drift names the one role or arm
    that changed."""
    named = {f"{field}.{key}": value for field in ("images", "plugins", "subjects")
             for key, value in inputs.pop(field, {}).items()}
    arms = {f"arms.{arm['name']}": _arms([ArmSpec(**arm)]) for arm in inputs.pop("arms")}
    return {**{key: value for key, value in inputs.items() if value is not None}, **named, **arms}


def _arms(arms: list[ArmSpec]) -> str:
    return "; ".join(f"{a.name}({', '.join(f'{k}={v}' for k, v in a.model_dump(exclude={'name'}).items() if v)})"
                     for a in arms)


def reconcile(path: Path, new: RunRecord) -> RunRecord:
    """Refuse a resume that would mix incomparable trials; else merge and write run.json."""
    if path.is_file():
        old = read_record(path, RunRecord, "use a new --label (this label's run.json cannot be compared)")
        found = differences(old, new)
        if found:
            listing = "\n  ".join(found)
            raise UsageError(f"refusing to continue label {new.label!r}: what its trials were run with changed:\n"
                             f"  {listing}\nuse a new --label (or restore what changed)")
        new = new.model_copy(update={"cases": {**old.cases, **new.cases}, "trials": max(old.trials, new.trials),
                                     "run_ids": list(dict.fromkeys(old.run_ids + new.run_ids))})
    path.write_text(new.model_dump_json(indent=2) + "\n")
    return new


def finished(trial: TrialPaths) -> bool:
    """A trial with a verdict about the agent (not ERROR) is never run again.

    A result.json that does not read back (a run killed while writing it, an edit)
    raises RecordError naming the file and how to rerun that trial.
    """
    if not trial.result.is_file():
        return False
    return read_record(trial.result, TrialResult, rerun_fix(trial)).verdict in KEPT

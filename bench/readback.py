"""Reading records back from disk: one place, one kind of message.

Every record the harness writes (result.json, provenance.json, run.json,
manifest.json, summary.json, images.lock.json) is read back by something — resume,
compare, verify-provenance, report, the next build. A file that is truncated, edited
by hand or written by another harness version must stop that reader with one line
that names the file, the field and what to do, never a pydantic traceback, and never
be half understood: the version is checked before the fields, because the fields of
another version mean other things.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from .errors import RecordError
from .paths import TrialPaths

M = TypeVar("M", bound=BaseModel)


def read_record(path: Path, model: type[M], fix: str) -> M:
    """The record at ``path`` as ``model``, or RecordError naming the file, the field and ``fix``.

    ``fix`` says what the user should do about this file (rerun the trial, rewrite the
    lock, use a new label); it ends every message. A missing file is the caller's
    decision (absent often means "not yet"), so it raises FileNotFoundError as open() does.
    """
    raw = path.read_bytes()
    try:
        data = orjson.loads(raw)  # records are read back often (resume, compare, verify); bytes that are not UTF-8 too
    except orjson.JSONDecodeError as exc:
        problem = "empty file" if not raw.strip() else f"not valid JSON ({exc.msg} at line {exc.lineno})"
        raise RecordError(path, "(whole file)", f"{problem}: truncated or corrupt", fix) from None
    if not isinstance(data, dict):
        raise RecordError(path, "(whole file)", f"holds a JSON {type(data).__name__}, not an object", fix)
    check_version(path, model, data.get("schema_version"), fix)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(whole file)"
        value = "" if error["type"] == "missing" else f" (found {_short(error.get('input'))})"
        raise RecordError(path, field, f"{error['msg']}{value}", fix) from None


def check_version(path: Path, model: type[BaseModel], version: object, fix: str) -> None:
    """Refuse any schema_version but the one this harness writes for ``model``."""
    known = model.model_fields["schema_version"].default
    if version != known:
        raise RecordError(path, "schema_version", f"schema_version {version} is not supported by this harness "
                          f"(knows {known})", f"read it with the harness version that wrote it, or {fix}")


def rerun_fix(trial: TrialPaths) -> str:
    """What to do about one trial whose record does not read back: run that trial again.

    A resume keeps every folder with a result.json, so the broken one must go first.
    """
    label = trial.dir.parents[2].name
    return f"rerun that trial: remove {trial.dir} and run the same command with --label {label} again"


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"

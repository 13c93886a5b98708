"""`--json` on every verb: one flag, one writer, and errors as JSON wherever JSON was asked for.

A script that passes ``--json`` reads exactly one JSON document on stdout, success or not:
the verb's data, or ``{"error": {"message", "exit_code", "kind", ...}}`` with the same exit
code the text mode gives. Progress and warnings stay on stderr. The flag is remembered when
click parses it, so ``cli.main`` (the one place exceptions become exit codes) knows to
answer in JSON without every verb catching its own errors.

orjson writes it: it is fast on the large records (summaries, compare reports, metrics),
serializes dataclasses and datetimes itself, and ``default`` covers pydantic models and paths.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click
import orjson
from pydantic import BaseModel

from .errors import CaseError, InfrastructureError, RecordError, SeatRefused, UsageError

_asked = {"json": False}


def _remember(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        _asked["json"] = True
    return value


def json_option(help: str = "Print one JSON object on stdout instead of text (errors too).") -> Callable:
    return click.option("--json", "as_json", is_flag=True, help=help, callback=_remember)


def forget() -> None:
    """Start a command line afresh (main() calls it; tests that run several in one process too)."""
    _asked["json"] = False


def asked(argv: list[str] | None = None) -> bool:
    """Whether this command line asked for JSON: parsed, or (for a line click refused to parse) written."""
    return _asked["json"] or "--json" in (sys.argv[1:] if argv is None else argv)


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def dumps(data: Any) -> str:
    return orjson.dumps(data, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def emit(data: Any) -> None:
    """``data`` as one JSON document on stdout."""
    click.echo(dumps(data))


KINDS: list[tuple[type, str]] = [(RecordError, "record"), (CaseError, "case"), (UsageError, "usage"),
                                 (InfrastructureError, "infrastructure"), (SeatRefused, "seat")]


def error_body(exc: BaseException, exit_code: int) -> dict:
    """What ``{"error": ...}`` says of an exception: message, exit code, kind, and a case error's parts."""
    if isinstance(exc, (click.exceptions.Abort, KeyboardInterrupt)):
        return {"message": "interrupted", "exit_code": exit_code, "kind": "interrupted"}
    if isinstance(exc, click.ClickException):
        return {"message": exc.format_message(), "exit_code": exit_code, "kind": "usage"}
    kind = next((name for cls, name in KINDS if isinstance(exc, cls)), "error")
    body = {"message": str(exc), "exit_code": exit_code, "kind": kind}
    if isinstance(exc, CaseError):
        body.update(file=exc.path, field=exc.field, problem=exc.problem, fix=exc.fix)
    return body


def fail(exc: BaseException, exit_code: int) -> None:
    """End the command for ``exc`` with ``exit_code``: ``{"error": ...}`` on stdout under --json, else one line
    on stderr (click's usage errors as click shows them)."""
    from .cli_common import err

    if asked():
        emit({"error": error_body(exc, exit_code)})
    elif isinstance(exc, click.ClickException):
        exc.show()
    else:
        err.print("interrupted" if error_body(exc, exit_code)["kind"] == "interrupted" else f"bench: {exc}",
                  markup=False)
    sys.exit(exit_code)

"""Arms: `--arm NAME=SPEC` parsed into ArmSpec, and resolved against each case.

SPEC is a comma-separated list of ``key:value`` items — ``context:bare``,
``agent:null``, ``model:NAME``, ``plugin:PATH`` (a plugin checkout, bench/plugin.py),
``skills:PATH`` (a skill folder or a folder of them, bench/skills.py),
``subject:PATH|GIT_URL@COMMIT`` (what --subject takes, for this arm only,
bench/arm_inputs.py) — or empty, in which case the arm uses the case's context folder
of the same name. Without any ``--arm``, each case runs its own arms. Everything an
arm varies is recorded in provenance, so two labels can be compared. Plugin and
subject paths are made absolute here, so run.json names the checkout wherever the run
was started; a subject that is no path must read as GIT_URL@COMMIT here, before
anything is built.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from .cases import Case
from .errors import UsageError
from .models import ArmSpec
from .subject import git_source

KEYS = {"context", "agent", "agent_cmd", "model", "plugin", "subject", "skills"}


def parse_arm(text: str) -> ArmSpec:
    """`base=context:with-context,model:m` -> ArmSpec; bad text names the fix."""
    name, _, spec = text.partition("=")
    fields: dict[str, str] = {"name": name.strip()}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, sep, value = item.partition(":")
        if not sep or key not in KEYS:
            raise UsageError(f"--arm {text!r}: {item!r} is not KEY:VALUE with KEY one of {', '.join(sorted(KEYS))}")
        fields[key] = _source(text, value) if key == "subject" and value else \
            str(Path(value).expanduser().resolve()) if key in ("plugin", "skills") and value else value
    try:
        return ArmSpec.model_validate(fields)
    except ValidationError as exc:
        raise UsageError(f"--arm {text!r}: {exc.errors()[0]['msg']}") from None


def _source(text: str, value: str) -> str:
    """A subject source: an existing path made absolute, else GIT_URL@COMMIT (checked, kept as given)."""
    path = Path(value).expanduser()
    if path.exists():
        return str(path.resolve())
    git_source(value, f"--arm {text!r}: subject")
    return value


def arms_for(case: Case, specs: list[ArmSpec]) -> list[ArmSpec]:
    """The arms one case runs, each with a context that exists for it."""
    if not specs:
        return [ArmSpec(name=arm, context=arm) for arm in case.spec.arms]
    resolved = []
    for spec in specs:
        if not spec.model_dump(exclude={"name"}, exclude_none=True) and spec.name not in case.spec.arms:
            raise UsageError(f"--arm {spec.name!r} sets nothing and case {case.id} has no context {spec.name!r}: "
                             f"give NAME=KEY:VALUE (e.g. {spec.name}=agent:null) or one of {', '.join(case.spec.arms)}")
        context = spec.context or (spec.name if spec.name in case.spec.arms else case.spec.arms[0])
        if context not in case.spec.arms:
            raise UsageError(f"arm {spec.name!r}: case {case.id} has no context {context!r}; "
                             f"its arms are {', '.join(case.spec.arms)}")
        resolved.append(spec.model_copy(update={"context": context}))
    names = [arm.name for arm in resolved]
    if len(set(names)) != len(names):
        raise UsageError(f"arm names must differ: {', '.join(names)}")
    return resolved

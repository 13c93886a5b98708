"""What a spec says, as the scorers need it: the structure a decider reads out of Allium text.

A *decider* turns spec text into a ``ParsedSpec``. Today that is the harness's own
block parser (bench/allium/parser.py, decider ``harness-parser``). The seam for the
``allium`` CLI is this module's ``SpecSource``: a source that runs ``allium check``
and ``allium model`` and maps their JSON onto the same classes, with
``decider="allium-cli"``, can be handed to the distill scorer in place of the
parser, and the score records which one decided. The scorers never look at text
except through ``ParsedSpec`` (and its ``normative_text`` for exclusions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

STATE_FIELD_NAMES = ("status", "state", "stage", "phase")


@dataclass(frozen=True)
class FieldDecl:
    name: str
    type_text: str
    enum_values: tuple[str, ...] = ()  # inline enum literals, or a named enum's values once resolved
    enum_name: str | None = None  # the named enum the type refers to, if any


@dataclass(frozen=True)
class EntityDecl:
    name: str
    kind: str  # "entity", "external", "variant" or "value"
    line: int
    fields: tuple[FieldDecl, ...] = ()
    transitions: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # field -> edges
    terminal: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def state_fields(self) -> dict[str, tuple[str, ...]]:
        """The enum fields that hold the entity's lifecycle state, with their values.

        A field counts when it has a ``transitions`` block, or when its name is a
        state word (status, state, ``payment_status``...). Other enums (a size, a
        failure reason) are data, not lifecycle, and are never read as states.
        """
        out = {}
        for f in self.fields:
            named = f.name in STATE_FIELD_NAMES or f.name.endswith(tuple("_" + n for n in STATE_FIELD_NAMES))
            if f.enum_values and (named or f.name in self.transitions):
                out[f.name] = f.enum_values
        return out

    def states(self) -> tuple[str, ...]:
        return tuple(v for values in self.state_fields().values() for v in values)

    def edges(self) -> tuple[tuple[str, str], ...]:
        return tuple(e for edges in self.transitions.values() for e in edges)


@dataclass(frozen=True)
class RuleDecl:
    name: str
    line: int
    when: str = ""
    requires: str = ""  # requires clauses, plus top-level let bindings and for-filters: the guard
    ensures: str = ""

    @property
    def guard_text(self) -> str:
        """Trigger and preconditions together: where a ``requires_any`` term may be found."""
        return f"{self.name}\n{self.when}\n{self.requires}"


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: str
    type_text: str = ""
    line: int = 0


@dataclass(frozen=True)
class BoundaryDecl:
    """A surface, actor or external entity: where the spec says who is on the other side."""

    kind: str  # "surface", "actor" or "external"
    name: str
    header: str  # name plus the facing / for / context / identified_by lines


@dataclass
class ParsedSpec:
    decider: str
    version: int | None = None
    entities: list[EntityDecl] = field(default_factory=list)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    rules: list[RuleDecl] = field(default_factory=list)
    config: list[ConfigEntry] = field(default_factory=list)
    boundaries: list[BoundaryDecl] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    normative_text: str = ""  # the spec without comments and open questions

    def has_enum(self) -> bool:
        return bool(self.enums) or any(f.enum_values for e in self.entities for f in e.fields)

    def invalid_reason(self) -> str | None:
        """Why the spec is not structurally valid, or None: zero errors, and entities, enums and rules."""
        if self.errors:
            more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            return f"{self.errors[0]}{more}"
        missing = [what for what, present in (
            ("entity", any(e.kind in ("entity", "variant") for e in self.entities)),
            ("enum", self.has_enum()),
            ("rule", bool(self.rules)),
        ) if not present]
        return f"no {', no '.join(missing)} declared" if missing else None

    @property
    def structurally_valid(self) -> bool:
        return self.invalid_reason() is None


class SpecSource(Protocol):
    """Anything that turns spec text into a ParsedSpec (the harness parser; an ``allium`` CLI adapter)."""

    decider: str

    def read(self, text: str) -> ParsedSpec: ...

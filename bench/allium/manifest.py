"""Golden data for the Allium cases, as strict models: the distill manifest and the weed divergence list.

Both are TOML files under goldens/<case>/ (withheld from the agent) and are read
with cases.load_toml (imported when a file is read: cases -> gatespec -> these
models, so a module-level import would be circular), so a typo or an unknown field is a CaseError naming file,
field and fix before any trial runs. Internal consistency (a transition endpoint
that is not a state, an alias claimed twice) is checked here, at load; checks
that need the fixture's code or the planted spec live in validate.py.

Thresholds default to the seed's gate, and a gate may declare its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..models import Strict
from .terms import norm

Edge = tuple[str, str]


class EntitySpec(Strict):
    """An entity the spec must declare, with its lifecycle; exhaustive: any other state is confabulation."""

    name: str = Field(description="Canonical name, compared whole after normalising case, `_`, `-` and spaces.")
    aliases: list[str] = Field(default_factory=list, description="Other names a faithful spec may give the entity.")
    states: list[str] = Field(default_factory=list, description="Every state the code supports (canonical names).")
    state_aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="Canonical state -> synonyms a spec may use for it. Scoped to this "
        "entity: two entities may map the same synonym to different states.")
    optional_states: list[str] = Field(
        default_factory=list, description="States a spec may model or leave out: never required, never confabulation.")
    transitions: list[Edge] = Field(default_factory=list, description="Every move between states, as [from, to].")
    optional_transitions: list[Edge] = Field(default_factory=list, description="Moves a spec may include or omit.")
    terminal: list[str] = Field(default_factory=list, description="States with no way out.")

    @model_validator(mode="after")
    def _consistent(self) -> "EntitySpec":
        known = self.states + self.optional_states
        if len({norm(s) for s in known}) != len(known):
            raise ValueError(f"{self.name}: a state is listed twice in states / optional_states")
        for edge in self.transitions + self.optional_transitions:
            if bad := [s for s in edge if s not in known]:
                raise ValueError(f"{self.name}: transition {list(edge)} uses {bad}, not in states")
        for state in self.terminal:
            if state not in self.states:
                raise ValueError(f"{self.name}: terminal state {state!r} is not in states")
        claimed: dict[str, str] = {norm(s): s for s in known}
        for canonical, synonyms in self.state_aliases.items():
            if canonical not in known:
                raise ValueError(f"{self.name}: state_aliases key {canonical!r} is not a declared state")
            for synonym in synonyms:
                if claimed.setdefault(norm(synonym), canonical) != canonical:
                    raise ValueError(f"{self.name}: alias {synonym!r} of {canonical!r} already names "
                                     f"{claimed[norm(synonym)]!r}")
        return self

    def canonical(self) -> dict[str, str]:
        """Normalised state or alias -> canonical state, for this entity only."""
        table = {norm(s): s for s in self.states + self.optional_states}
        for canonical, synonyms in self.state_aliases.items():
            table.update({norm(s): canonical for s in synonyms})
        return table


class ExternalEntitySpec(Strict):
    """An entity another system owns (the CRM's Customer): it must be named, its lifecycle is not scored."""

    name: str
    aliases: list[str] = Field(default_factory=list)


class RuleSpec(Strict):
    """A behaviour the spec must state, recognised by fingerprint terms in one rule block."""

    id: str = Field(description="Stable id, shown in found / missed lists.")
    ensures_all: list[str] = Field(
        min_length=1, description="Every term must appear in the block's ensures clauses ('a|b': either).")
    requires_any: list[str] = Field(
        default_factory=list, description="If given, one term must appear in the block's trigger, lets or requires.")
    note: str = Field("", description="Where the behaviour lives in the code, for reviewers.")


class ConfigSpec(Strict):
    """A configuration value the spec should declare (config block or default)."""

    id: str
    name_any: list[str] = Field(min_length=1, description="Terms, one of which the entry's name must contain.")
    value_any: list[str] = Field(min_length=1, description="Accepted values, compared whole after normalising.")


class BoundarySpec(Strict):
    """A party across a boundary (customer, driver, carrier webhook, CRM), matched fuzzily."""

    id: str
    terms_any: list[str] = Field(min_length=1, description="Terms, one of which a declaration's header must contain.")
    kinds: list[Literal["surface", "actor", "external"]] = Field(
        default_factory=lambda: ["surface", "actor", "external"],
        description="Which declarations may cover it: surfaces (name, facing/for, context), actors, external entities.")


class Exclusions(Strict):
    """Terms that must not appear in normative content (prefix search; comments and open questions exempt)."""

    dead_code: list[str] = Field(default_factory=list, description="Code that never runs (flagged off, orphaned).")
    implementation: list[str] = Field(default_factory=list, description="Mechanism a spec abstracts away.")

    def terms(self) -> list[str]:
        return self.dead_code + self.implementation


class DistillThresholds(Strict):
    """quality_pass: every bound must hold. Defaults are the seed's gate."""

    entity_recall: float = Field(1.0, ge=0, le=1, description="Share of the manifest's entities the spec declares.")
    state_recall: float = Field(0.9, ge=0, le=1, description="Share of the matched entities' states it names.")
    transition_recall: float = Field(0.9, ge=0, le=1, description="Share of their transitions it states.")
    rule_recall: float = Field(0.8, ge=0, le=1, description="Share of the manifest's rules it states (by fingerprint).")
    boundary_recall: float | None = Field(None, ge=0, le=1, description="Unset: reported, not gated (the seed's choice).")
    config_recall: float | None = Field(None, ge=0, le=1, description="Unset: reported, not gated.")
    max_confabulations: int = Field(0, ge=0, description="Spurious states plus transitions on matched entities.")
    max_exclusion_violations: int = Field(0, ge=0, description="How many words of the spec's normative text may "
                                          "start with a term the manifest's exclusions forbid.")


class DistillManifest(Strict):
    """goldens/<case>/manifest.toml: what a faithful spec of the fixture contains, and must not."""

    schema_version: Literal[1] = 1
    fixture: str = Field(description="The cases/_fixtures/<name>/ codebase the manifest describes.")
    spec_path: str = Field(description="Where the agent is asked to write the spec (relative to the workspace).")
    entities: list[EntitySpec] = Field(min_length=1)
    external_entities: list[ExternalEntitySpec] = Field(default_factory=list)
    allowed_extra_entities: list[str] = Field(
        default_factory=list, description="Entities a spec may add without being listed for review.")
    rules: list[RuleSpec] = Field(min_length=1)
    config: list[ConfigSpec] = Field(default_factory=list)
    boundaries: list[BoundarySpec] = Field(default_factory=list)
    exclusions: Exclusions = Field(default_factory=Exclusions)
    quality_pass: DistillThresholds = Field(default_factory=DistillThresholds)

    @field_validator("rules", "config", "boundaries")
    @classmethod
    def _unique_ids(cls, items: list) -> list:
        return _unique([item.id for item in items], items)


class Divergence(Strict):
    """One planted spec/code divergence, recognised by fingerprint terms in one findings section."""

    id: str
    shape: str = Field(description="Which kind of drift it plants (config drift, guard drift, ...).")
    summary: str = Field(description="What diverges, in a sentence, for reviewers.")
    must_all: list[str] = Field(min_length=1, description="Every term must appear in the finding ('a|b': either).")
    must_any: list[str] = Field(default_factory=list, description="If given, one term must appear too.")


class JudgementCall(Strict):
    """A finding the fixture knowingly invites (dead loyalty code): excused, never a false positive."""

    id: str
    must_all: list[str] = Field(min_length=1)
    why: str = ""


class WeedThresholds(Strict):
    """The weed gate. Defaults are the seed's: recall >= 0.8 with at most 1 false positive."""

    divergence_recall: float = Field(0.8, ge=0, le=1, description="Share of the planted divergences the report finds.")
    max_false_positives: int = Field(1, ge=0, description="Findings that match no planted divergence and no excused "
                                     "judgement call.")


class WeedManifest(Strict):
    """goldens/<case>/divergences.toml: the planted divergences and the judgement calls excused."""

    schema_version: Literal[1] = 1
    fixture: str
    planted_spec: str = Field(
        description="Path, relative to the case's workspace, of the spec carrying the plants. The agent reads it, so "
        "it lives in cases/<case>/workspace/, never beside this withheld file.")
    findings_path: str = Field("weed-findings.md", description="Where the agent is asked to write its findings.")
    divergences: list[Divergence] = Field(min_length=1)
    judgement_calls: list[JudgementCall] = Field(default_factory=list)
    gate: WeedThresholds = Field(default_factory=WeedThresholds)

    @field_validator("divergences", "judgement_calls")
    @classmethod
    def _unique_ids(cls, items: list) -> list:
        return _unique([item.id for item in items], items)


def _unique(ids: list[str], items: list) -> list:
    if dupes := sorted({i for i in ids if ids.count(i) > 1}):
        raise ValueError(f"duplicate id(s) {dupes}")
    return items


def load_distill_manifest(path: Path) -> DistillManifest:
    from ..cases import load_toml

    return load_toml(path, DistillManifest)


def load_weed_manifest(path: Path) -> WeedManifest:
    from ..cases import load_toml

    return load_toml(path, WeedManifest)

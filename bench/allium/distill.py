"""Score a distilled Allium spec against a golden manifest, deterministically, with no model judging.

Recall asks whether the spec found what the code does: entities, the states and
transitions of each, rules (one golden rule per spec rule block, by fingerprint),
boundaries and config. Precision asks whether it invented what the code does not
do: the manifest is exhaustive per entity, so a state or transition on a matched
entity that maps to nothing in it is confabulation, and fails the gate; invented
entities and unmatched rules may be honest modelling choices, so they are listed
for review, not gated. Exclusions catch what a faithful spec abstracts away
(Redis, Celery, ...) or must not describe at all (dead code).

Recall guards against an incomplete spec; precision guards against the failure
mode aggressive token-cutting causes, an agent reading less code and guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .manifest import DistillManifest, DistillThresholds, EntitySpec
from .matching import assign
from .parser import parse_spec
from .results import AlliumScore, Metric, broken, metric
from .spec import EntityDecl, ParsedSpec
from .terms import alternatives, fingerprint_holds, has, norm, prefix_hits, same_name

MATCHABLE = ("entity", "external", "variant", "value")


@dataclass
class _Tally:
    """Found / expected counts for one category, with the names behind them."""

    found: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def recall(self) -> float:
        total = len(self.found) + len(self.missed)
        return len(self.found) / total if total else 1.0


def score_distill(spec: str | ParsedSpec | None, manifest: DistillManifest,
                  thresholds: DistillThresholds | None = None) -> AlliumScore:
    """Score spec text (or a ParsedSpec from another decider; None: no spec was written)."""
    bounds = thresholds or manifest.quality_pass
    parsed = spec if isinstance(spec, ParsedSpec) else parse_spec(spec or "")
    matched, entities = _entities(parsed, manifest)
    states, transitions, confab = _lifecycles(matched, manifest)
    rules, unmatched_rules = _rules(parsed, manifest)
    leaks = _exclusions(parsed.normative_text, manifest)
    invented = _invented(parsed, manifest, matched)
    valid = 1.0 if spec is not None and parsed.structurally_valid else 0.0
    metrics: dict[str, Metric] = {
        "structural_validity": metric(valid, "higher", 1.0),
        "entity_recall": metric(entities.recall(), "higher", bounds.entity_recall),
        "state_recall": metric(states.recall(), "higher", bounds.state_recall),
        "transition_recall": metric(transitions.recall(), "higher", bounds.transition_recall),
        "rule_recall": metric(rules.recall(), "higher", bounds.rule_recall),
        "boundary_recall": metric(_boundaries(parsed, manifest).recall(), "higher", bounds.boundary_recall),
        "config_recall": metric(_config(parsed, manifest).recall(), "higher", bounds.config_recall),
        "confabulations": metric(len(confab), "lower", bounds.max_confabulations),
        "exclusion_violations": metric(len(leaks), "lower", bounds.max_exclusion_violations),
        "invented_entities": metric(len(invented), "lower"),
        "unmatched_rules": metric(len(unmatched_rules), "lower"),
    }
    reasons = [r for r in broken(metrics) if not r.startswith("structural_validity")]
    if not valid:
        why = "no spec was written" if spec is None else parsed.invalid_reason()
        reasons.insert(0, f"structurally invalid: {why}")
    review = {
        "entities_missed": entities.missed, "states_missed": states.missed,
        "transitions_missed": transitions.missed, "rules_found": rules.found, "rules_missed": rules.missed,
        "confabulated": confab, "exclusion_violations": leaks, "invented_entities": invented,
        "unmatched_rules": unmatched_rules, "parse_errors": parsed.errors, "parse_warnings": parsed.warnings,
    }
    return AlliumScore(kind="distill", passed=not reasons, reasons=reasons, metrics=metrics,
                       decider=parsed.decider, review={k: v for k, v in review.items() if v})


def _entities(parsed: ParsedSpec, manifest: DistillManifest) -> tuple[dict[str, EntityDecl], _Tally]:
    """Manifest entity name -> the spec's declaration of it (names compared whole, aliases allowed)."""
    matched, tally = {}, _Tally()
    expected = [(e.name, e.aliases) for e in manifest.entities]
    expected += [(e.name, e.aliases) for e in manifest.external_entities]
    for name, aliases in expected:
        decl = next((d for d in parsed.entities if d.kind in MATCHABLE
                     and any(same_name(d.name, n) for n in [name, *aliases])), None)
        if decl is None:
            tally.missed.append(name)
        else:
            matched[name] = decl
            tally.found.append(name)
    return matched, tally


def _lifecycles(matched: dict[str, EntityDecl], manifest: DistillManifest) -> tuple[_Tally, _Tally, list[str]]:
    states, transitions, confab = _Tally(), _Tally(), []
    for entity in manifest.entities:
        decl = matched.get(entity.name)
        seen_states, seen_edges = _mapped(entity, decl, confab) if decl else (set(), set())
        for state in entity.states:
            (states.found if state in seen_states else states.missed).append(f"{entity.name}.{state}")
        for a, b in entity.transitions:
            (transitions.found if (a, b) in seen_edges else transitions.missed).append(f"{entity.name}: {a} -> {b}")
    return states, transitions, confab


def _mapped(entity: EntitySpec, decl: EntityDecl, confab: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """The canonical states and edges a spec entity declares; anything unmappable goes to confab."""
    table = entity.canonical()
    allowed = {tuple(e) for e in entity.transitions + entity.optional_transitions}
    seen_states, seen_edges = set(), set()
    for value in decl.states():
        if (canonical := table.get(norm(value))) is None:
            confab.append(f"{entity.name}: state {value!r} is not in the code")
        else:
            seen_states.add(canonical)
    for a, b in decl.edges():
        edge = (table.get(norm(a)), table.get(norm(b)))
        if edge in allowed:
            seen_edges.add(edge)
        else:
            confab.append(f"{entity.name}: transition {a} -> {b} is not in the code")
    return seen_states, seen_edges


def _rules(parsed: ParsedSpec, manifest: DistillManifest) -> tuple[_Tally, list[str]]:
    fits = [[j for j, r in enumerate(parsed.rules)
             if fingerprint_holds(r.ensures, golden.ensures_all, [])
             and (not golden.requires_any or any(has(norm(r.guard_text), t) for t in golden.requires_any))]
            for golden in manifest.rules]
    pairs = assign(fits)
    tally = _Tally()
    for i, golden in enumerate(manifest.rules):
        (tally.found if i in pairs else tally.missed).append(golden.id)
    used = set(pairs.values())
    return tally, [r.name for j, r in enumerate(parsed.rules) if j not in used]


def _boundaries(parsed: ParsedSpec, manifest: DistillManifest) -> _Tally:
    tally = _Tally()
    for boundary in manifest.boundaries:
        headers = [norm(b.header) for b in parsed.boundaries if b.kind in boundary.kinds]
        hit = any(has(h, t) for h in headers for t in boundary.terms_any)
        (tally.found if hit else tally.missed).append(boundary.id)
    return tally


def _config(parsed: ParsedSpec, manifest: DistillManifest) -> _Tally:
    tally = _Tally()
    for item in manifest.config:
        values = {alt for v in item.value_any for alt in alternatives(v)}
        hit = any(any(has(norm(e.name), n) for n in item.name_any) and norm(e.value) in values
                  for e in parsed.config)
        (tally.found if hit else tally.missed).append(item.id)
    return tally


def _exclusions(text: str, manifest: DistillManifest) -> list[str]:
    """Every word of normative content that starts with a forbidden term, with its line."""
    leaks = []
    for number, line in enumerate(text.splitlines(), 1):
        for term in manifest.exclusions.terms():
            leaks += [f"{term!r} in {word!r} (line {number})" for word in prefix_hits(line, term)]
    return leaks


def _invented(parsed: ParsedSpec, manifest: DistillManifest, matched: dict[str, EntityDecl]) -> list[str]:
    claimed = {id(d) for d in matched.values()}
    return [d.name for d in parsed.entities if d.kind in ("entity", "variant") and id(d) not in claimed
            and not any(same_name(d.name, n) for n in manifest.allowed_extra_entities)]

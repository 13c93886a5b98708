"""Checks of golden data before any trial runs (for ``bench cases validate``).

Scoring is only as good as its golden data: a typo'd state that appears nowhere
in the code, or a fingerprint made of words every spec contains, silently
corrupts every score. These checks catch what the models' own validation cannot,
because it needs the fixture's code or the planted spec:

* every manifest state (or one of its aliases, looked up in that entity's own
  table) appears in the fixture's code; a state with aliases that appears nowhere
  is a warning (it may be genuinely implicit), one without is an error;
* fingerprints made only of generic words (created, status, ...) are warned about;
* short terms, and terms found embedded inside other words of the code or the
  golden vocabulary (``active`` inside ``inactive``), are warned about, because
  substring matching will hit those words too; numbers are values, not words, and
  are exempt;
* exclusion and judgement-call terms are plants, so each should occur in the code;
* the weed case's planted spec must parse with zero errors: its divergences are
  semantic drift, never syntax.

Errors make a case invalid; warnings are printed and do not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal

from ..errors import UsageError
from ..fixtures import load_fixture
from .manifest import DistillManifest, WeedManifest, load_distill_manifest, load_weed_manifest
from .parser import parse_spec
from .terms import alternatives, prefix_hits, words

GENERIC = {"created", "updated", "set", "now", "true", "false", "status", "state", "id", "name", "new", "null",
           "spec", "code", "rule", "entity", "field", "value", "missing", "change", "changed", "check"}
SHORT = 4


@dataclass(frozen=True)
class Problem:
    level: Literal["error", "warning"]
    where: str  # what the problem is about: "rule dispatch-parcel", "Parcel.returned", ...
    message: str

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.message}"


def validate_distill(manifest: DistillManifest, code: str | None) -> list[Problem]:
    """Problems of a distill manifest; ``code`` is the fixture's source text (None: skip code checks)."""
    problems: list[Problem] = []
    vocabulary = _vocabulary(manifest, code)
    for rule in manifest.rules:
        problems += _fingerprint(f"rule {rule.id}", rule.ensures_all, rule.requires_any, vocabulary)
    for item in manifest.config:
        problems += _terms(f"config {item.id}", item.name_any, vocabulary)
    for boundary in manifest.boundaries:
        problems += _terms(f"boundary {boundary.id}", boundary.terms_any, vocabulary)
    if code is None:
        return problems + [Problem("warning", "fixture", "no fixture code given: states not cross-checked")]
    problems += _states_in_code(manifest, code.lower())
    problems += _plants(code, manifest.exclusions.terms(), "exclusion")
    return problems


def validate_weed(manifest: WeedManifest, planted: str | None, code: str | None) -> list[Problem]:
    """Problems of a weed divergence list, its planted spec text and (optionally) the fixture's code."""
    problems: list[Problem] = []
    if planted is None:
        problems.append(Problem("error", "planted spec", f"{manifest.planted_spec} does not exist"))
    else:
        parsed = parse_spec(planted)
        problems += [Problem("error", "planted spec", e) for e in parsed.errors]
        if not parsed.errors and (reason := parsed.invalid_reason()):
            problems.append(Problem("error", "planted spec", f"not structurally valid: {reason}"))
    vocabulary = words(" ".join([planted or "", code or ""]))
    for d in manifest.divergences:
        problems += _fingerprint(f"divergence {d.id}", d.must_all, d.must_any, vocabulary)
    for call in manifest.judgement_calls:
        problems += _fingerprint(f"judgement call {call.id}", call.must_all, [], vocabulary)
    if code is not None:
        problems += _plants(code, [t for c in manifest.judgement_calls for t in c.must_all], "judgement-call")
    return problems


def validate_distill_file(manifest_path: Path, root: Path | None) -> list[Problem]:
    """Load and check goldens/<case>/manifest.toml against the code of cases/_fixtures/<its fixture>/ under root.

    A manifest that does not load raises CaseError (file, field, fix); root None skips the code checks.
    """
    manifest = load_distill_manifest(manifest_path)
    code, problems = _fixture_code(root, manifest.fixture)
    return problems + validate_distill(manifest, code)


def validate_weed_file(manifest_path: Path, root: Path | None, workspace: Path) -> list[Problem]:
    """Load and check goldens/<case>/divergences.toml, the planted spec in the case's ``workspace``
    (cases/<case>/workspace/, where the agent gets it), and cases/_fixtures/<its fixture>/ under root."""
    manifest = load_weed_manifest(manifest_path)
    planted_path = workspace / manifest.planted_spec
    planted = planted_path.read_text(encoding="utf-8") if planted_path.is_file() else None
    code, problems = _fixture_code(root, manifest.fixture)
    return problems + validate_weed(manifest, planted, code)


def _fixture_code(root: Path | None, name: str) -> tuple[str | None, list[Problem]]:
    if root is None:
        return None, []
    try:
        return load_fixture(root, name).code_text(), []
    except UsageError as exc:
        return None, [Problem("error", f"fixture {name!r}", str(exc))]


def _vocabulary(manifest: DistillManifest, code: str | None) -> set[str]:
    """Words a fingerprint could meet: the code's, and the golden data's own state and alias names."""
    names = [s for e in manifest.entities for s in e.states + e.optional_states]
    names += [a for e in manifest.entities for aliases in e.state_aliases.values() for a in aliases]
    return words(" ".join(names + [code or ""]))


def _fingerprint(where: str, all_of: list[str], any_of: list[str], vocabulary: set[str]) -> list[Problem]:
    problems = _terms(where, all_of + any_of, vocabulary)
    for label, terms in (("all-of", all_of), ("any-of", any_of)):
        spellings = [alt for t in terms for alt in alternatives(t)]
        if spellings and all(s in GENERIC for s in spellings):
            problems.append(Problem("warning", where, f"{label} terms {terms} are all generic words; "
                                    "they will match the wrong block — add a distinctive term"))
    return problems


def _terms(where: str, terms: Iterable[str], vocabulary: set[str]) -> list[Problem]:
    """Short terms, and terms embedded inside other words (active in inactive)."""
    problems = []
    for term in terms:
        for alt in alternatives(term):
            if alt.isdigit():
                continue
            if len(alt) < SHORT:
                problems.append(Problem("warning", where, f"term {alt!r} is shorter than {SHORT} letters "
                                        "and will match inside unrelated words"))
                continue
            hosts = sorted(w for w in vocabulary if alt in w and not w.startswith(alt))
            if hosts:
                problems.append(Problem("warning", where, f"term {alt!r} also matches inside "
                                        f"{', '.join(repr(h) for h in hosts[:3])}; pick a more distinctive term"))
    return problems


def _states_in_code(manifest: DistillManifest, code_lower: str) -> list[Problem]:
    problems = []
    for entity in manifest.entities:
        for state in entity.states:
            aliases = entity.state_aliases.get(state, [])
            if any(name.lower() in code_lower for name in [state, *aliases]):
                continue
            if aliases:
                problems.append(Problem("warning", f"{entity.name}.{state}", "neither the state nor its aliases "
                                        "appear in the code; confirm it is genuinely implicit"))
            else:
                problems.append(Problem("error", f"{entity.name}.{state}", "appears nowhere in the fixture's code "
                                        "— fix the name, or add the alias the code uses"))
    return problems


def _plants(code: str, terms: list[str], label: str) -> list[Problem]:
    return [Problem("warning", f"{label} term {t!r}", "occurs nowhere in the fixture's code; is it a real plant?")
            for t in terms if not prefix_hits(code, t) and not any(a in code.lower() for a in alternatives(t))]

"""The harness's own reader of Allium spec text (decider ``harness-parser``).

Used when no ``allium`` CLI is on the grader's PATH, which is the normal case: it
reads the block structure of Allium v3 (entity, external entity, value, variant,
enum, rule, config, default, actor, surface, invariant, contract, deferred,
open question, use) into a ``ParsedSpec``. It is a structural reader, not a type
checker: it does not resolve expressions or references. What it reports as an
*error* is what makes a spec unusable for scoring or plainly malformed (unbalanced
braces, stray top-level text, a rule without a trigger or an outcome, a transition
to a value its field does not have); everything it merely does not understand is
a warning, so a spec using a construct newer than this reader is not failed for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .spec import BoundaryDecl, ConfigEntry, EntityDecl, FieldDecl, ParsedSpec, RuleDecl

DECIDER = "harness-parser"
NAME = r"([A-Za-z_]\w*)"
_VERSION = re.compile(r"^\s*--\s*allium:\s*(\d+)")
_HEADERS = [
    ("external", re.compile(rf"external\s+entity\s+{NAME}")),
    ("entity", re.compile(rf"entity\s+{NAME}")),
    ("value", re.compile(rf"value\s+{NAME}")),
    ("variant", re.compile(rf"variant\s+{NAME}\s*:")),
    ("enum", re.compile(rf"enum\s+{NAME}")),
    ("rule", re.compile(rf"rule\s+{NAME}")),
    ("actor", re.compile(rf"actor\s+{NAME}")),
    ("surface", re.compile(rf"surface\s+{NAME}")),
    ("invariant", re.compile(rf"invariant\s+{NAME}")),
    ("contract", re.compile(rf"contract\s+{NAME}")),
    ("config", re.compile(r"((?:[\w-]+/)?config)\s*(?:\{|$)")),
    ("default", re.compile(r"default\s+(.*)")),
    ("deferred", re.compile(r"deferred\s+(.*)")),
    ("question", re.compile(r"open[ _]question\s+(.*)")),
    ("use", re.compile(r"use\s+(\".*)")),
]
BLOCKS = {"external", "entity", "value", "variant", "enum", "rule", "actor", "surface", "invariant",
          "contract", "config"}
_LITERAL = r"(`[^`]+`|[A-Za-z_]\w*)"
_EDGE = re.compile(rf"{_LITERAL}\s*->\s*{_LITERAL}")
_TERMINAL = re.compile(r"terminal\s*:\s*([^\n}]*)")
_ENUM_PART = re.compile(r"^(`[^`]+`|[a-z_][a-z0-9_]*)$")
_FIELD = re.compile(r"^(\w+)\s*:\s*(.*)$")
_CLAUSE = re.compile(r"^(when|requires|ensures|produces|consumes)\s*:(.*)$")
_CONFIG = re.compile(r"^([A-Za-z_]\w*)\s*(?::\s*([^=]+?))?\s*=\s*(.+)$")
_DEFAULT = re.compile(r"^(?:(\w+)\s+)?(\w+)\s*=\s*(.*)$", re.S)


@dataclass
class _Decl:
    kind: str
    name: str
    line: int  # 1-based line of the header
    lines: list[str] = field(default_factory=list)  # comment-free source lines, header included

    def body(self) -> list[str]:
        """The lines between the block's outer braces (the header's own tail and the closing line trimmed)."""
        text = "\n".join(self.lines)
        start, end = _outside(text, "{"), text.rfind("}")
        return text[start + 1:end].split("\n") if 0 <= start < end else []


class HarnessParser:
    """``SpecSource`` over this module's parser."""

    decider = DECIDER

    def read(self, text: str) -> ParsedSpec:
        return parse_spec(text)


def parse_spec(text: str) -> ParsedSpec:
    """Read Allium text into a ParsedSpec; problems land in ``errors`` / ``warnings``, never raised."""
    spec = ParsedSpec(decider=DECIDER)
    raw = text.splitlines()
    spec.version = next((int(m.group(1)) for line in raw[:5] if (m := _VERSION.match(line))), None)
    lines = [_strip_comment(line) for line in raw]
    decls = _declarations(lines, spec)
    for decl in decls:
        _read(decl, spec)
    _resolve(spec)
    asked = {n for d in decls if d.kind == "question" for n in range(d.line - 1, d.line - 1 + len(d.lines))}
    spec.normative_text = "\n".join("" if n in asked else line for n, line in enumerate(lines))
    return spec


def _first_unquoted(text: str, matches) -> int:
    """Index of the first position outside "..." or `...` where ``matches(text, i)``, or -1."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"`":
            quote = char
        elif matches(text, i):
            return i
    return -1


def _strip_comment(line: str) -> str:
    cut = _first_unquoted(line, lambda text, i: text.startswith("--", i))
    return line if cut < 0 else line[:cut]


def _outside(text: str, wanted: str) -> int:
    """Index of the first ``wanted`` character outside quotes, or -1."""
    return _first_unquoted(text, lambda text, i: text[i] == wanted)


def _braces(line: str) -> tuple[int, int]:
    opens = closes = 0
    quote = None
    for char in line:
        if quote:
            quote = None if char == quote else quote
        elif char in "\"`":
            quote = char
        else:
            opens += char == "{"
            closes += char == "}"
    return opens, closes


def _header(text: str) -> tuple[str | None, str]:
    for kind, pattern in _HEADERS:
        if match := pattern.match(text):
            return kind, match.group(1).strip()
    return None, ""


def _declarations(lines: list[str], spec: ParsedSpec) -> list[_Decl]:
    """Split top-level text into declarations by brace depth; stray text is an error."""
    decls, i = [], 0
    while i < len(lines):
        text = lines[i].strip()
        if not text:
            i += 1
            continue
        kind, name = _header(text)
        if kind is None:
            if text.startswith("}"):
                spec.errors.append(f"line {i + 1}: '}}' closes no block")
                i += 1
                continue
            if _braces(text)[0]:
                spec.warnings.append(f"line {i + 1}: unknown declaration {text.split()[0]!r}, skipped")
                kind = "unknown"
            else:
                spec.errors.append(f"line {i + 1}: unexpected text at top level: {text[:60]!r}")
                i += 1
                continue
        decl = _Decl(kind, name, i + 1)
        i = _take_block(lines, i, decl, spec)
        decls.append(decl)
    return decls


def _take_block(lines: list[str], i: int, decl: _Decl, spec: ParsedSpec) -> int:
    """Append the declaration's lines to decl; returns the index after it."""
    depth, opened = 0, False
    needs_block = decl.kind in BLOCKS or decl.kind == "unknown"
    while i < len(lines):
        opens, closes = _braces(lines[i])
        decl.lines.append(lines[i])
        depth += opens - closes
        opened = opened or opens > 0
        i += 1
        if depth < 0:
            spec.errors.append(f"line {i}: '}}' closes no block")
            return i
        if depth == 0 and (opened or not needs_block):
            return i
        if needs_block and not opened:
            following = next((l.strip() for l in lines[i:] if l.strip()), "")
            if not following.startswith("{"):
                spec.errors.append(f"line {decl.line}: {decl.kind} {decl.name} has no {{ ... }} block")
                return i
    if depth > 0:
        spec.errors.append(f"line {decl.line}: {decl.kind} {decl.name} is never closed (missing '}}')")
    return i


def _read(decl: _Decl, spec: ParsedSpec) -> None:
    if decl.kind in ("entity", "external", "value", "variant"):
        spec.entities.append(_entity(decl, spec))
        if decl.kind == "external":
            spec.boundaries.append(BoundaryDecl("external", decl.name, decl.name))
    elif decl.kind == "enum":
        spec.enums[decl.name] = tuple(v.strip("`") for v in re.findall(_LITERAL, "\n".join(decl.body())))
    elif decl.kind == "rule":
        spec.rules.append(_rule(decl, spec))
    elif decl.kind == "config":
        spec.config.extend(_config(decl, spec))
    elif decl.kind == "default":
        if match := _DEFAULT.match(" ".join(l.strip() for l in decl.lines).removeprefix("default").strip()):
            spec.config.append(ConfigEntry(match.group(2), match.group(3).strip(), match.group(1) or "", decl.line))
    elif decl.kind in ("surface", "actor"):
        spec.boundaries.append(_boundary(decl))
    elif decl.kind == "question":
        spec.open_questions.append(decl.name.strip().strip('"'))


def _logical_lines(body: list[str]) -> list[str]:
    """Body lines at the block's own depth, enum continuations (``|`` at a break) joined."""
    out: list[str] = []
    for line in body:
        text = line.strip()
        if not text:
            continue
        if out and (text.startswith("|") or out[-1].endswith("|")):
            out[-1] = f"{out[-1]} {text}"
        else:
            out.append(text)
    return out


def _entity(decl: _Decl, spec: ParsedSpec) -> EntityDecl:
    fields, transitions, terminal = [], {}, {}
    flat, nested, depth = [], [], 0
    for line in decl.body():
        opens, closes = _braces(line)
        if depth == 0 and (opens > closes or re.match(r"\s*(transitions|invariant)\b", line)):
            nested.append([line])
        elif depth > 0:
            nested[-1].append(line)
        else:
            flat.append(line)
        depth += opens - closes
    for block in nested:
        match = re.match(r"\s*transitions\s+(\w+)", block[0])
        if match:
            text = "\n".join(block)
            inner = text[_outside(text, "{") + 1:text.rfind("}")]
            transitions[match.group(1)] = tuple((a.strip("`"), b.strip("`")) for a, b in _EDGE.findall(inner))
            if term := _TERMINAL.search(inner):
                terminal[match.group(1)] = tuple(v.strip("`") for v in re.findall(_LITERAL, term.group(1)))
    for text in _logical_lines(flat):
        if match := _FIELD.match(text):
            fields.append(FieldDecl(match.group(1), match.group(2).strip(), _enum_literals(match.group(2))))
        else:
            spec.warnings.append(f"line {decl.line}: in {decl.name}, not a field: {text[:60]!r}")
    return EntityDecl(decl.name, decl.kind, decl.line, tuple(fields), transitions, terminal)


def _enum_literals(type_text: str) -> tuple[str, ...]:
    parts = [p.strip() for p in type_text.strip().removesuffix("?").split("|")]
    if len(parts) < 2 or not all(_ENUM_PART.match(p) for p in parts):
        return ()
    return tuple(p.strip("`") for p in parts)


def _rule(decl: _Decl, spec: ParsedSpec) -> RuleDecl:
    buckets: dict[str, list[str]] = {"when": [], "requires": [], "ensures": []}
    current, current_indent = None, 0
    for line in decl.body():
        text = line.strip()
        if not text:
            continue
        indent = len(line) - len(line.lstrip())
        if match := _CLAUSE.match(text):
            current = match.group(1) if match.group(1) in buckets else None
            current_indent = indent
            if current:
                buckets[current].append(match.group(2).strip())
        elif text.startswith(("let ", "for ")) and (current is None or indent <= current_indent):
            current, current_indent = "requires", indent  # guard-side bindings and filters
            buckets["requires"].append(text)
        elif current:
            buckets[current].append(text)
    for clause in ("when", "ensures"):
        if not any(buckets[clause]):
            spec.errors.append(f"line {decl.line}: rule {decl.name} has no {clause}: clause")
    return RuleDecl(decl.name, decl.line, *("\n".join(buckets[c]) for c in ("when", "requires", "ensures")))


def _config(decl: _Decl, spec: ParsedSpec) -> list[ConfigEntry]:
    entries = []
    for text in _logical_lines(decl.body()):
        if match := _CONFIG.match(text):
            entries.append(ConfigEntry(match.group(1), match.group(3).strip(), (match.group(2) or "").strip(), decl.line))
        else:
            spec.warnings.append(f"line {decl.line}: in config, not a `name: Type = value` entry: {text[:60]!r}")
    return entries


def _boundary(decl: _Decl) -> BoundaryDecl:
    keys = ("facing ", "for ", "context ", "identified_by")
    header = [decl.name] + [l.strip() for l in decl.body() if l.strip().startswith(keys)]
    return BoundaryDecl(decl.kind, decl.name, "\n".join(header))


def _resolve(spec: ParsedSpec) -> None:
    """Give fields typed by a named enum that enum's values; check transition endpoints."""
    for index, entity in enumerate(spec.entities):
        fields = []
        for f in entity.fields:
            named = f.type_text.removesuffix("?").strip()
            if not f.enum_values and named in spec.enums:
                f = FieldDecl(f.name, f.type_text, spec.enums[named], named)
            fields.append(f)
        entity = EntityDecl(entity.name, entity.kind, entity.line, tuple(fields), entity.transitions, entity.terminal)
        spec.entities[index] = entity
        values = {f.name: set(f.enum_values) for f in fields}
        for name, edges in entity.transitions.items():
            if not values.get(name):
                spec.errors.append(f"line {entity.line}: {entity.name}: transitions {name} names no enum field")
                continue
            for a, b in edges + tuple((t, t) for t in entity.terminal.get(name, ())):
                for value in {a, b} - values[name]:
                    spec.errors.append(f"line {entity.line}: {entity.name}: transitions {name} uses "
                                       f"{value!r}, which is not a value of {name}")

"""Term matching shared by both scorers and the validators.

The seed's rule, kept exactly so scores stay comparable with it: lower-case,
drop ``_``, ``-`` and whitespace, then look for the term as a substring. So
``max delivery attempts``, ``max_delivery_attempts`` and ``MaxDeliveryAttempts``
are one term. Substrings over-match (``active`` is inside ``inactive``), which is
why the validators warn on short and embedded terms; authors pick distinctive ones.

One extension: a fingerprint term may list alternatives separated by ``|``
(``scheduled|assigned``), which holds when any of them does. It lets one
``ensures_all`` entry accept the synonyms a faithful spec may use, instead of
forcing the author to pick one spelling and lose recall on the others.

Names (entities, states) are compared whole, after the same normalisation, not
as substrings: ``Parcel`` must not claim ``ParcelEvent``.
"""

from __future__ import annotations

import re
from typing import Iterable

_DROP = re.compile(r"[_\s-]+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def norm(text: str) -> str:
    """The seed's normal form: lower case without ``_``, ``-`` or whitespace."""
    return _DROP.sub("", text.lower())


def alternatives(term: str) -> list[str]:
    """The normalised spellings a term accepts (``a|b`` -> [a, b]); empty parts are ignored."""
    return [n for n in (norm(part) for part in term.split("|")) if n]


def has(text_norm: str, term: str) -> bool:
    """Whether normalised text contains the term (any of its alternatives)."""
    return any(alt in text_norm for alt in alternatives(term))


def fingerprint_holds(text: str, all_of: Iterable[str], any_of: Iterable[str]) -> bool:
    """Every ``all_of`` term appears, and at least one ``any_of`` term if any are given."""
    flat = norm(text)
    any_of = list(any_of)
    return all(has(flat, t) for t in all_of) and (not any_of or any(has(flat, t) for t in any_of))


def same_name(a: str, b: str) -> bool:
    return norm(a) == norm(b)


def subwords(identifier: str) -> list[str]:
    """Lower-case parts of an identifier, split at ``_``/``-`` and camelCase humps."""
    return [part.lower() for word in _WORD.findall(identifier) for part in _CAMEL.findall(word)]


def words(text: str) -> set[str]:
    """Every sub-word of every identifier in text: the vocabulary a term may hit."""
    return {part for token in _WORD.findall(text) for part in subwords(token)}


def prefix_hits(text: str, term: str) -> list[str]:
    """Occurrences of term starting at a word start (``redis`` hits ``RedisLock``, ``redis_key``).

    A word starts at the text's start, after a character that is not a letter or
    digit, or at a camelCase hump. The term's own ``_``, ``-`` and spaces are
    optional in the text, as everywhere else. Returns the words hit, in order.
    """
    letters = [re.escape(c) for c in norm(term)]
    if not letters:
        return []
    pattern = re.compile(r"[_\s-]*".join(letters), re.IGNORECASE)
    hits = []
    for match in pattern.finditer(text):
        start = match.start()
        before = text[start - 1] if start else ""
        hump = before.islower() and text[start].isupper()
        if not before or not before.isalnum() or hump:
            end = match.end()
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            hits.append(text[start:end])
    return hits

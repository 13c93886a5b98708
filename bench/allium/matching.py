"""One-to-one assignment of expected items to candidate blocks.

Both scorers credit each expected item (a golden rule, a planted divergence) to
at most one candidate (a spec rule, a findings section) and each candidate to at
most one item. The seed assigned greedily, most-constrained first; a maximum
bipartite matching (augmenting paths, Kuhn's algorithm) never does worse and
does better when a vague candidate fits several items, and its order is fixed by
the inputs' order, so the same texts always score the same.
"""

from __future__ import annotations


def assign(fits: list[list[int]]) -> dict[int, int]:
    """Maximum matching: item index -> candidate index. ``fits[i]`` lists the candidates item i may take."""
    owner: dict[int, int] = {}  # candidate -> item

    def place(item: int, seen: set[int]) -> bool:
        for cand in fits[item]:
            if cand in seen:
                continue
            seen.add(cand)
            if cand not in owner or place(owner[cand], seen):
                owner[cand] = item
                return True
        return False

    order = sorted(range(len(fits)), key=lambda i: (len(fits[i]), i))
    for item in order:
        place(item, set())
    return {item: cand for cand, item in owner.items()}

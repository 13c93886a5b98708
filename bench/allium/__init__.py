"""Allium trials: deterministic scoring of distilled specs and weed reports (issue 13, pure-Python half).

Ported from the allium-trials harness so that bench can trial two checkouts of
the Allium plugin side by side and prove a token saving did not cost quality.
Nothing here runs a model, a container or the ``allium`` CLI: each scorer is a
pure function from an artifact's text and its golden data to an ``AlliumScore``
whose metrics each declare a direction (higher- or lower-is-better) for compare's
guardrail floor.

* ``score_distill(spec_text, manifest)`` — a spec against goldens/<case>/manifest.toml:
  recall per category, confabulation (gated), invented entities / unmatched rules
  (for review), exclusion leaks, structural validity; records the decider.
* ``score_weed(findings_text, manifest)`` — weed-findings.md against
  goldens/<case>/divergences.toml: divergence recall and false positives.
* ``validate_distill_file`` / ``validate_weed_file`` — golden data checked against
  the fixture's code and the planted spec, before any trial runs.

The spec is read by the harness's own parser (decider ``harness-parser``); an
``allium`` CLI adapter would implement ``SpecSource`` and pass its ParsedSpec to
``score_distill`` instead of text.
"""

from .distill import score_distill
from .manifest import (DistillManifest, DistillThresholds, WeedManifest, WeedThresholds, load_distill_manifest,
                       load_weed_manifest)
from .parser import DECIDER, HarnessParser, parse_spec
from .results import AlliumScore, Metric
from .spec import ParsedSpec, SpecSource
from .validate import Problem, validate_distill, validate_distill_file, validate_weed, validate_weed_file
from .weed import score_weed, split_findings

__all__ = [
    "DECIDER", "AlliumScore", "DistillManifest", "DistillThresholds", "HarnessParser", "Metric", "ParsedSpec",
    "Problem", "SpecSource", "WeedManifest", "WeedThresholds", "choose_spec", "load_distill_manifest",
    "load_weed_manifest", "parse_spec", "score_distill", "score_weed", "split_findings", "validate_distill",
    "validate_distill_file", "validate_weed", "validate_weed_file",
]


def choose_spec(files: dict[str, int], preferred: str) -> str | None:
    """Which workspace file is the distilled spec: ``preferred`` if present, else the largest ``.allium``.

    ``files`` maps workspace-relative paths to sizes (e.g. from the exported tar).
    The seed's rule: agents sometimes write the spec elsewhere, and the largest
    spec file is the best guess at the main one; ties go to the first path in order.
    """
    if preferred in files:
        return preferred
    specs = sorted((p for p in files if p.endswith(".allium")), key=lambda p: (-files[p], p))
    return specs[0] if specs else None

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

from importlib import import_module

# Each name's module, imported on first use (PEP 562): the gate's models import only
# .manifest, and every `bench` command loads them, so the scorers and the parser wait
# until an Allium check asks for them (about 20 ms of start-up otherwise).
_HOME = {
    "score_distill": "distill", "DistillManifest": "manifest", "DistillThresholds": "manifest",
    "WeedManifest": "manifest", "WeedThresholds": "manifest", "load_distill_manifest": "manifest",
    "load_weed_manifest": "manifest", "DECIDER": "parser", "HarnessParser": "parser", "parse_spec": "parser",
    "AlliumScore": "results", "Metric": "results", "ParsedSpec": "spec", "SpecSource": "spec",
    "Problem": "validate", "validate_distill": "validate", "validate_distill_file": "validate",
    "validate_weed": "validate", "validate_weed_file": "validate", "score_weed": "weed", "split_findings": "weed",
}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

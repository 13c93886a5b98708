"""Score a weed report (weed-findings.md) against the planted divergences.

Pure text matching, as in the seed: the report is split into findings (``## ``
sections; failing that, top-level bullets; failing that, the whole document),
and a planted divergence is found by a finding that holds its fingerprint (every
``must_all`` term, and one ``must_any`` term if any are given), one finding per
divergence. Findings that match no divergence are false positives, unless they
hold a declared judgement call's terms (dead loyalty code, the flagged-off SMS
path): the fixture knowingly invites those. A weed that flags healthy spec/code
pairs is unusable even at perfect recall, so both numbers gate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .manifest import WeedManifest, WeedThresholds
from .matching import assign
from .results import AlliumScore, broken, metric
from .terms import fingerprint_holds

_SECTION = re.compile(r"^##\s+", re.M)
_BULLET = re.compile(r"^[-*]\s+", re.M)
_ALL_CLEAR = re.compile(r"no\s+divergences?\s+(were\s+)?found", re.I)


@dataclass(frozen=True)
class Finding:
    title: str
    text: str


def split_findings(report: str) -> list[Finding]:
    """One finding per ``## `` section, else per top-level bullet, else the whole text; an all-clear is none."""
    for pattern in (_SECTION, _BULLET):
        parts = pattern.split(report)[1:]
        if parts:
            break
    else:
        parts = [report] if report.strip() else []
    findings = [Finding(part.strip().split("\n", 1)[0].strip()[:80], part) for part in parts]
    if len(findings) == 1 and _ALL_CLEAR.search(findings[0].text):
        return []
    return findings


def score_weed(report: str | None, manifest: WeedManifest, thresholds: WeedThresholds | None = None) -> AlliumScore:
    """Score a findings report (None: the agent wrote none, so every divergence is missed)."""
    bounds = thresholds or manifest.gate
    findings = split_findings(report or "")
    fits = [[j for j, f in enumerate(findings) if fingerprint_holds(f.text, d.must_all, d.must_any)]
            for d in manifest.divergences]
    pairs = assign(fits)
    used = set(pairs.values())
    excused, false_positives = [], []
    for j, finding in enumerate(findings):
        if j in used:
            continue
        calls = [c.id for c in manifest.judgement_calls if fingerprint_holds(finding.text, c.must_all, [])]
        (excused if calls else false_positives).append(finding.title)
    found = [d.id for i, d in enumerate(manifest.divergences) if i in pairs]
    metrics = {
        "divergence_recall": metric(len(found) / len(manifest.divergences), "higher", bounds.divergence_recall),
        "false_positive_count": metric(len(false_positives), "lower", bounds.max_false_positives),
    }
    reasons = broken(metrics)
    if report is None:
        reasons.insert(0, f"no findings report ({manifest.findings_path}) was written")
    review = {
        "found": found, "missed": [d.id for i, d in enumerate(manifest.divergences) if i not in pairs],
        "false_positives": false_positives, "excused": excused, "findings": [f.title for f in findings],
    }
    return AlliumScore(kind="weed", passed=not reasons, reasons=reasons, metrics=metrics,
                       review={k: v for k, v in review.items() if v})

"""The one renderer behind `bench view` and `bench view --bundle`: every page written to a folder.

Both modes call ``render_site``: the bundle is the folder itself, the local server
serves a bundle rendered into a temporary folder. Links are relative, so the folder
opens from file:// and can be published as it is. Jinja2 autoescapes everything: case
and arm names, reasons and file names are written by agents and graders and are
hostile input; they are shown as text, never as markup.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape

from ..compare import CompareReport, compare_labels
from ..compare_tables import _delta, _rate, _spread
from ..errors import BenchError
from ..models import Verdict
from ..stat_models import MetricSpread
from .data import Label, find_labels, load_label, shared_cases

STATIC = Path(__file__).parent / "static"


def environment() -> Environment:
    """Autoescaping on for every template, undefined names an error: a typo must not render as blank."""
    from jinja2 import StrictUndefined

    env = Environment(loader=PackageLoader("bench.view", "templates"), autoescape=select_autoescape(default=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(url=lambda s: quote(str(s)), pct=_pct, num=_num, spread=_spread_cell)
    env.globals.update(Verdict=Verdict, verdicts=[v.value for v in Verdict])
    return env


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if abs(value) >= 1000 or float(value).is_integer() else f"{value:.3g}"


def _spread_cell(s: MetricSpread | None) -> str:
    return _spread(s)


@dataclass
class Site:
    """What one render covers: the labels, the compare pairs asked for, and where it was written."""

    out: Path
    labels: list[Label]
    compares: list[tuple[str, str]] = field(default_factory=list)


def render_site(results: Path, out: Path, trusted: dict, only: list[str] | None = None,
                compares: list[tuple[str, str]] = ()) -> Site:
    """Every page for the labels under ``results`` (``only`` to pick some), the compares asked for, and each
    label's compare with the latest earlier label sharing a case (the index links them all)."""
    labels = [load_label(folder, trusted) for folder in find_labels(results)
              if only is None or folder.name in only]
    pairs = list(dict.fromkeys([*compares, *_sharing(labels)]))
    site = Site(out, labels, pairs)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(STATIC, out / "static", dirs_exist_ok=True)
    env = environment()
    _write(out / "index.html", env.get_template("labels.html").render(root="", labels=labels, pairs=pairs))
    for label in labels:
        write_label(env, out, label)
    for base, cand in pairs:
        write_compare(env, out, results, trusted, base, cand)
    return site


def _sharing(labels: list[Label]) -> list[tuple[str, str]]:
    """Each label against the latest earlier label sharing a case with it (the earlier one the baseline).

    One pair per label, not every two: each compare verifies both labels again, so all pairs would
    grow with the square of the labels; any other pair is one ``--compare A B`` away.
    """
    ordered = sorted(labels, key=lambda lbl: (lbl.date is None, lbl.date, lbl.name))
    pairs = []
    for i, cand in enumerate(ordered):
        base = next((b for b in reversed(ordered[:i]) if shared_cases(b, cand)), None)
        if base is not None:
            pairs.append((base.name, cand.name))
    return pairs


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def write_label(env: Environment, out: Path, label: Label) -> None:
    """label/<label>/index.html, then each trial's page (the trial renderer's, or a placeholder)."""
    folder = out / "label" / label.name
    longest = max((t.wall_s for t in label.trials), default=0.0) or 1.0
    _write(folder / "index.html", env.get_template("label.html").render(
        root="../../", label=label, longest=longest, rate=_rate))
    for trial in label.trials:
        context = {"root": "../../../../", "label": label, "trial": trial, "env": env, "banner": banner(label)}
        trial_page(trial.paths.dir, folder / trial.page, context)


def banner(label: Label) -> str | None:
    """The label's verify-provenance failures in one line, for pages drawn by the trial renderer; None when it
    verifies."""
    if label.verified:
        return None
    found = [f"{where}: {what}" for where, what in label.findings] + label.unreadable
    return f"{label.name} does not verify (signature {label.signature}): " + "; ".join(found)


def trial_page(trial_dir: Path, out_path: Path, context: dict) -> None:
    """The trial viewer's ``render_trial`` (bench/view/trial.py) when it exists, else a placeholder page that
    still says the verdict and reason, so every link from the label page leads somewhere."""
    try:
        from .trial import render_trial
    except ImportError:
        render_trial = None
    if render_trial is not None:
        render_trial(trial_dir, out_path, context)
        return
    _write(out_path, context["env"].get_template("trial_placeholder.html").render(
        root=context["root"], label=context["label"], trial=context["trial"]))


def compare_name(base: str, cand: str) -> str:
    return f"{base}--{cand}.html"


def write_compare(env: Environment, out: Path, results: Path, trusted: dict, base: str, cand: str) -> None:
    """compare/<base>--<cand>.html from bench/compare.py's own report: the numbers `bench compare` prints."""
    report: CompareReport | None = None
    error = ""
    try:
        report = compare_labels(base, cand, results, trusted=trusted)
    except BenchError as exc:
        error = str(exc)
    _write(out / "compare" / compare_name(base, cand), env.get_template("compare.html").render(
        root="../", base=base, cand=cand, report=report, error=error, rate=_rate, delta=_delta))

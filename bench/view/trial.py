"""One trial's page: verdict, every check with its numbers, frames with the regions the gate measured,
the transcript as a conversation, the gate log, the workspace and its diff, and the full provenance.

Why one function, ``render_trial(trial_dir, out_path, context)``: the site (bench/view/site.py) decides
where pages go and what banner a label carries; this module only turns one trial folder into one page.
Whatever the page links to (frames, the raw records) is copied into ``<page stem>.files/`` beside it with
relative links, so a bundle opened from file:// or published as static files shows the same thing.

The agent wrote the transcript, the workspace's file names, the gate log's quoted output and even parts of
result.json's details: every value reaches the page through the template's autoescaping, nothing is
marked safe, and nothing of the agent's is followed (links in the workspace are listed, not read).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from pydantic import ValidationError

from ..gates.session import slug
from ..paths import Project, is_project
from ..result_models import CheckResult, TrialResult
from . import transcript_view, workspace_view

TEMPLATES = Path(__file__).parent / "templates"
LOG_MAX_BYTES = 400_000
DETAIL_MAX_CHARS = 20_000
LOGS = ("setup.log", "agent-stderr.log", "endpoint.log", "proxy.log")
RAW = ("result.json", "provenance.json", "assessment.json", "gate.log")


@dataclass
class Box:
    """A predicate's region over a frame, as CSS percentages of the image."""

    label: str
    passed: bool
    left: str
    top: str
    width: str
    height: str
    against: bool = False
    stack: int = 0  # how many boxes with the same top-left corner come before it: its label goes below theirs


@dataclass
class Frame:
    name: str
    src: str  # relative to the page
    boxes: list[Box] = field(default_factory=list)
    note: str = ""


def render_trial(trial_dir: Path, out_path: Path, context: dict) -> None:
    """Write the page for ``trial_dir`` to ``out_path``; its assets go to ``<stem>.files/`` beside it.

    ``context``: ``root`` (relative URL back to the site root), ``banner`` (the label's verify-provenance
    failure text, or None); optional ``env`` (the site's Jinja environment), ``project`` (the project
    root, to rebuild the starting workspace; else the folder above results/ when it is a project).
    """
    env = context.get("env") or environment()
    files = out_path.parent / f"{out_path.stem}.files"
    if files.exists():
        shutil.rmtree(files)
    files.mkdir(parents=True)
    page = collect(trial_dir, files, f"{quote(files.name)}/", context)
    out_path.write_text(env.get_template("trial.html").render(**page), encoding="utf-8")


def environment() -> Environment:
    """The site passes its own; alone (a test, one page) the same rules: autoescape on, undefined is an error."""
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True)


def collect(trial_dir: Path, files: Path, href: str, context: dict) -> dict:
    """Everything the template shows, read from the trial folder; assets copied into ``files``."""
    result, result_problem = _record(trial_dir / "result.json", TrialResult)
    provenance_text, provenance = _json(trial_dir / "provenance.json")
    checks = [check_view(c, trial_dir, files, href) for c in (result.checks if result else [])]
    raw = _copy_raw(trial_dir, files, href)
    return {
        "root": context.get("root", ""), "banner": context.get("banner"), "label": context.get("label"),
        "title": _title(trial_dir, result), "result": result, "result_problem": result_problem, "checks": checks, "raw": raw,
        "transcript": transcript_view.load(trial_dir),
        "gate_log": _read_log(trial_dir / "gate.log"), "logs": _logs(trial_dir),
        "workspace": workspace_view.load(trial_dir, _project(trial_dir, context),
                                         workspace_view.Start.of(provenance)),
        **provenance_view(provenance_text, provenance),
    }


def _record(path: Path, model: type) -> tuple[object | None, str]:
    """The record, or None and why not: a page for a broken trial still shows what is there."""
    if not path.is_file():
        return None, f"{path.name} missing"
    try:
        return model.model_validate_json(path.read_bytes()), ""
    except ValidationError as exc:
        return None, f"{path.name} unreadable: {exc.error_count()} problem(s): {exc.errors()[0]['msg']}"


def _title(trial_dir: Path, result: TrialResult | None) -> str:
    if result is None:
        return "/".join(trial_dir.parts[-4:])
    return f"{result.label} · {result.case} · {result.arm} · trial {result.trial}"


def _project(trial_dir: Path, context: dict) -> Project | None:
    """The project the trial's case lives in: the context's, else the folder above results/<label>/."""
    if context.get("project"):
        return Project(Path(context["project"]))
    parents = trial_dir.resolve().parents
    return Project(parents[4]) if len(parents) > 4 and is_project(parents[4]) else None


def _clip(text: str, limit: int) -> tuple[str, str]:
    return transcript_view.clip(text, limit)


def _read_log(path: Path) -> dict | None:
    """A log as text, capped at LOG_MAX_BYTES with a note; None when the trial has none."""
    if not path.is_file() or path.stat().st_size == 0:  # an empty log says nothing worth a section
        return None
    with open(path, "rb") as handle:
        data = handle.read(LOG_MAX_BYTES + 1)
    note = f"only the first {LOG_MAX_BYTES:,} bytes are shown" if len(data) > LOG_MAX_BYTES else ""
    return {"name": path.name, "text": data[:LOG_MAX_BYTES].decode("utf-8", "replace"), "note": note}


def _logs(trial_dir: Path) -> list[dict]:
    return [log for log in (_read_log(trial_dir / name) for name in LOGS) if log]


def _copy_raw(trial_dir: Path, files: Path, href: str) -> list[tuple[str, str]]:
    """The records themselves, copied beside the page so each is one click away (name, link)."""
    (files / "raw").mkdir(exist_ok=True)
    links = []
    for name in RAW:
        if (trial_dir / name).is_file() and not (trial_dir / name).is_symlink():
            shutil.copyfile(trial_dir / name, files / "raw" / name)
            links.append((name, f"{href}raw/{quote(name)}"))
    return links


# --- checks ----------------------------------------------------------------------------------


def check_view(check: CheckResult, trial_dir: Path, files: Path, href: str) -> dict:
    """One check as the page shows it: status, numbers, lists, and its frames with regions drawn."""
    status = ("skipped" if check.skipped else "incomplete" if check.incomplete
              else "pass" if check.passed else "fail")
    detail, detail_note = _clip(check.detail, DETAIL_MAX_CHARS)
    return {"check": check, "status": status, "detail": detail, "detail_note": detail_note,
            "metrics": metric_rows(check), "frames": frames(check, trial_dir, files, href)}


def metric_rows(check: CheckResult) -> list[dict]:
    """Each metric with its direction (higher unless the gate says lower) and the gate's bound, if any."""
    rows = []
    for name, value in check.metrics.items():
        direction = check.directions.get(name, "higher")
        bound = check.bounds.get(name)
        within = None if bound is None else (value >= bound if direction == "higher" else value <= bound)
        rows.append({"name": name, "value": value, "direction": direction, "bound": bound, "within": within,
                     "bound_word": "floor" if direction == "higher" else "ceiling"})
    return rows


def _pct(fraction: float) -> str:
    return f"{round(float(fraction) * 100, 4):g}%"


def box(label: str, passed: bool, region: list, against: bool = False) -> Box:
    x0, y0, x1, y1 = region
    return Box(label, passed, _pct(x0), _pct(y0), _pct(x1 - x0), _pct(y1 - y0), against)


def frames(check: CheckResult, trial_dir: Path, files: Path, href: str) -> list[Frame]:
    """The check's saved frames (artifacts/<check>/<frame>.png), each with the boxes of the predicates that
    decided on it; a frame no predicate names is shown bare. Copied beside the page."""
    folder = trial_dir / "artifacts" / slug(check.name)
    if not folder.is_dir() or folder.is_symlink():
        return []
    shown: dict[str, Frame] = {}
    for predicate in check.predicates:
        for name in predicate.get("frames", []):
            frame = shown.get(name) or _copy_frame(folder / f"{slug(name)}.png", name, files, href, check.name)
            if frame is None:
                continue
            shown[name] = frame
            _add_boxes(frame, predicate)
    for png in sorted(folder.glob("*.png")):
        if png.stem not in {slug(name) for name in shown}:
            frame = _copy_frame(png, png.stem, files, href, check.name)
            if frame:
                shown[png.stem] = frame
    return list(shown.values())


def _add_boxes(frame: Frame, predicate: dict) -> None:
    label, passed = str(predicate.get("name", "?")), bool(predicate.get("passed"))
    if predicate.get("region") is None:
        frame.note = "regions not recorded (result.json from before they were)"
        return
    drawn = [box(label, passed, predicate["region"])]
    if predicate.get("against") is not None:
        drawn.append(box(f"{label} (against)", passed, predicate["against"], against=True))
    for new in drawn:
        new.stack = sum((b.left, b.top) == (new.left, new.top) for b in frame.boxes)
        frame.boxes.append(new)


def _copy_frame(png: Path, name: str, files: Path, href: str, check: str) -> Frame | None:
    if not png.is_file() or png.is_symlink():
        return None
    target = files / slug(check) / png.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(png, target)
    return Frame(name, f"{href}{quote(slug(check))}/{quote(png.name)}")


# --- provenance ------------------------------------------------------------------------------


def _json(path: Path) -> tuple[str, object]:
    """A record's text and its parsed JSON (None when missing or not JSON)."""
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    try:
        return text, json.loads(text) if text else None
    except ValueError:
        return text, None


def provenance_view(text: str, data: object) -> dict:
    """provenance.json pretty-printed line by line with the seat's lines marked, and the seat itself. Read as
    JSON, not as the model, so a record this version cannot validate still shows who graded it; the site's
    banner says when a label does not verify."""
    if not isinstance(data, dict):
        return {"provenance_lines": [(line, False) for line in text.splitlines()], "seat": None}
    seat = data.get("seat") if isinstance(data.get("seat"), dict) else None
    marked, inside = [], False
    for line in json.dumps(data, indent=2, ensure_ascii=False).splitlines():
        starts = line.startswith('  "seat": ')
        inside = inside or starts
        marked.append((line, inside))
        if inside and (line.rstrip(",") == "  }" or (starts and not line.rstrip(",").endswith("{"))):
            inside = False
    return {"provenance_lines": marked, "seat": seat}

"""`bench report LABEL`: one self-contained HTML page a person can look at.

Pass rates are drawn, not listed: a bar per case x arm with its Wilson 95% interval as
a whisker, so an arm that "won" by one trial of three looks as uncertain as it is. Every
trial is a row coloured by verdict, with its reason and timings, and every frame a gate
saved is shown inline (PNG, base64), so the page can be mailed or archived alone.
Trials of a dry run are marked as such (no agent ran; the scaffold was graded), and
each trial row shows its lane and per-check marks (``s`` = skipped). When `bench metrics`
has written authoring-metrics.json, its per case x track x arm table is shown too.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from .errors import UsageError
from .models import Verdict
from .result_models import TrialResult
from .authoring_metrics import AuthoringMetrics
from .stat_models import ArmSummary, Summary
from .summary import check_marks, summarize_arm
from .paths import RunPaths, TrialPaths
from .readback import read_record, rerun_fix

COLOURS = {Verdict.PASS: "#2e7d32", Verdict.FAIL: "#c62828", Verdict.INCOMPLETE: "#9e9e9e",
           Verdict.ERROR: "#ef6c00"}
BAR_W, ROW_H, LABEL_W = 420, 26, 220
MAX_FRAMES = 12


def render(paths: RunPaths) -> Path:
    """Write report.html beside summary.json and return its path."""
    if not paths.summary.is_file():
        raise UsageError(f"{paths.summary} does not exist — run `bench run ... --label {paths.label}` first")
    summary = read_record(paths.summary, Summary, f"run `bench run ... --label {paths.label}` again to rewrite it")
    trials = [(t, read_record(t.result, TrialResult, rerun_fix(t))) for t in paths.trials()]
    dry = [r for _, r in trials if r.dry_run]
    body = [f"<h1>bench run {html.escape(summary.label)}</h1>",
            f"<p>{len(trials)} trial(s); pass rate counts PASS and FAIL only.</p>",
            f"<p><strong>Dry run</strong>: {len(dry)} trial(s) ran no agent; their verdicts grade the untouched "
            f"workspace, never an agent.</p>" if dry else "",
            pass_rate_chart(summary.arms), trial_table(trials), authoring_section(paths), frames_section(trials)]
    out = paths.report
    out.write_text(PAGE.format(title=html.escape(summary.label), body="\n".join(body)))
    return out


def pass_rate_chart(arms: list[ArmSummary]) -> str:
    """Inline SVG: one bar per case x arm, whisker = Wilson interval, counts beside it."""
    rows = []
    for i, arm in enumerate(arms):
        y = 10 + i * ROW_H
        rate = arm.pass_rate or 0.0
        low, high = arm.pass_interval or (0.0, 0.0)
        counts = " ".join(f"{v.value[0]}{n}" for v, n in arm.counts.items() if n)
        label = html.escape(f"{arm.case} / {arm.arm}")
        rows.append(
            f'<text x="0" y="{y + 15}">{label}</text>'
            f'<rect x="{LABEL_W}" y="{y + 3}" width="{BAR_W}" height="16" fill="#eee"/>'
            f'<rect x="{LABEL_W}" y="{y + 3}" width="{rate * BAR_W:.1f}" height="16" fill="#2e7d32"/>'
            + (f'<line x1="{LABEL_W + low * BAR_W:.1f}" x2="{LABEL_W + high * BAR_W:.1f}" y1="{y + 11}" '
               f'y2="{y + 11}" stroke="#000" stroke-width="2"/>' if arm.pass_interval else "")
            + f'<text x="{LABEL_W + BAR_W + 8}" y="{y + 15}">'
              f'{"—" if arm.pass_rate is None else f"{rate:.0%}"} ({counts})</text>'
        )
    height = 20 + len(arms) * ROW_H
    return (f'<h2>Pass rate (Wilson 95% interval)</h2><svg class="chart" width="{LABEL_W + BAR_W + 160}" '
            f'height="{height}" role="img" aria-label="pass rates">{"".join(rows)}</svg>')


def trial_table(trials: list[tuple[TrialPaths, TrialResult]]) -> str:
    rows = []
    for _, r in trials:
        phases = ", ".join(f"{k} {v:.1f}s" for k, v in r.phases.items())
        marks = check_marks(summarize_arm(r.case, r.arm, [r]).checks)
        rows.append(f'<tr><td>{html.escape(r.case)}</td><td>{html.escape(r.arm)}</td><td>{r.trial}</td>'
                    f'<td style="color:{COLOURS[r.verdict]};font-weight:bold">{r.verdict.value}'
                    f'{" (dry run)" if r.dry_run else ""}</td><td>{html.escape(r.lane)}</td><td>{html.escape(marks)}</td>'
                    f"<td>{html.escape(r.reason)}</td><td>{phases}</td></tr>")
    return ("<h2>Trials</h2><table><tr><th>case</th><th>arm</th><th>n</th><th>verdict</th><th>lane</th>"
            f"<th>checks</th><th>reason</th><th>phases</th></tr>{''.join(rows)}</table>")


def authoring_section(paths: RunPaths) -> str:
    """authoring-metrics.json as a table, when `bench metrics` wrote one (a derived view: rerun it to refresh)."""
    if not paths.authoring_metrics.is_file():
        return ""
    found = read_record(paths.authoring_metrics, AuthoringMetrics, f"rerun `bench metrics {paths.label}`")
    head = ["case", "track", "arm", "trials", "task pass", "first-pass", "retries→green", "failing runs",
            "teaching errors", "lines", "failing/1k", "teaching/1k"]
    rows = []
    for g in found.groups:
        cells = [g.case, g.track or "—", g.arm, g.trials, f"{g.task_pass}/{g.task_valid}",
                 f"{g.first_pass}/{g.first_pass_of}", g.retries_to_green_mean, g.failing_runs, g.teaching_errors,
                 g.generated_lines, g.failing_runs_per_kloc, g.teaching_errors_per_kloc]
        rows.append("<tr>" + "".join(f"<td>{html.escape(_cell(c))}</td>" for c in cells) + "</tr>")
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in found.notes)
    return (f"<h2>Authoring metrics</h2><p>From the transcripts (`bench metrics`, {found.created_at:%Y-%m-%d %H:%M} "
            f"UTC); compliance commands and teaching errors are each case's gate.toml [metrics] patterns.</p>"
            f"<table><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr>{''.join(rows)}</table>"
            + (f"<ul>{notes}</ul>" if notes else ""))


def _cell(value: object) -> str:
    return "—" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def frames_section(trials: list[tuple[TrialPaths, TrialResult]]) -> str:
    """Every PNG a gate saved, inline, captioned by trial and file name."""
    figures = []
    for paths, r in trials:
        for png in sorted(paths.artifacts.rglob("*.png"))[:MAX_FRAMES]:
            data = base64.b64encode(png.read_bytes()).decode()
            caption = html.escape(f"{r.case}/{r.arm}/trial-{r.trial}: {png.name}")
            figures.append(f'<figure><img src="data:image/png;base64,{data}" alt="{caption}">'
                           f"<figcaption>{caption}</figcaption></figure>")
    if not figures:
        return ""
    return f'<h2>Frames</h2><div class="frames">{"".join(figures)}</div>'


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bench {title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }} td, th {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; }}
.chart text {{ font: 13px system-ui, sans-serif; }}
.frames {{ display: flex; flex-wrap: wrap; gap: 12px; }}
figure {{ margin: 0; }} figure img {{ width: 320px; border: 1px solid #ccc; }}
figcaption {{ font-size: 12px; color: #555; }}
</style></head><body>
{body}
</body></html>
"""

"""bench view's renderer over hand-made labels: the page's numbers are the records', hostile text stays text,
a label that fails verify-provenance says so on its pages, and compare shows `bench compare`'s own verdict."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.compare import compare_labels
from bench.keys import trusted_keys
from bench.paths import RunPaths
from bench.stats import pass_at_k, wilson_interval
from bench.view.site import render_site
from tests.labels import seal
from tests.unit.test_compare import write_label, write_trial

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture(autouse=True)
def placeholder_trials(monkeypatch):
    """Trial pages as the placeholder draws them: these tests are about the site, not the trial renderer."""
    monkeypatch.setitem(sys.modules, "bench.view.trial", types.ModuleType("bench.view.trial"))


def bundle(results: Path, tmp_path: Path, **kwargs) -> Path:
    out = tmp_path / "site"
    render_site(results, out, trusted_keys(), **kwargs)
    return out


def test_label_page_numbers_equal_the_records(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS", "PASS", "FAIL", "ERROR", "PASS"])
    page = (bundle(results, tmp_path) / "label" / "lbl" / "index.html").read_text()
    low, high = wilson_interval(3, 4)
    assert f"({low:.4f}–{high:.4f})" in page  # 3 PASS of 4 graded; the ERROR counts for nothing
    assert f'left: {low * 100:.2f}%; width: {(high - low) * 100:.2f}%' in page  # the whisker, where the bounds are
    assert 'class="bar" style="width: 75.00%"' in page
    assert f"pass@1 {pass_at_k(4, 3, 1):.4f}" in page and f"pass@3 {pass_at_k(4, 3, 3):.4f}" in page
    assert "pass@5" not in page  # only 4 graded trials
    assert "build 3/4" in page and "ERROR 1" in page
    assert all(f'href="c/default/trial-{n}.html"' in page for n in range(1, 6))
    assert "does not verify" not in page


def test_index_lists_each_label_with_its_pass_rate_and_verified_state(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "a", ["PASS", "FAIL", "FAIL"])
    write_label(results, "b", ["PASS", "PASS", "PASS"])
    (results / "not-a-label").mkdir()
    index = (bundle(results, tmp_path) / "index.html").read_text()
    assert "1/3 (33%)" in index and "3/3 (100%)" in index
    assert index.count('class="ok">verified<') == 2 and "not-a-label" not in index
    assert 'href="compare/a--b.html"' in index  # they share case c


def test_a_tampered_label_shows_the_banner_naming_what_failed(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS", "FAIL", "FAIL"])
    result = RunPaths(results / "lbl").trial("c", "default", 2).result
    record = json.loads(result.read_text())
    record["verdict"] = "PASS"
    result.write_text(json.dumps(record))
    site = bundle(results, tmp_path)
    for page in (site / "index.html", site / "label" / "lbl" / "index.html",
                 site / "label" / "lbl" / "c" / "default" / "trial-1.html"):
        text = page.read_text()
        assert 'class="banner"' in text and "lbl does not verify" in text, page
        assert "c/default/trial-2/result.json" in text, page
    assert "FAILS VERIFY" in (site / "index.html").read_text()


def test_script_in_a_reason_or_a_check_name_renders_as_text(tmp_path: Path):
    results = tmp_path / "results"
    label = results / "lbl"
    write_trial(label, 1, "FAIL")
    result = RunPaths(label).trial("c", "default", 1).result
    record = json.loads(result.read_text())
    record["reason"] = f"check failed: {HOSTILE}"
    record["checks"][0]["name"] = HOSTILE
    result.write_text(json.dumps(record))
    seal(label)
    page = (bundle(results, tmp_path) / "label" / "lbl" / "index.html").read_text()
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert len(re.findall(r"<script\b", page)) == 1  # only the viewer's own view.js


def test_compare_page_shows_bench_compares_verdict_and_lines(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "base", ["PASS", "PASS", "PASS"], recall=[0.9, 0.8, 0.9])
    write_label(results, "cand", ["PASS", "PASS", "FAIL"], recall=[0.9, 0.5, 0.9])
    page = (bundle(results, tmp_path, compares=[("base", "cand")]) / "compare" / "base--cand.html").read_text()
    report = compare_labels("base", "cand", results, trusted=trusted_keys())
    assert report.exit_code == 1 and 'data-exit="1"' in page and "GUARDRAIL BROKEN" in page
    for line in report.lines():
        assert f"<li>{line}</li>" in page.replace("&gt;", ">")


def test_a_refused_compare_names_its_reasons(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "base", ["PASS", "PASS", "PASS"])
    write_label(results, "cand", ["PASS", "PASS", "PASS"], goldens="sha256:other")
    page = (bundle(results, tmp_path) / "compare" / "base--cand.html").read_text()
    assert "REFUSED (exit 3)" in page and "not comparable" in page and "goldens" in page


def test_the_trial_renderer_is_called_at_the_agreed_path_when_present(tmp_path: Path, monkeypatch):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS"])
    calls = []
    module = types.ModuleType("bench.view.trial")
    module.render_trial = lambda trial_dir, out_path, context: calls.append((trial_dir, out_path, context["root"], context["banner"]))
    monkeypatch.setitem(sys.modules, "bench.view.trial", module)
    site = bundle(results, tmp_path)
    assert calls == [(results / "lbl" / "c" / "default" / "trial-1",
                      site / "label" / "lbl" / "c" / "default" / "trial-1.html", "../../../../", None)]


def test_view_bundle_and_report_alias_write_the_site(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS", "FAIL"])
    out = tmp_path / "b"
    run = CliRunner().invoke(cli, ["view", "--bundle", str(out), str(results)], catch_exceptions=False)
    assert run.exit_code == 0 and (out / "label" / "lbl" / "index.html").is_file()
    assert (out / "static" / "view.js").is_file() and (out / "static" / "view.css").is_file()
    alias = tmp_path / "r"
    run = CliRunner().invoke(cli, ["report", "lbl", "--results", str(results), "--out", str(alias)],
                             catch_exceptions=False)
    assert run.exit_code == 0 and f"wrote {alias / 'index.html'}" in run.output.replace("\n", "")
    assert (alias / "label" / "lbl" / "index.html").is_file()


def test_pages_link_relatively_and_load_nothing_from_the_network(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS"])
    site = bundle(results, tmp_path)
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "http://" not in text and "https://" not in text and 'href="/' not in text and 'src="/' not in text


def test_authoring_metrics_show_on_the_label_page_when_bench_metrics_wrote_them(tmp_path: Path):
    from datetime import datetime, timezone

    from bench.authoring_metrics import AuthoringMetrics, GroupAuthoring

    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS"])
    group = GroupAuthoring(case="c", track=None, arm="default", trials=1, transcripts=1, task_pass=1, task_valid=1,
                           first_pass=1, first_pass_of=1, first_pass_rate=1.0, green=1, retries_to_green_mean=0.5,
                           failing_runs=2, teaching_errors=3, generated_lines=40, failing_runs_per_kloc=50.0,
                           teaching_errors_per_kloc=75.0)
    found = AuthoringMetrics(label="lbl", created_at=datetime(2026, 1, 2, tzinfo=timezone.utc), groups=[group],
                             tracks=[], trials=[], notes=[f"note {HOSTILE}"])
    RunPaths(results / "lbl").authoring_metrics.write_text(found.model_dump_json())
    page = (bundle(results, tmp_path) / "label" / "lbl" / "index.html").read_text()
    assert "Authoring metrics" in page and "<td>0.5</td>" in page and "<td>75</td>" in page
    assert page.count("Authoring metrics") == 1 and "<title>bench view — lbl</title>" in page  # once, in the body
    assert HOSTILE not in page and "does not verify" not in page  # a derived view, outside the signature


def test_bench_view_serves_the_pages_on_localhost_and_prints_the_url(tmp_path: Path):
    import os
    import subprocess
    import urllib.request

    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS"])
    env = {**os.environ, "DISPLAY": "", "WAYLAND_DISPLAY": ""}
    server = subprocess.Popen([sys.executable, "-m", "bench.cli", "view", str(results), "--port", "0"],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/index\.html", line).group(0)
        assert "lbl" in urllib.request.urlopen(url, timeout=10).read().decode()
        page = urllib.request.urlopen(url.replace("index.html", "label/lbl/index.html"), timeout=10).read().decode()
        assert "pass@1" in page
        assert "no graphical browser here" in server.stdout.readline()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_a_file_added_to_a_trial_after_recording_is_named_in_the_banner(tmp_path: Path):
    results = tmp_path / "results"
    write_label(results, "lbl", ["PASS"])
    RunPaths(results / "lbl").trial("c", "default", 1).named("extra.txt").write_text("added later")
    page = (bundle(results, tmp_path) / "label" / "lbl" / "index.html").read_text()
    assert "lbl does not verify" in page
    assert "extra.txt: present but not in the manifest (added after recording)" in page


def test_a_script_in_case_and_arm_names_renders_as_text_and_links_quoted(tmp_path: Path):
    results = tmp_path / "results"
    label = results / "lbl"
    write_trial(label, 1, "PASS", case="<script>c", arm="<img src=x onerror=alert(1)>")
    (label / "run.json").write_text("{}")  # a run validates its names; a forged label need not, and is still shown
    site = bundle(results, tmp_path)
    for page in (site / "index.html", site / "label" / "lbl" / "index.html"):
        text = page.read_text()
        assert "<script>c" not in text and "<img src=x" not in text and "&lt;script&gt;c" in text, page
    assert 'href="%3Cscript%3Ec/%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E/trial-1.html"' in \
        (site / "label" / "lbl" / "index.html").read_text()


def test_each_label_is_compared_with_the_latest_earlier_one_sharing_a_case(tmp_path: Path):
    from datetime import timedelta

    from tests.unit.test_compare import WHEN

    results = tmp_path / "results"
    for day, name in enumerate(["one", "two", "three"]):
        write_label(results, name, ["PASS"])
        for result in (results / name).glob("*/*/trial-*/result.json"):
            record = json.loads(result.read_text())
            record["started_at"] = (WHEN + timedelta(days=day)).isoformat()
            result.write_text(json.dumps(record))
        seal(results / name)
    site = bundle(results, tmp_path)
    assert sorted(p.name for p in (site / "compare").iterdir()) == ["one--two.html", "two--three.html"]
    render_site(results, tmp_path / "asked", trusted_keys(), compares=[("one", "three")])
    assert 'href="compare/one--three.html"' in (tmp_path / "asked" / "index.html").read_text()

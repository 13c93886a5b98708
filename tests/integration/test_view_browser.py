"""bench view's bundle in a real Chromium (Debian's, in the seat image, driven by Playwright there).

The host has no browser; the seat image does. The bundle is written here with
`bench view --bundle`, mounted read-only, and opened from file:// with networking off:
the pages must load with no console errors (a missing asset or a script error would
show), the label page's numbers must be the records', the trials filter must change
the visible rows and put its state in the URL hash, and the compare page must show
`bench compare`'s verdict. Screenshots land in the test's tmp folder; look at them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.stats import wilson_interval
from tests.unit.test_compare import write_label
from tests.seat_browser import drive_bundle

pytestmark = [pytest.mark.docker, pytest.mark.browser]

DRIVER = r'''
import json, sys
from playwright.sync_api import sync_playwright

SITE = "file:///site/"
found = {"errors": [], "pages": {}}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("console", lambda m: m.type == "error" and found["errors"].append(m.text))
    page.on("pageerror", lambda e: found["errors"].append(str(e)))
    page.on("requestfailed", lambda r: found["errors"].append("failed " + r.url))
    for name, path in [("index", "index.html"), ("label", "label/lbl/index.html"),
                       ("compare", "compare/base--lbl.html")]:
        page.goto(SITE + path)
        page.screenshot(path=f"/out/{name}.png", full_page=True)
        found["pages"][name] = {"title": page.title(), "css": page.evaluate(
            "getComputedStyle(document.querySelector('nav')).backgroundColor")}
    page.goto(SITE + "label/lbl/index.html")
    rows = "#trials tbody tr:not([hidden])"
    found["all_rows"] = page.locator(rows).count()
    found["wilson"] = page.locator("#arms .wilson .exact").first.text_content()
    page.select_option("select[name=verdict]", "FAIL")
    found["fail_rows"] = page.locator(rows).count()
    found["hash"] = page.evaluate("location.hash")
    page.screenshot(path="/out/label-filtered.png", full_page=True)
    page.goto(SITE + "label/lbl/index.html#verdict=PASS")
    page.reload()
    found["deep_link_rows"] = page.locator(rows).count()
    found["deep_link_select"] = page.locator("select[name=verdict]").input_value()
    page.goto(SITE + "label/lbl/index.html")
    page.reload()
    header = page.locator("#trials thead th", has_text="verdict")
    first = "#trials tbody tr:first-child td:nth-child(5)"
    header.click()
    found["sorted"] = [page.locator(first).text_content().strip()]
    header.click()
    found["sorted"].append(page.locator(first).text_content().strip())
    page.goto(SITE + "compare/base--lbl.html")
    found["verdict"] = page.locator("#verdict").text_content().strip()
    browser.close()
print(json.dumps(found))
'''


def test_bundle_pages_load_filter_and_compare_in_chromium(tmp_path: Path, docker_client, seat_tag: str):
    results = tmp_path / "results"
    write_label(results, "base", ["PASS", "PASS", "PASS", "PASS"])
    write_label(results, "lbl", ["PASS", "FAIL", "PASS", "ERROR", "FAIL", "INCOMPLETE"])
    found = drive_bundle(docker_client, seat_tag, results, tmp_path, DRIVER)
    assert found["errors"] == []
    assert all(p["css"] == "rgb(243, 243, 243)" for p in found["pages"].values())  # view.css loaded everywhere
    low, high = wilson_interval(2, 4)
    assert found["wilson"] == f"({low:.4f}–{high:.4f})"
    assert (found["all_rows"], found["fail_rows"], found["hash"]) == (6, 2, "#verdict=FAIL")
    assert (found["deep_link_rows"], found["deep_link_select"]) == (2, "PASS")
    assert found["sorted"] == ["ERROR", "PASS"]  # a header click sorts, a second reverses
    assert found["verdict"] == "GUARDRAIL BROKEN (exit 1)"  # pass: a FAIL where the baseline never failed
    for name in ("index", "label", "label-filtered", "compare"):
        assert (tmp_path / "shots" / f"{name}.png").stat().st_size > 1000

"""A trial page of the bundle in a real Chromium (Debian's, in the seat image, Playwright there, network none).

What is proven in the browser rather than in the HTML text: each predicate's box lands on its frame at the
recorded fractions (measured from the laid-out image and box), a `<script>` in the transcript never runs,
tool calls open from their folded <details>, and the page loads with no console error or failed request
(the copied frame and the stylesheets resolve from file://). The screenshot lands in the test's tmp folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from bench.paths import RunPaths
from bench.result_models import CheckResult, TrialResult
from tests.labels import seal
from tests.seat_browser import drive_bundle
from tests.unit.test_compare import write_trial

pytestmark = [pytest.mark.docker, pytest.mark.browser]

RED = [0.25, 0.25, 0.5, 0.5]
AGAINST = [0.6, 0.1, 0.9, 0.4]

DRIVER = r'''
import json
from playwright.sync_api import sync_playwright

found = {"errors": []}
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("console", lambda m: m.type == "error" and found["errors"].append(m.text))
    page.on("pageerror", lambda e: found["errors"].append(str(e)))
    page.on("requestfailed", lambda r: found["errors"].append("failed " + r.url))
    page.goto("file:///site/label/lbl/red-box/default/trial-1.html")
    page.wait_for_load_state("load")
    found["boxes"] = page.evaluate("""() => {
        const fig = document.querySelector('figure.frame .shot'), img = fig.querySelector('img').getBoundingClientRect();
        return {natural: fig.querySelector('img').naturalWidth, img: [img.width, img.height],
          regions: [...fig.querySelectorAll('.region')].map(r => { const b = r.getBoundingClientRect();
            const s = r.querySelector('span').getBoundingClientRect();
            return {label: r.textContent.trim(), label_top: s.top, box: [(b.left - img.left) / img.width, (b.top - img.top) / img.height,
                    (b.right - img.left) / img.width, (b.bottom - img.top) / img.height]}; })};
    }""")
    found["pwned"] = page.evaluate("window.__pwned || null")
    found["message"] = page.locator(".msg.assistant").first.text_content()
    tool = page.locator("details.tool").first
    found["tool_output_visible_closed"] = tool.locator(".tool-output").is_visible()
    tool.locator("summary").click()
    found["tool_output_visible_open"] = tool.locator(".tool-output").is_visible()
    page.locator("figure.frame").screenshot(path="/out/frame.png")
    page.screenshot(path="/out/trial.png", full_page=True)
    browser.close()
print(json.dumps(found))
'''


def _browser_trial(label: Path) -> None:
    """A FAIL trial of a browser case: one frame, a region that holds and a contrast that fails, a transcript."""
    write_trial(label, 1, "FAIL", case="red-box", seat="fallback")
    paths = RunPaths(label).trial("red-box", "default", 1)
    result = TrialResult.model_validate_json(paths.result.read_text())
    predicates = [
        {"name": "red", "kind": "region", "passed": True, "values": {"r": 220.0}, "frames": ["shot"],
         "detail": "red: holds", "region": RED},
        {"name": "lit", "kind": "contrast", "passed": False, "values": {"delta": 1.0}, "frames": ["shot"],
         "detail": "lit: FAILS", "region": RED, "against": AGAINST},
    ]
    check = CheckResult(name="Red Box", kind="browser", gating=True, passed=False, predicates=predicates,
                        seat={"class": "fallback", "adapter": "SwiftShader"})
    paths.result.write_text(result.model_copy(update={"checks": [check]}).model_dump_json(indent=2))
    image = Image.new("RGB", (640, 360), (20, 20, 20))
    ImageDraw.Draw(image).rectangle((160, 90, 319, 179), fill=(220, 30, 30))
    (paths.artifacts / "red-box").mkdir(parents=True)
    image.save(paths.artifacts / "red-box" / "shot.png")
    lines = [{"type": "assistant", "message": {"content": [
                 {"type": "text", "text": "Drawing <script>window.__pwned = 1</script> the box."}]}},
             {"type": "assistant", "message": {"content": [
                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
             {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "index.html"}]}}]
    (paths.dir / "transcript.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")


def test_trial_page_draws_regions_on_the_frame_in_chromium(tmp_path: Path, docker_client, seat_tag: str):
    results = tmp_path / "results"
    _browser_trial(results / "lbl")
    seal(results / "lbl")
    found = drive_bundle(docker_client, seat_tag, results, tmp_path, DRIVER)
    assert found["errors"] == []
    assert found["boxes"]["natural"] == 640 and found["boxes"]["img"][0] > 0
    regions = {r["label"]: r["box"] for r in found["boxes"]["regions"]}
    assert set(regions) == {"red: holds", "lit: FAILS", "lit (against): FAILS"}
    for label, want in (("red: holds", RED), ("lit: FAILS", RED), ("lit (against): FAILS", AGAINST)):
        assert regions[label] == pytest.approx(want, abs=0.01), label
    tops = {r["label"]: r["label_top"] for r in found["boxes"]["regions"]}
    assert tops["lit: FAILS"] > tops["red: holds"]  # two boxes in one place: the second's label below the first's
    assert found["pwned"] is None and "<script>window.__pwned = 1</script>" in found["message"]
    assert (found["tool_output_visible_closed"], found["tool_output_visible_open"]) == (False, True)
    assert (tmp_path / "shots" / "trial.png").stat().st_size > 1000 and (tmp_path / "shots" / "frame.png").stat().st_size > 1000

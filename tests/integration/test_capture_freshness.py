"""A captured frame shows the page as it is after the capture was asked for, never a frame already in flight.

A step that sends input and then captures (`press`, then `capture`) must judge the page's
answer to the input. Chromium's compositor holds frames drawn before the ask: a
screencast's first frame after a click on the page below was the colour from before the
click in 9 of 10 tries, its second in 7 of 10, and it became fresh only from the third,
so the observer keeps the compositor's screenshot (bench/gates/session.py), which waits
for a frame of its own. Checked in the seat image's real Chromium with the software
seat's flags, on a WebGPU canvas drawn every frame whose colour flips on each click.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.seat_browser import run_driver

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]

PAGE = """<!doctype html><meta charset=utf-8><title>capture</title>
<style>html,body{margin:0;background:#101010}canvas{display:block;width:100vw;height:100vh}</style>
<canvas width=1280 height=720></canvas><script type=module>
const canvas = document.querySelector("canvas");
const device = await (await navigator.gpu.requestAdapter()).requestDevice();
const context = canvas.getContext("webgpu");
context.configure({device, format: navigator.gpu.getPreferredCanvasFormat(), alphaMode: "opaque"});
let colour = {r: 0.8, g: 0.05, b: 0.05, a: 1};
addEventListener("click", () => { colour = colour.r > 0.5 ? {r: 0.05, g: 0.8, b: 0.05, a: 1} : {r: 0.8, g: 0.05, b: 0.05, a: 1}; });
let frames = 0;
function draw() {
  const encoder = device.createCommandEncoder();
  encoder.beginRenderPass({colorAttachments: [{view: context.getCurrentTexture().createView(),
    clearValue: colour, loadOp: "clear", storeOp: "store"}]}).end();
  device.queue.submit([encoder.finish()]);
  if (++frames === 3) window.__harness = {ready: true};
  requestAnimationFrame(draw);
}
requestAnimationFrame(draw);
</script>"""

DRIVER = """
import io, json, os
from pathlib import Path
from PIL import Image
from playwright.sync_api import sync_playwright
from bench.gates.browser import StaticServer, launch
from bench.gates.session import Session

def rgba(png):
    return Image.open(io.BytesIO(png)).convert("RGBA")

playwright = sync_playwright().start()
browser = launch(playwright, "software")
with StaticServer(Path("/site")) as server:
    session = Session(browser, {"name": "capture", "steps": [], "timeout_s": 120})
    session.begin(server.url + "/")
    ready = session.open()
    shown = []
    for _ in range(6):
        session.page.mouse.click(640, 360)
        _, png = session.grab()
        shown.append(list(rgba(png).getpixel((640, 360))))
found = {"ready": ready, "shown": shown}
print(json.dumps(found), flush=True)
os._exit(0)
"""


def test_a_capture_right_after_input_shows_the_input_answered(docker_client, seat_tag, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PAGE)
    found = run_driver(docker_client, seat_tag, tmp_path, DRIVER, {
        str(site): {"bind": "/site", "mode": "ro"}, str(ROOT / "bench"): {"bind": "/src/bench", "mode": "ro"}},
        environment={"PYTHONPATH": "/src"})
    assert found["ready"].startswith("ready by window.__harness.ready"), found
    red, green = (lambda p: p[0] > 150 and p[1] < 40), (lambda p: p[1] > 150 and p[0] < 40)
    expected = [green, red] * 3  # the page starts red; each click flips it
    stale = [n for n, (pixel, wanted) in enumerate(zip(found["shown"], expected)) if not wanted(pixel)]
    assert not stale, f"captures {stale} showed the colour from before their click: {found['shown']}"

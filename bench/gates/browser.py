"""The `browser` check's observer: drive the served project in Chromium, report what it saw.

Runs inside a fresh browser container of its own, on the seat image (Debian's
Chromium driven by Playwright, Pillow to decode frames), started isolated from
anything the agent wrote (``python3 -I``, working directory /opt/bench, files there
root-owned and read-only). The project was built in another container; only its
served folder is here, so no program the agent wrote runs beside this one: only the
page's JavaScript, inside Chromium. The order is chosen for honesty and for time:

1. **Seat first.** Chromium is launched and its WebGPU adapter classified on a blank page
   of bench's own while the host builds the project elsewhere; the host decides a refusal
   (INCOMPLETE) from it, and a refused seat never sees the build.
2. **Serve** the built folder from 127.0.0.1 (WebGPU needs a secure context) and open
   it at 1280x720, deviceScaleFactor 1. **Readiness** is the page's own signal
   (``window.__harness.ready``) when it has one, else two identical structured frames
   (or, for scenes that move on their own, the first structured frame).
3. **Steps** capture frames and send input. Every frame is saved as the PNG Chromium
   produced; the **host** decodes them and decides the predicates (bench/gates/pixels.py),
   so the verdict never rests on numbers computed where the page ran.

Frames are screenshots of the final composited viewport — what a user sees, overlays
included — decoded to tight RGBA8: the encoding ``final-canvas 1280x720@1 rgba8``.
Playwright and Pillow are imported inside functions: only the seat image has them,
and the pure parts here (classification, refusal) are tested without them.
"""

from __future__ import annotations

import base64
import functools
import http.server
import io
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from . import pixels

WIDTH, HEIGHT = 1280, 720
ENCODING = f"final-canvas {WIDTH}x{HEIGHT}@1 rgba8"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
QUIET_FLAGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-unsafe-webgpu"]
# Without a GPU, WebGPU renders only with all five of these; drop one and the device is lost.
SOFTWARE_FLAGS = ["--enable-unsafe-swiftshader", "--enable-features=Vulkan", "--use-angle=swiftshader",
                  "--use-vulkan=swiftshader"]
GPU_FLAGS = ["--enable-features=Vulkan", "--use-angle=vulkan", "--ignore-gpu-blocklist", "--disable-vulkan-surface"]
SOFTWARE_NAMES = ("swiftshader", "llvmpipe", "lavapipe", "softpipe", "basic render", "software")
PROBE_PAGE = b"<!doctype html><meta charset=utf-8><title>seat probe</title><body></body>"
PROBE_JS = """async () => {
  const seat = {gpu: !!navigator.gpu, adapter: null, webgl: ""};
  if (navigator.gpu) {
    const a = await navigator.gpu.requestAdapter();
    if (a) {
      const i = a.info || {};
      seat.adapter = {vendor: i.vendor || "", architecture: i.architecture || "", device: i.device || "",
                      description: i.description || "", fallback: !!(i.isFallbackAdapter || a.isFallbackAdapter)};
    }
  }
  const gl = document.createElement("canvas").getContext("webgl");
  if (gl) {
    const ext = gl.getExtension("WEBGL_debug_renderer_info");
    seat.webgl = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  }
  return seat;
}"""
READY_JS = "() => { const h = window.__harness; return h === undefined || h === null ? null : !!h.ready; }"
# A loading screen or an error card over the canvas is structured too, and can sit still for
# seconds: frames count for readiness only once a canvas is what the centre of the view shows.
CANVAS_JS = "() => { const e = document.elementFromPoint(innerWidth / 2, innerHeight / 2); return !!e && e.tagName === 'CANVAS'; }"


class CheckFailed(Exception):
    """The agent's project did not meet the check (build broke, never ready): FAIL with this reason."""


# --- seat ----------------------------------------------------------------------------------


def classify(adapter: dict | None) -> str:
    """absent / fallback / unidentified / real, by the rules in PLATFORM-NOTES."""
    if not adapter:
        return "absent"
    identity = " ".join(adapter.get(k, "") for k in ("vendor", "architecture", "device", "description")).strip()
    if adapter.get("fallback") or any(name in identity.lower() for name in SOFTWARE_NAMES):
        return "fallback"
    return "real" if identity else "unidentified"


def refusal(need: str, mode: str, seat: dict[str, str]) -> str | None:
    """Why this seat cannot grade a case that needs `need`, or None when it can.

    A case that needs a GPU accepts only a real adapter, unless the run said
    ``--seat software`` — then any adapter at all will do, and the records say so.
    """
    klass = seat["class"]
    if need == "none":
        return None
    if klass == "absent":
        return f"seat refused: Chromium {seat['chromium']} offers no WebGPU adapter in this grader"
    if need == "software" or mode == "software" or klass == "real":
        return None
    hint = ("--seat gpu was given, yet the grader sees no real GPU adapter" if mode == "gpu"
            else "rerun with --seat software to accept a software seat, or --seat gpu on a host with an NVIDIA GPU")
    return (f"seat refused: the case needs a real GPU and the WebGPU adapter is {klass} "
            f"({seat['adapter'] or 'no identity'}); {hint}")


def seat_identity(browser_version: str, probe: dict, mode: str, need: str) -> dict[str, str]:
    adapter = probe.get("adapter")
    identity = "" if not adapter else " / ".join(
        v for v in (adapter[k] for k in ("vendor", "architecture", "device", "description")) if v)
    return {"class": classify(adapter), "mode": mode, "need": need, "chromium": browser_version,
            "adapter": identity, "fallback": "" if not adapter else str(adapter["fallback"]).lower(),
            "webgl": probe.get("webgl", ""), "viewport": f"{WIDTH}x{HEIGHT}@1", "encoding": ENCODING}


# --- serving ---------------------------------------------------------------------------------


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from one folder; nothing reached through a link that leaves it."""

    def log_message(self, *args) -> None:
        pass

    def translate_path(self, path: str) -> str:
        translated = super().translate_path(path)
        root = os.path.realpath(self.directory)
        real = os.path.realpath(translated)
        return translated if real == root or real.startswith(root + os.sep) else os.path.join(root, "\0missing")


class StaticServer:
    """A threaded HTTP server on 127.0.0.1 (a secure context for WebGPU), stopped on exit."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_Handler, directory=str(root))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> "StaticServer":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- the observation ----------------------------------------------------------------------
#
# The build ran in a container of its own; only its served folder is here. This side
# observes and reports (seat, frames, notes, how readiness was seen, or why the page
# fell short); the host decodes the frames and decides every predicate itself.


def launch(playwright, mode: str):
    return playwright.chromium.launch(executable_path=CHROMIUM, timeout=60_000,
                                      args=QUIET_FLAGS + (GPU_FLAGS if mode == "gpu" else SOFTWARE_FLAGS))


def observe_check(plan: dict, emit: Callable[[str, dict], None]) -> None:
    """Seat first, emitted at once; then wait for the built site, drive it and emit the report.

    The host starts this container beside the build container, so Chromium's launch
    and the seat probe cost no time of their own; the site arrives once the build is
    done (``wait_for_site``). Every captured frame is saved as PNG before the report is
    emitted; nothing is closed afterwards (the runner ends the process).
    """
    from playwright.sync_api import sync_playwright

    from .runner import MARK, SEAT_MARK

    check, seat_plan = plan["check"], plan.get("seat") or {}
    need, mode = seat_plan.get("need", "none"), seat_plan.get("mode", "auto")
    clock, out = Stopwatch(), Path(plan["out"])
    report: dict = {"check": check["name"], "failed": None, "notes": [], "frames": {}, "series": {}, "times": {}}
    playwright = sync_playwright().start()
    with clock("launch"):
        browser = launch(playwright, mode)
    with clock("seat"):
        report["seat"] = probe_seat(browser, mode, need)
    emit(SEAT_MARK, {"seat": report["seat"]})
    if refusal(need, mode, report["seat"]) is None:
        with clock("wait"):
            site = wait_for_site(plan["go"], plan["site_wait_s"])
        session = drive(browser, check, site, clock, report)
        if session is not None:
            report.update(frames=session.save(out), series=session.series, times=session.times,
                          timeline=session.timeline())
    report["timings"] = clock.laps
    emit(MARK, report)


def wait_for_site(go: str, within_s: float) -> Path:
    """The served folder, once the host has copied it in and then written ``go`` naming it.

    The host writes ``go`` only after the whole folder is in place, so a folder seen
    here is complete. Never arriving is the harness's fault (the host kills this
    container when the build fails), so it raises rather than reports.
    """
    deadline = time.monotonic() + within_s
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no site arrived within {within_s:.0f} s")
        time.sleep(0.02)
    return Path(json.loads(Path(go).read_text())["site"])


def drive(browser, check: dict, site: Path, clock: "Stopwatch", report: dict) -> "Session | None":
    """Serve, open until ready, run the steps; any way the project falls short lands in report["failed"]."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if not (site / "index.html").is_file():
        report["failed"] = f"the build left no {check['serve']}/index.html to serve"
        return None
    session = None
    try:
        with StaticServer(site) as server:
            session = Session(browser, server.url + check.get("path", "/"), check)
            with clock("ready"):
                report["notes"].append(session.open())
            with clock("steps"):
                for step in check["steps"]:
                    session.do(step)
    except CheckFailed as failed:
        report["failed"] = str(failed)
    except PlaywrightTimeout as exc:  # the page hung a navigation or a capture: the project's doing
        report["failed"] = f"timeout: {str(exc).splitlines()[0]}"
    return session


class Stopwatch:
    """Seconds per named stage, so a result says where a check's time went."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}

    def __call__(self, name: str) -> "Stopwatch":
        self.name = name
        return self

    def __enter__(self) -> None:
        self.started = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.laps[self.name] = round(self.laps.get(self.name, 0.0) + time.monotonic() - self.started, 3)


def probe_seat(browser, mode: str, need: str) -> dict[str, str]:
    """Ask a blank page served from 127.0.0.1 for its WebGPU adapter and WebGL renderer."""
    with tempfile.TemporaryDirectory(prefix="seat-") as tmp:
        (Path(tmp) / "index.html").write_bytes(PROBE_PAGE)
        with StaticServer(Path(tmp)) as server:
            page = browser.new_page()
            try:
                page.goto(server.url + "/", timeout=30_000)
                probe = page.evaluate(PROBE_JS)
            finally:
                page.close()
    return seat_identity(browser.version, probe, mode, need)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "check"


class Session:
    """One page of the project: readiness, input, frames, each timed from the first ready."""

    def __init__(self, browser, url: str, check: dict) -> None:
        self.url, self.check = url, check
        self.deadline = time.monotonic() + check.get("timeout_s", 300)
        self.context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, device_scale_factor=1)
        self.page = None
        self.frames: dict[str, pixels.Frame] = {}
        self.pngs: dict[str, bytes] = {}
        self.times: dict[str, float] = {}
        self.series: dict[str, list[str]] = {}
        self.errors: list[str] = []
        self.started = time.monotonic()

    def open(self) -> str:
        """A new page at the URL, waited on until ready; returns how readiness was seen."""
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.page.on("console", lambda msg: msg.type == "error" and self.errors.append(f"console: {msg.text[:300]}"))
        self.page.goto(self.url, timeout=60_000)
        return self.wait_ready()

    def wait_ready(self) -> str:
        """The harness signal, else two identical structured frames of the canvas (or one, for moving scenes)."""
        limit = self.check.get("ready_timeout_s", 90)
        began = time.monotonic()
        previous = None
        while time.monotonic() - began < limit and time.monotonic() < self.deadline:
            signal_state = self.page.evaluate(READY_JS)
            if signal_state:
                return f"ready by window.__harness.ready after {time.monotonic() - began:.1f} s"
            if signal_state is None and self.page.evaluate(CANVAS_JS):
                frame, _ = self.grab()
                if pixels.structured(frame):
                    if self.check.get("ready") == "signal-or-structured":
                        return f"ready by a structured frame after {time.monotonic() - began:.1f} s"
                    if previous is not None and previous.data == frame.data:
                        return f"ready by two identical structured frames after {time.monotonic() - began:.1f} s"
                    previous = frame
                else:
                    previous = None
            time.sleep(0.05 if signal_state is False else 0.25)  # a harness page is asked often: asking is cheap
        errors = ("; " + "; ".join(self.errors[:3])) if self.errors else ""
        raise CheckFailed(f"timeout: the page was not ready after {limit} s (window.__harness.ready never true, "
                          f"and no {'structured frame' if self.check.get('ready') == 'signal-or-structured' else 'two identical structured frames'}){errors}")

    def grab(self) -> tuple[pixels.Frame, bytes]:
        """The viewport as Chromium composited it, captured over CDP.

        Playwright's own screenshot first injects a style (to hide the caret), which
        costs SwiftShader a whole extra frame; the compositor's capture gives the same
        pixels (PNG is lossless; checked frame for frame on the six cases) in about
        half the time. optimizeForSpeed only lowers the PNG compression level.
        """
        from PIL import Image

        captured = self.cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": True})
        png = base64.b64decode(captured["data"])
        image = Image.open(io.BytesIO(png)).convert("RGBA")
        return pixels.Frame(image.width, image.height, image.tobytes()), png

    def capture(self, name: str) -> None:
        self.frames[name], self.pngs[name] = self.grab()
        self.times[name] = round(time.monotonic() - self.started, 2)

    def do(self, step: dict) -> None:
        """One step; past the check's wall clock, the check fails naming the step."""
        if time.monotonic() > self.deadline:
            raise CheckFailed(f"timeout: the check ran past its {self.check.get('timeout_s', 300)} s before step {step}")
        if step.get("capture"):
            self.capture(step["capture"])
        elif step.get("sample"):
            self.sample(step["sample"], step.get("count", 4), step.get("every_ms", 0))
        elif step.get("wait_ms") is not None:
            time.sleep(step["wait_ms"] / 1000)
        elif step.get("press"):
            self.page.keyboard.press(step["press"])
        elif step.get("click"):
            x, y = step["click"]
            self.page.mouse.click(x * WIDTH, y * HEIGHT)
        elif step.get("drag"):
            self.drag(step["drag"], step.get("drag_steps", 12))
        elif step.get("reload"):
            self.page.reload(timeout=60_000)
            self.wait_ready()
        elif step.get("fresh_load"):
            self.page.close()
            self.open()

    def sample(self, name: str, count: int, every_ms: int) -> None:
        """count frames, each at least every_ms after the previous began (a capture takes its own time)."""
        self.series[name] = []
        for index in range(count):
            began = time.monotonic()
            self.capture(f"{name}-{index}")
            self.series[name].append(f"{name}-{index}")
            rest = every_ms / 1000 - (time.monotonic() - began)
            if rest > 0 and index < count - 1:
                time.sleep(rest)

    def drag(self, box, steps: int) -> None:
        x0, y0, x1, y1 = box
        mouse = self.page.mouse
        mouse.move(x0 * WIDTH, y0 * HEIGHT)
        mouse.down()
        mouse.move(x1 * WIDTH, y1 * HEIGHT, steps=steps)
        mouse.up()

    def timeline(self) -> str:
        return ", ".join(f"{name} @{t:.1f}s" for name, t in self.times.items())

    def save(self, out_dir: Path) -> dict[str, str]:
        """Every captured frame, as the PNG Chromium produced (the bytes the host measures): name -> file."""
        out_dir.mkdir(parents=True, exist_ok=True)
        files = {}
        for name, png in self.pngs.items():
            files[name] = f"{slug(name)}.png"
            (out_dir / files[name]).write_bytes(png)
        return files

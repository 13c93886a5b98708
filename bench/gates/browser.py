"""The `browser` check: build the project, serve it, drive it in Chromium, decide on pixels.

Runs inside the grader, on the seat image (Debian's Chromium driven by Playwright,
Pillow to decode frames). The order is chosen for honesty and for time:

1. **Seat first.** Chromium is launched and its WebGPU adapter classified before
   anything else; a seat the case cannot accept is refused (INCOMPLETE) without
   building, so a refusal is cheap and can never be mistaken for the agent's failure.
2. **Build**, with the gate's command: a project that does not build FAILs, naming it.
3. **Serve** the built folder from 127.0.0.1 (WebGPU needs a secure context) and open it
   at 1280x720, deviceScaleFactor 1. **Readiness** is the page's own signal
   (``window.__harness.ready``) when it has one, else two identical structured frames
   (or, for scenes that move on their own, the first structured frame).
4. **Steps** capture frames and send input; **predicates** (bench/gates/pixels.py)
   decide. Every frame a predicate used is saved as PNG under the artifacts folder.

Frames are screenshots of the final composited viewport — what a user sees, overlays
included — decoded to tight RGBA8: the encoding ``final-canvas 1280x720@1 rgba8``.
Playwright and Pillow are imported inside functions: only the seat image has them,
and the pure parts here (classification, refusal) are tested without them.
"""

from __future__ import annotations

import functools
import http.server
import io
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

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


# --- build -----------------------------------------------------------------------------------


def build(command: str, workspace: Path, timeout_s: int) -> str:
    """Run the gate's build command; raise CheckFailed naming it, with its output's tail."""
    started = time.monotonic()
    proc = subprocess.Popen(["sh", "-c", command], cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise CheckFailed(f"timeout: the build `{command}` ran past {timeout_s} s") from None
    tail = output.decode("utf-8", "replace")[-1500:]
    if proc.returncode != 0:
        raise CheckFailed(f"the build `{command}` exited {proc.returncode}\n{tail}")
    return f"build `{command}` ok in {time.monotonic() - started:.1f} s"


def served_root(workspace: Path, folder: str) -> Path:
    root = (workspace / folder).resolve()
    if workspace.resolve() not in (root, *root.parents):
        raise CheckFailed(f"serve folder {folder!r} leaves the workspace")
    if not (root / "index.html").is_file():
        raise CheckFailed(f"the build left no {folder}/index.html to serve")
    return root


# --- the check -------------------------------------------------------------------------------


def run(check: dict, workspace: Path, plan: dict) -> tuple[bool, str, dict]:
    """(passed, detail, extra): extra carries seat, timings, predicates and, on refusal, incomplete."""
    from playwright.sync_api import sync_playwright

    seat_plan = plan.get("seat") or {}
    need, mode = seat_plan.get("need", "none"), seat_plan.get("mode", "auto")
    clock = Stopwatch()
    with sync_playwright() as playwright:
        with clock("launch"):
            browser = playwright.chromium.launch(executable_path=CHROMIUM, timeout=60_000,
                                                 args=QUIET_FLAGS + (GPU_FLAGS if mode == "gpu" else SOFTWARE_FLAGS))
        try:
            with clock("seat"):
                seat = probe_seat(browser, mode, need)
            refused = refusal(need, mode, seat)
            if refused:
                return False, refused, {"incomplete": True, "seat": seat, "timings": clock.laps}
            try:
                session, notes = observe(browser, check, workspace, clock)
            except CheckFailed as failed:
                return False, str(failed), {"seat": seat, "timings": clock.laps}
            with clock("measure"):
                results = [pixels.evaluate(spec, session.frames, session.series) for spec in check["predicates"]]
                out_dir = Path(plan.get("artifacts", "/bench/artifacts")) / slug(check["name"])
                session.save([name for result in results for name in result["frames"]], out_dir)
        finally:
            browser.close()
    failed = [r for r in results if not r["passed"]]
    lines = [r["detail"] for r in failed + [r for r in results if r["passed"]]]
    lines += notes + [f"frames: {session.timeline()}", f"seat: {seat['class']} ({seat['adapter']})"]
    return not failed, "\n".join(lines), {"seat": seat, "timings": clock.laps, "predicates": results}


def observe(browser, check: dict, workspace: Path, clock: "Stopwatch") -> tuple["Session", list[str]]:
    """Build, serve, open until ready, run the steps; any way the project falls short is CheckFailed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    notes = []
    try:
        with clock("build"):
            if check.get("build"):
                notes.append(build(check["build"], workspace, check.get("build_timeout_s", 240)))
            root = served_root(workspace, check["serve"])
        with StaticServer(root) as server:
            session = Session(browser, server.url + check.get("path", "/"), check)
            with clock("ready"):
                notes.append(session.open())
            with clock("steps"):
                for step in check["steps"]:
                    session.do(step)
    except PlaywrightTimeout as exc:  # the page hung a navigation or a capture: the project's doing
        raise CheckFailed(f"timeout: {str(exc).splitlines()[0]}") from None
    return session, notes


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
            time.sleep(0.25)
        errors = ("; " + "; ".join(self.errors[:3])) if self.errors else ""
        raise CheckFailed(f"timeout: the page was not ready after {limit} s (window.__harness.ready never true, "
                          f"and no {'structured frame' if self.check.get('ready') == 'signal-or-structured' else 'two identical structured frames'}){errors}")

    def grab(self) -> tuple[pixels.Frame, bytes]:
        from PIL import Image

        png = self.page.screenshot(type="png", timeout=60_000)
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

    def save(self, names: list[str], out_dir: Path) -> None:
        """Every frame a predicate used, as the PNG Chromium produced (the bytes that were measured)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        for name in dict.fromkeys(names):
            if name in self.pngs:
                (out_dir / f"{slug(name)}.png").write_bytes(self.pngs[name])

"""Pixel predicates and seat rules on synthetic frames: the pure half of the browser gate."""

from __future__ import annotations

import struct
import zlib

import pytest

from bench.gates import browser, pixels
from bench.gates.pixels import Frame
from bench import seat

W, H = 40, 20


def solid(rgb, width: int = W, height: int = H) -> Frame:
    return Frame(width, height, bytes([*rgb, 255]) * (width * height))


def with_box(background, colour, box, width: int = W, height: int = H) -> Frame:
    """A frame of `background` with a rectangle of `colour` over the fractional box."""
    data = bytearray(bytes([*background, 255]) * (width * height))
    x0, y0, x1, y1 = int(box[0] * width), int(box[1] * height), int(box[2] * width), int(box[3] * height)
    for y in range(y0, y1):
        for x in range(x0, x1):
            data[(y * width + x) * 4:(y * width + x) * 4 + 3] = bytes(colour)
    return Frame(width, height, bytes(data))


def stripes(period: int, offset: int = 0) -> Frame:
    data = bytearray()
    for _ in range(H):
        for x in range(W):
            v = 220 if ((x + offset) // period) % 2 else 30
            data += bytes([v, v, v, 255])
    return Frame(W, H, bytes(data))


@pytest.mark.parametrize("text, rgb, holds", [
    ("r>110", (120, 0, 0), True), ("r>110", (110, 0, 0), False), ("r>1.7g", (170, 99, 0), True),
    ("r>1.7g", (170, 100, 0), False), ("b>r+30", (10, 0, 41), True), ("b>r+30", (10, 0, 40), False),
    ("g<=80", (0, 80, 0), True), ("g>=b", (0, 5, 5), True), ("b>g-20", (0, 30, 11), True),
])
def test_rules(text, rgb, holds):
    assert pixels.parse_rule(text).holds(rgb) is holds


@pytest.mark.parametrize("text", ["r>>1", "x>1", "r>", "r>110+5", "red>1", "r = 3"])
def test_bad_rules_name_the_forms(text):
    with pytest.raises(ValueError, match="colour rule"):
        pixels.parse_rule(text)


def test_region_mean_and_the_red_box_predicates():
    frame = with_box((0, 0, 0), (162, 1, 1), (0.25, 0.25, 0.75, 0.75))
    assert pixels.region_mean(frame, (0.4, 0.4, 0.6, 0.6)) == (162.0, 1.0, 1.0)
    frames = {"a": frame, "b": frame}
    region = pixels.evaluate({"kind": "region", "name": "red", "frame": "a", "region": [0.4, 0.4, 0.6, 0.6],
                              "rules": ["r>110", "r>1.7g", "r>1.7b"]}, frames, {})
    assert region["passed"] and region["values"] == {"r": 162.0, "g": 1.0, "b": 1.0} and region["frames"] == ["a"]
    contrast = pixels.evaluate({"kind": "contrast", "name": "c", "frame": "a", "region": [0.4, 0.4, 0.6, 0.6],
                                "against": [0, 0, 0.1, 0.1], "min": 80}, frames, {})
    assert contrast["passed"] and contrast["values"]["delta"] == 164.0
    still = pixels.evaluate({"kind": "still", "name": "s", "frames": ["a", "b"], "max": 6}, frames, {})
    assert still["passed"] and still["values"]["max_diff"] == 0.0


def test_wrong_colour_fails_and_says_which_rule():
    frame = with_box((0, 0, 0), (20, 40, 200), (0.25, 0.25, 0.75, 0.75))
    result = pixels.evaluate({"kind": "region", "name": "red", "frame": "a", "region": [0.4, 0.4, 0.6, 0.6],
                              "rules": ["r>110", "r>1.7g"]}, {"a": frame}, {})
    assert not result["passed"]
    assert "r>110 no" in result["detail"] and result["detail"].startswith("red: FAILS")


def test_negated_region():
    blue = solid((10, 10, 200))
    spec = {"kind": "region", "name": "not blue", "frame": "a", "region": [0, 0, 1, 1],
            "rules": ["b>90", "b>r+30"], "negate": True}
    assert not pixels.evaluate(spec, {"a": blue}, {})["passed"]
    assert pixels.evaluate(spec, {"a": solid((200, 200, 200))}, {})["passed"]


def test_mean_abs_diff_and_differ_with_a_baseline():
    a, b = solid((0, 0, 0)), solid((10, 20, 30))
    assert pixels.mean_abs_diff(a, b, step=1) == 20.0
    spec = {"kind": "differ", "name": "d", "frames": ["idle", "moved"], "min": 1, "baseline": ["idle", "idle2"], "times": 3}
    frames = {"idle": a, "idle2": solid((1, 1, 1)), "moved": b}
    result = pixels.evaluate(spec, frames, {})
    assert result["passed"] and result["values"] == {"diff": 20.0, "baseline_diff": 1.0}
    frames["moved"] = solid((2, 2, 2))
    assert not pixels.evaluate(spec, frames, {})["passed"]  # > min, but not 3x the idle jitter


def test_centroid_falls_then_settles():
    blue = (10, 20, 200)
    ys = [0.1, 0.3, 0.6, 0.7, 0.7]
    series = {"fall": [f"fall-{i}" for i in range(len(ys))]}
    frames = {f"fall-{i}": with_box((0, 0, 0), blue, (0.4, y, 0.6, y + 0.2)) for i, y in enumerate(ys)}
    spec = {"kind": "centroid", "name": "c", "series": "fall", "rules": ["b>90", "b>r+30", "b>g+20"],
            "axis": "y", "moves_min": 0.03, "settles_max": 0.01}
    result = pixels.evaluate(spec, frames, series)
    assert result["passed"], result["detail"]
    assert result["values"]["moved"] == pytest.approx(0.6, abs=0.03)
    still = {name: frames["fall-0"] for name in series["fall"]}
    assert "moved down by 0.0" in pixels.evaluate(spec, still, series)["detail"]


def test_centroid_without_the_colour_fails_on_coverage():
    series = {"fall": ["f0", "f1"]}
    spec = {"kind": "centroid", "name": "c", "series": "fall", "rules": ["b>90"], "moves_min": 0.03}
    result = pixels.evaluate(spec, {"f0": solid((0, 0, 0)), "f1": solid((0, 0, 0))}, series)
    assert not result["passed"] and "covers" in result["detail"]


def test_profile_counts_band_crossings():
    spec = {"kind": "profile", "name": "p", "frame": "a", "region": [0, 0, 1, 1], "axis": "x",
            "peak_to_peak_min": 30, "crossings_min": 2}
    striped = pixels.evaluate(spec, {"a": stripes(5)}, {})
    assert striped["passed"] and striped["values"]["crossings"] >= 6 and striped["values"]["peak_to_peak"] == 190
    flat = pixels.evaluate(spec, {"a": solid((90, 90, 90))}, {})
    assert not flat["passed"] and flat["values"]["crossings"] == 0


def test_band_crossings_ignore_noise_inside_the_band():
    assert pixels.band_crossings([10, 11, 10, 11, 10, 90, 90, 10]) == 2


def test_a_missing_frame_fails_naming_it():
    result = pixels.evaluate({"kind": "still", "name": "s", "frames": ["a", "b"], "max": 1}, {"a": solid((0, 0, 0))}, {})
    assert not result["passed"] and "never captured: b" in result["detail"]


def test_structured():
    assert not pixels.structured(solid((12, 12, 12)))
    assert pixels.structured(with_box((0, 0, 0), (200, 200, 200), (0.2, 0.2, 0.8, 0.8)), step=1)


def test_bad_regions_and_sizes():
    with pytest.raises(ValueError, match="region"):
        solid((0, 0, 0)).bounds((0.5, 0.5, 0.4, 0.6))
    with pytest.raises(ValueError, match="needs"):
        Frame(2, 2, b"\x00" * 15)


def _png(frame: Frame, alpha: bool) -> bytes:
    raw = b""
    for y in range(frame.height):
        row = frame.data[y * frame.width * 4:(y + 1) * frame.width * 4]
        raw += b"\x00" + (row if alpha else bytes(b for i, b in enumerate(row) if i % 4 != 3))
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", frame.width, frame.height, 8, 6 if alpha else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("alpha", [True, False])
def test_read_png_round_trips(alpha):
    frame = with_box((5, 6, 7), (200, 100, 50), (0.1, 0.2, 0.5, 0.9))
    assert pixels.read_png(_png(frame, alpha)) == frame


# --- the seat's rules (bench/gates/browser.py, bench/seat.py) ---------------------------------


@pytest.mark.parametrize("adapter, klass", [
    (None, "absent"),
    ({"vendor": "google", "architecture": "swiftshader", "device": "", "description": "", "fallback": True}, "fallback"),
    ({"vendor": "mesa", "architecture": "", "device": "llvmpipe (LLVM 15)", "description": "", "fallback": False}, "fallback"),
    ({"vendor": "", "architecture": "", "device": "", "description": "Microsoft Basic Render Driver", "fallback": False}, "fallback"),
    ({"vendor": "", "architecture": "", "device": "", "description": "", "fallback": False}, "unidentified"),
    ({"vendor": "nvidia", "architecture": "hopper", "device": "", "description": "NVIDIA H200", "fallback": False}, "real"),
])
def test_classify(adapter, klass):
    assert browser.classify(adapter) == klass


def _seat(klass: str) -> dict[str, str]:
    return {"class": klass, "chromium": "156", "adapter": "google / swiftshader"}


@pytest.mark.parametrize("need, mode, klass, refused", [
    ("gpu", "auto", "fallback", True), ("gpu", "auto", "unidentified", True), ("gpu", "auto", "real", False),
    ("gpu", "software", "fallback", False), ("gpu", "gpu", "fallback", True), ("gpu", "software", "absent", True),
    ("software", "auto", "fallback", False), ("software", "auto", "absent", True), ("none", "auto", "absent", False),
])
def test_refusal(need, mode, klass, refused):
    reason = browser.refusal(need, mode, _seat(klass))
    assert (reason is not None) is refused
    if refused and klass != "absent":
        assert "seat refused" in reason and klass in reason


def test_refusal_names_the_flag_that_accepts_software():
    assert "--seat software" in browser.refusal("gpu", "auto", _seat("fallback"))


def test_stamp_makes_software_and_gpu_seats_differ():
    software = seat.stamp("software", {"class": "fallback", "mode": "software", "chromium": "156"})
    gpu = seat.stamp("gpu", {"class": "real", "mode": "gpu", "chromium": "156"})
    assert software["class"] != gpu["class"] and software["mode"] == "software"
    assert seat.stamp(None, None) == {"class": "none"}
    assert seat.stamp("software", None) == {"class": "none", "mode": "software"}


def test_gpu_is_requested_only_for_a_rendering_case_on_a_gpu_run():
    assert seat.device_requests("gpu", "gpu")[0]["Capabilities"] == [["gpu"]]
    assert seat.device_requests("gpu", "software") == [] and seat.device_requests("none", "gpu") == []
    assert seat.gpu_env("gpu", "gpu") == {"NVIDIA_DRIVER_CAPABILITIES": "all"}

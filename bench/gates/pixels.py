"""Pixel predicates: pure functions over RGBA frames, standard library only.

A browser check captures frames and hands them here; every predicate returns its
numbers beside its decision, so a verdict says *how far* a frame was from the claim,
not only that it missed. Nothing here knows about browsers, so the rules can be unit
tested on synthetic frames and re-run on saved PNGs.

Regions are fractions of the frame, ``(x0, y0, x1, y1)`` with (0, 0) top left, so a
gate does not depend on the viewport size. Colour rules are tiny comparisons on the
mean of a region (or on each pixel, for masks): ``r>110``, ``r>1.7g``, ``b>r+30``,
``g<=80``. Differences are mean absolute differences over R, G and B on the 0–255
scale. Whole-frame work samples every ``step``-th pixel in both directions: the
frames are smooth renders and exactness to the pixel buys nothing but time.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

Box = tuple[float, float, float, float]
FULL: Box = (0.0, 0.0, 1.0, 1.0)
CHANNELS = {"r": 0, "g": 1, "b": 2}
OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
RULE = re.compile(
    r"^\s*(?P<lhs>[rgb])\s*(?P<op>[<>]=?)\s*"
    r"(?:(?P<coef>\d+(?:\.\d+)?)\s*\*?\s*(?P<ch>[rgb])|(?P<ch_only>[rgb])|(?P<num>-?\d+(?:\.\d+)?))"
    r"\s*(?:(?P<sign>[+-])\s*(?P<off>\d+(?:\.\d+)?))?\s*$"
)


@dataclass(frozen=True)
class Frame:
    """One captured frame: tightly packed RGBA8, row-major, top row first."""

    width: int
    height: int
    data: bytes

    def __post_init__(self) -> None:
        if len(self.data) != self.width * self.height * 4:
            raise ValueError(f"frame {self.width}x{self.height} needs {self.width * self.height * 4} bytes, got {len(self.data)}")

    def pixels(self, box: Box = FULL, step: int = 1):
        """(x, y, r, g, b) for the sampled pixels inside box."""
        x0, y0, x1, y1 = self.bounds(box)
        for y in range(y0, y1, step):
            row = (y * self.width) * 4
            for x in range(x0, x1, step):
                i = row + x * 4
                yield x, y, self.data[i], self.data[i + 1], self.data[i + 2]

    def bounds(self, box: Box) -> tuple[int, int, int, int]:
        """Pixel bounds of a fractional box; never empty, never outside the frame."""
        x0, y0, x1, y1 = box
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise ValueError(f"region {list(box)} is not 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1")
        left, top = int(x0 * self.width), int(y0 * self.height)
        right = max(left + 1, min(self.width, round(x1 * self.width)))
        bottom = max(top + 1, min(self.height, round(y1 * self.height)))
        return left, top, right, bottom


# --- colour rules ----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """``lhs op coef*rhs + offset`` where rhs is a channel, or ``lhs op number``."""

    text: str
    lhs: int
    op: str
    coef: float
    rhs: int | None
    offset: float

    def holds(self, rgb) -> bool:
        right = self.coef * rgb[self.rhs] + self.offset if self.rhs is not None else self.offset
        return OPS[self.op](rgb[self.lhs], right)


def parse_rule(text: str) -> Rule:
    """Parse one colour rule, or raise ValueError quoting it and the accepted forms."""
    match = RULE.match(text)
    if not match:
        raise ValueError(f"colour rule {text!r} is not of the form r>110, r>1.7g, b>r+30 or g<=80")
    parts = match.groupdict()
    offset = float(parts["off"] or 0) * (-1 if parts["sign"] == "-" else 1)
    if parts["num"] is not None:
        if parts["sign"]:
            raise ValueError(f"colour rule {text!r}: an offset needs a channel on the right (b>r+30)")
        return Rule(text, CHANNELS[parts["lhs"]], parts["op"], 0.0, None, float(parts["num"]))
    channel = parts["ch"] or parts["ch_only"]
    coef = float(parts["coef"]) if parts["coef"] else 1.0
    return Rule(text, CHANNELS[parts["lhs"]], parts["op"], coef, CHANNELS[channel], offset)


def parse_rules(texts: list[str]) -> list[Rule]:
    return [parse_rule(text) for text in texts]


def holds_all(rules: list[Rule], rgb) -> bool:
    return all(rule.holds(rgb) for rule in rules)


# --- measurements -------------------------------------------------------------------------


def region_mean(frame: Frame, box: Box) -> tuple[float, float, float]:
    """Mean R, G, B inside box, over every pixel (regions are small; rows are summed in C)."""
    x0, y0, x1, y1 = frame.bounds(box)
    totals = [0, 0, 0]
    for y in range(y0, y1):
        row = frame.data[(y * frame.width + x0) * 4:(y * frame.width + x1) * 4]
        for channel in range(3):
            totals[channel] += sum(row[channel::4])
    count = (x1 - x0) * (y1 - y0)
    return tuple(round(total / count, 2) for total in totals)  # type: ignore[return-value]


def mean_abs_diff(a: Frame, b: Frame, box: Box = FULL, step: int = 2) -> float:
    """Mean absolute difference over R, G, B (0–255) of the sampled pixels in box."""
    if (a.width, a.height) != (b.width, b.height):
        raise ValueError(f"frames differ in size: {a.width}x{a.height} and {b.width}x{b.height}")
    x0, y0, x1, y1 = a.bounds(box)
    total = count = 0
    for y in range(y0, y1, step):
        start, end = (y * a.width + x0) * 4, (y * a.width + x1) * 4
        for offset in range(3):
            ca = a.data[start + offset:end:4 * step]
            cb = b.data[start + offset:end:4 * step]
            if ca == cb:  # identical rows are common (a still scene); skip the Python loop
                count += len(ca)
                continue
            total += sum(abs(p - q) for p, q in zip(ca, cb))
            count += len(ca)
    return round(total / count, 3) if count else 0.0


def mask_centroid(frame: Frame, rules: list[Rule], box: Box = FULL, step: int = 2) -> tuple[float | None, float | None, float]:
    """Centroid (x, y as fractions of the frame) of the pixels every rule holds for, and their share of box."""
    sx = sy = hits = seen = 0
    for x, y, r, g, b in frame.pixels(box, step):
        seen += 1
        if holds_all(rules, (r, g, b)):
            sx, sy, hits = sx + x, sy + y, hits + 1
    if not hits:
        return None, None, 0.0
    return round(sx / hits / frame.width, 4), round(sy / hits / frame.height, 4), round(hits / seen, 4)


def brightness_profile(frame: Frame, box: Box, axis: str = "x", bins: int = 64) -> list[float]:
    """Mean brightness ((R+G+B)/3) of box in `bins` slices along axis: a stripe shows as a wave."""
    x0, y0, x1, y1 = frame.bounds(box)
    length = (x1 - x0) if axis == "x" else (y1 - y0)
    bins = max(1, min(bins, length))
    sums, counts = [0.0] * bins, [0] * bins
    for x, y, r, g, b in frame.pixels(box, 1 if length < 128 else 2):
        along = (x - x0) if axis == "x" else (y - y0)
        index = min(bins - 1, along * bins // length)
        sums[index] += (r + g + b) / 3
        counts[index] += 1
    return [round(s / c, 2) if c else 0.0 for s, c in zip(sums, counts)]


def band_crossings(profile: list[float], hysteresis: float = 0.15) -> int:
    """How often the profile crosses its mid level, ignoring wiggles within a band around it.

    The band is ``hysteresis`` of the peak-to-peak range on each side of the middle, so
    noise on a flat profile never counts as stripes.
    """
    if not profile:
        return 0
    low, high = min(profile), max(profile)
    middle, margin = (low + high) / 2, (high - low) * hysteresis
    side, crossings = 0, 0
    for value in profile:
        now = 1 if value > middle + margin else -1 if value < middle - margin else 0
        if now and side and now != side:
            crossings += 1
        side = now or side
    return crossings


def structured(frame: Frame, step: int = 8, min_spread: float = 3.0) -> bool:
    """Whether anything is drawn: brightness varies across the frame (a blank or cleared canvas is flat)."""
    values = [(r + g + b) / 3 for _, _, r, g, b in frame.pixels(FULL, step)]
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return spread >= min_spread


# --- predicates ------------------------------------------------------------------------------
#
# A predicate is a dict from gate.toml (validated on the host by models.Predicate); evaluate()
# returns {"name", "kind", "passed", "values", "frames", "detail"}: the numbers it decided on,
# and the names of the frames it used (the browser check saves exactly those as PNG).


def evaluate(spec: dict, frames: dict[str, Frame], series: dict[str, list[str]]) -> dict:
    """Decide one predicate; a missing frame is a failure that names it, never a crash."""
    names = _frame_names(spec, series)
    missing = [name for name in names if name not in frames]
    if missing:
        passed, values, detail = False, {}, f"frame(s) never captured: {', '.join(missing)}"
    else:
        passed, values, detail = PREDICATES[spec["kind"]](spec, [frames[name] for name in names])
    label = spec.get("name") or spec["kind"]
    return {"name": label, "kind": spec["kind"], "passed": passed, "values": values, "frames": names,
            "detail": f"{label}: {'holds' if passed else 'FAILS'} — {detail}"}


def _frame_names(spec: dict, series: dict[str, list[str]]) -> list[str]:
    if "series" in spec:
        return list(series.get(spec["series"], [f"{spec['series']}-0"]))
    if "frames" in spec:
        return list(spec["frames"]) + list(spec.get("baseline") or [])
    return [spec["frame"]]


def _region(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    rules = parse_rules(spec["rules"])
    mean = region_mean(frames[0], tuple(spec["region"]))
    verdicts = [f"{rule.text} {'ok' if rule.holds(mean) else 'no'}" for rule in rules]
    holds = holds_all(rules, mean)
    passed = not holds if spec.get("negate") else holds
    wanted = "not all of" if spec.get("negate") else "all of"
    return passed, {"r": mean[0], "g": mean[1], "b": mean[2]}, (
        f"mean rgb {mean} in {list(spec['region'])}; needs {wanted}: {', '.join(verdicts)}")


def _contrast(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    inner = region_mean(frames[0], tuple(spec["region"]))
    outer = region_mean(frames[0], tuple(spec["against"]))
    delta = round(sum(inner) - sum(outer), 2)
    return delta > spec["min"], {"sum": round(sum(inner), 2), "against_sum": round(sum(outer), 2), "delta": delta}, (
        f"channel sum {sum(inner):.1f} in {list(spec['region'])} vs {sum(outer):.1f} in "
        f"{list(spec['against'])}: brighter by {delta}, needs > {spec['min']}")


def _diffs(spec: dict, frames: list[Frame]) -> list[float]:
    box = tuple(spec.get("region", FULL))
    return [mean_abs_diff(a, b, box) for a, b in zip(frames, frames[1:])]


def _still(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    diffs = _diffs(spec, frames)
    worst = max(diffs)
    return worst < spec["max"], {"max_diff": worst, "diffs": diffs}, (
        f"mean abs diff between consecutive frames {diffs}; largest {worst}, needs < {spec['max']}")


def _differ(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    """frames[0] vs frames[1]; with a baseline pair (frames[2], frames[3]) it must also beat that diff."""
    box = tuple(spec.get("region", FULL))
    diff = mean_abs_diff(frames[0], frames[1], box)
    values: dict = {"diff": diff}
    passed = diff > spec["min"]
    detail = f"mean abs diff {diff} between {spec['frames'][0]} and {spec['frames'][1]}, needs > {spec['min']}"
    if spec.get("baseline"):
        baseline = mean_abs_diff(frames[2], frames[3], box)
        times = spec.get("times", 1.0)
        values["baseline_diff"] = baseline
        passed = passed and diff > times * baseline
        detail += f" and > {times} x the baseline diff {baseline} ({times * baseline:.3f})"
    return passed, values, detail


def _centroid(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    rules = parse_rules(spec["rules"])
    axis = spec.get("axis", "y")
    found = [mask_centroid(frame, rules, tuple(spec.get("region", FULL))) for frame in frames]
    along = [c[1] if axis == "y" else c[0] for c in found]
    shares = [c[2] for c in found]
    values: dict = {axis: along, "share": shares}
    min_share = spec.get("min_share", 0.001)
    if any(share < min_share for share in shares):
        return False, values, f"mask ({', '.join(spec['rules'])}) covers {shares} of the frame; needs >= {min_share} in every frame"
    moved = round(along[-1] - along[0], 4)
    last_step = round(abs(along[-1] - along[-2]), 4) if len(along) > 1 else 0.0
    values.update({"moved": moved, "last_step": last_step})
    passed = moved > spec["moves_min"] and last_step < spec.get("settles_max", 1.0)
    direction = "down" if axis == "y" else "right"
    return passed, values, (
        f"{axis}-centroid over time {along}: moved {direction} by {moved} (needs > {spec['moves_min']}), "
        f"last step {last_step} (needs < {spec.get('settles_max', 1.0)})")


def _profile(spec: dict, frames: list[Frame]) -> tuple[bool, dict, str]:
    profile = brightness_profile(frames[0], tuple(spec["region"]), spec.get("axis", "x"))
    spread = round(max(profile) - min(profile), 2)
    crossings = band_crossings(profile)
    passed = spread > spec["peak_to_peak_min"] and crossings >= spec["crossings_min"]
    return passed, {"peak_to_peak": spread, "crossings": crossings, "profile": profile}, (
        f"brightness along {spec.get('axis', 'x')} in {list(spec['region'])}: peak-to-peak {spread} "
        f"(needs > {spec['peak_to_peak_min']}), {crossings} band crossings (needs >= {spec['crossings_min']})")


PREDICATES = {"region": _region, "contrast": _contrast, "still": _still, "differ": _differ,
              "centroid": _centroid, "profile": _profile}


# --- PNG, standard library only: re-measure a saved frame anywhere ------------------------


def read_png(data: bytes) -> Frame:
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) to an RGBA Frame."""
    import struct
    import zlib

    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, chunks, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 4 if colour == 6 else 3
    rows = _unfilter(zlib.decompress(b"".join(chunks)), width * channels, height, channels)
    if channels == 4:
        return Frame(width, height, bytes(rows))
    rgba = bytearray(width * height * 4)
    rgba[0::4], rgba[1::4], rgba[2::4] = rows[0::3], rows[1::3], rows[2::3]
    rgba[3::4] = b"\xff" * (width * height)
    return Frame(width, height, bytes(rgba))


def _unfilter(raw: bytes, stride: int, height: int, bpp: int) -> bytearray:
    out = bytearray(stride * height)
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = previous[i], previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        out[y * stride:(y + 1) * stride] = line
        previous = line
    return out

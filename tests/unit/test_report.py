"""The HTML report draws what summary.json says and embeds every saved frame."""

from __future__ import annotations

import base64
import struct
import zlib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from bench.errors import UsageError
from bench.models import Verdict
from bench.result_models import CheckResult, TrialResult
from bench.paths import RunPaths
from bench.report import BAR_W, render
from bench.run import write_summary


def tiny_png() -> bytes:
    """A valid 1x1 red PNG, built by hand (no imaging library on the host)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = zlib.compress(b"\x00\xff\x00\x00")
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def write_trial(paths: RunPaths, arm: str, n: int, verdict: Verdict) -> None:
    trial = paths.trial("hello", arm, n)
    trial.dir.mkdir(parents=True)
    result = TrialResult(run_id="r", label=paths.label, case="hello", arm=arm, trial=n, agent="x", verdict=verdict,
                         reason="" if verdict is Verdict.PASS else "check 'c' failed: <b>bad</b>",
                         checks=[CheckResult(name="c", kind="command", gating=True, passed=verdict is Verdict.PASS)],
                         phases={"agent": 1.0, "grade": 0.5}, started_at=datetime.now(timezone.utc))
    trial.result.write_text(result.model_dump_json())


def test_report_draws_rates_with_intervals_and_embeds_frames(tmp_path: Path):
    paths = RunPaths(tmp_path / "lbl")
    for n, verdict in enumerate([Verdict.PASS, Verdict.PASS, Verdict.FAIL, Verdict.ERROR], start=1):
        write_trial(paths, "base", n, verdict)
    frame = paths.trial("hello", "base", 1).artifacts / "centre.png"
    frame.parent.mkdir()
    frame.write_bytes(tiny_png())
    write_summary(paths, "r", [])
    page = render(paths).read_text()
    # 2 PASS of 3 graded: bar at 2/3 of the width; Wilson(2, 3) = (0.2077, 0.9385)
    assert f'width="{2 / 3 * BAR_W:.1f}"' in page
    assert 'x1="307.2" x2="614.2"' in page  # LABEL_W 220 + 0.2077 * 420, 220 + 0.9385 * 420
    assert "67% (P2 F1 E1)" in page
    assert base64.b64encode(tiny_png()).decode() in page
    assert "&lt;b&gt;bad&lt;/b&gt;" in page and "<b>bad</b>" not in page


def test_report_without_summary_is_a_usage_error(tmp_path: Path):
    with pytest.raises(UsageError, match="summary.json does not exist"):
        render(RunPaths(tmp_path / "empty"))

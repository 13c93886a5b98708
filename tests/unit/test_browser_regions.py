"""A browser check records where each predicate looked, so the viewer can draw it on the saved frame."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from types import SimpleNamespace

from PIL import Image

from bench.gatespec import BrowserCheck
from bench.grading.browser import judge


def _frames_tar(tmp: Path) -> Path:
    png = io.BytesIO()
    Image.new("RGB", (40, 20), (200, 30, 30)).save(png, format="PNG")
    path = tmp / "frames.tar"
    with tarfile.open(path, "w") as archive:
        info = tarfile.TarInfo("bench-out/shot.png")
        info.size = len(png.getvalue())
        archive.addfile(info, io.BytesIO(png.getvalue()))
    return path


def test_each_predicate_records_its_region_and_against(tmp_path):
    check = BrowserCheck.model_validate({
        "name": "Red Box", "kind": "browser", "serve": "dist", "steps": [{"capture": "shot"}],
        "predicates": [
            {"name": "red", "kind": "region", "frame": "shot", "region": [0.1, 0.2, 0.5, 0.6], "rules": ["r>110"]},
            {"name": "lit", "kind": "contrast", "frame": "shot", "region": [0, 0, 0.5, 1],
             "against": [0.5, 0, 1, 1], "min": 500},
        ]})
    ctx = SimpleNamespace(artifacts=tmp_path / "artifacts", gate_log=tmp_path / "gate.log")
    result = judge(ctx, check, {"check": "Red Box", "frames": {"shot": "shot.png"}}, _frames_tar(tmp_path))
    red, lit = result.predicates
    assert red["region"] == [0.1, 0.2, 0.5, 0.6] and "against" not in red and red["passed"]
    assert lit["region"] == [0, 0, 0.5, 1] and lit["against"] == [0.5, 0, 1, 1] and not lit["passed"]
    json.dumps(result.model_dump(mode="json"))  # plain JSON, as result.json stores it
    assert (tmp_path / "artifacts" / "red-box" / "shot.png").is_file()

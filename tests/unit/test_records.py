"""Published schemas and content hashes (no engine needed)."""

from __future__ import annotations

import os
from pathlib import Path

from bench.hashing import tree_digest
from bench.schemas import export, rendered

ROOT = Path(__file__).resolve().parents[2]


def test_published_schemas_match_the_models():
    stale = export(ROOT / "provenance" / "schema", write=False)
    assert stale == [], f"run `bench schema` to refresh: {stale}"
    assert set(rendered()) == {p.name for p in (ROOT / "provenance" / "schema").glob("*.json")}


def test_tree_digest_sees_bytes_modes_and_links(tmp_path):
    (tmp_path / "a.txt").write_text("one")
    first = tree_digest(tmp_path)
    assert tree_digest(tmp_path) == first
    (tmp_path / "a.txt").write_text("onE")
    changed = tree_digest(tmp_path)
    assert changed != first
    os.chmod(tmp_path / "a.txt", 0o755)
    assert tree_digest(tmp_path) != changed
    (tmp_path / "link").symlink_to("a.txt")
    linked = tree_digest(tmp_path)
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("elsewhere")
    assert tree_digest(tmp_path) != linked

"""Shared fixtures: located by name, content-hashed, refused when a byte-code cache would skew the hash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.errors import UsageError
from bench.fixtures import fixture_hash, known_fixtures, load_fixture

ROOT = Path(__file__).resolve().parents[2]


def test_the_courier_fixture_is_about_a_thousand_lines_of_python():
    courier = load_fixture(ROOT, "courier")
    assert "courier" in known_fixtures(ROOT)
    assert 900 <= courier.line_count() <= 1300
    assert all(p.suffix == ".py" for p in courier.code_files())


def test_the_hash_is_the_tree_digest_and_follows_content(tmp_path):
    shutil.copytree(ROOT / "cases/_fixtures", tmp_path / "cases/_fixtures")
    before = fixture_hash(tmp_path, "courier")
    assert before == fixture_hash(ROOT, "courier") and before.startswith("sha256:")
    config = tmp_path / "cases/_fixtures/courier/courier/config.py"
    config.write_text(config.read_text().replace("MAX_DELIVERY_ATTEMPTS = 3", "MAX_DELIVERY_ATTEMPTS = 4"))
    assert fixture_hash(tmp_path, "courier") != before


def test_a_byte_code_cache_is_refused(tmp_path):
    shutil.copytree(ROOT / "cases/_fixtures", tmp_path / "cases/_fixtures")
    (tmp_path / "cases/_fixtures/courier/courier/__pycache__").mkdir()
    with pytest.raises(UsageError, match="byte-code cache inside fixture 'courier'"):
        fixture_hash(tmp_path, "courier")


def test_an_unknown_fixture_lists_the_known_ones():
    with pytest.raises(UsageError, match="unknown fixture 'parcels'.*known fixtures: courier"):
        load_fixture(ROOT, "parcels")

"""`--json` on every verb: the output parses and carries what a script needs; errors are JSON too.

Verbs that need an engine get a stand-in for the engine call only (the real rendering, the
real option parsing); `bench run --json` and `bench grade --json` on the real engine are in
tests/integration/test_json_runs.py. Errors go through the real entry point (a subprocess),
since cli.main is the one place exceptions become exit codes.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from bench.cli import cli
from bench.models import LockEntry
from bench.prune import PruneReport
from bench.rebuild import Finding
from tests.unit.test_assessment import SHOWS, entry, scoring, unscored_trial

ROOT = Path(__file__).resolve().parents[2]


def run_json(*args: str, code: int = 0) -> dict:
    done = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert done.exit_code == code, done.output
    return json.loads(done.stdout)


def test_cases(monkeypatch):
    monkeypatch.setenv("BENCH_ROOT", str(ROOT))
    found = {case["id"]: case for case in run_json("cases")["cases"]}
    assert found["hello"] == {"id": "hello", "title": found["hello"]["title"], "arms": ["default"], "image": "base",
                              "tags": found["hello"]["tags"]}
    assert "thermostat-core@zig" in found and found["hello"]["title"]  # a tracked case: one id per track


def test_cases_validate(monkeypatch, project: Path):
    monkeypatch.setenv("BENCH_ROOT", str(project))
    (project / "goldens" / "hello" / "solution").rename(project / "goldens" / "hello" / "elsewhere")
    data = run_json("cases", "validate", code=2)
    assert data["ok"] is False and {"case": "c-rle", "ok": True} in data["cases"]
    assert {"case": "hello", "ok": False} in data["cases"]
    hello = [p for p in data["problems"] if p["case"] == "hello"]
    assert hello == [{"case": "hello", "file": "goldens/hello/solution", "field": "solution/",
                      "problem": "does not exist", "fix": hello[0]["fix"], "level": "error"}]
    assert "oracle" in hello[0]["fix"]


def test_keys():
    data = run_json("keys")
    assert len(data["fingerprint"]) >= 16 and data["public_key"].startswith("-----BEGIN PUBLIC KEY-----")
    assert Path(data["private_key"]).is_file() and data["exported"] is None


def test_schema_check(monkeypatch, project: Path):
    monkeypatch.setenv("BENCH_ROOT", str(project))
    assert run_json("schema")["check"] is False  # writes what is stale (whatever the checkout holds), says which
    assert run_json("schema", "--check") == {"check": True, "stale": []}
    (project / "provenance" / "schema" / "result.schema.json").unlink()
    assert run_json("schema", "--check", code=1) == {"check": True, "stale": ["result.schema.json"]}


class _Images:
    """An engine's image list: one harness image under its locked tag and under another."""

    def __init__(self, image_id: str, tag: str) -> None:
        labels = {"bench.harness": "1", "bench.image": "base", "bench.toolchain.python": "3.11"}
        self.image = SimpleNamespace(id=image_id, tags=[tag, "bench/base:other"], labels=labels,
                                     attrs={"Size": 123_000_000})

    def list(self, filters: dict) -> list:
        return [self.image]


def test_images_list(monkeypatch):
    monkeypatch.setenv("BENCH_ROOT", str(ROOT))
    locked = json.loads((ROOT / "provenance" / "images.lock.json").read_text())["images"]["base"]
    monkeypatch.setattr("bench.engine.connect", lambda: SimpleNamespace(images=_Images(locked["id"], locked["tag"])))
    rows = {row["tag"]: row for row in run_json("images", "list")["images"]}
    assert rows[locked["tag"]] == {"name": "base", "tag": locked["tag"], "id": locked["id"], "size_bytes": 123_000_000,
                                   "toolchains": {"python": "3.11"}, "lock": rows[locked["tag"]]["lock"]}
    assert rows[locked["tag"]]["lock"].startswith("bit-verified") and rows["bench/base:other"]["lock"].startswith("locked")


def test_images_build(monkeypatch):
    monkeypatch.setenv("BENCH_ROOT", str(ROOT))
    record = SimpleNamespace(name="base", tag="bench/base:abc", id="sha256:" + "1" * 64)
    monkeypatch.setattr("bench.lock.build_images", lambda *args, **kwargs: [(record, "built, content-equal")])
    assert run_json("images", "build", "base") == {"images": [
        {"name": "base", "tag": "bench/base:abc", "id": "sha256:" + "1" * 64, "state": "built, content-equal"}]}


def test_images_rebuild_check(monkeypatch):
    monkeypatch.setenv("BENCH_ROOT", str(ROOT))
    lock = LockEntry(name="base", tag="bench/base:abc", id="sha256:" + "1" * 64, content_digest="sha256:c1",
                     context_hash="sha256:x")
    drifted = Finding(lock, "sha256:" + "2" * 64, "sha256:c2", packages=["tar 1.34 -> 1.35"], paths=["/usr/bin/tar"],
                      paths_differing=1)
    monkeypatch.setattr("bench.rebuild.rebuild", lambda *args, **kwargs: [drifted])
    data = run_json("images", "rebuild", "--check", code=1)
    assert data["check"] is True and data["drifted"] == ["base"]
    assert data["images"] == [{"name": "base", "same": False, "level": "drifted", "rebuilt_id": "sha256:" + "2" * 64,
                               "rebuilt_digest": "sha256:c2", "locked_id": "sha256:" + "1" * 64,
                               "locked_digest": "sha256:c1", "packages": ["tar 1.34 -> 1.35"],
                               "paths": ["/usr/bin/tar"], "paths_differing": 1, "tagged": None}]


def test_images_prune_dry_run(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("BENCH_ROOT", str(ROOT))
    seen = {}

    def prune(client, project, results, names, dry_run):
        seen["dry_run"] = dry_run
        return PruneReport(removed_images=["bench/base:old"], kept={"locked": ["bench/base:abc"]}, dry_run=dry_run)

    monkeypatch.setattr("bench.engine.connect", lambda: object())
    monkeypatch.setattr("bench.prune.prune", prune)
    data = run_json("images", "prune", "--dry-run", "--results", str(tmp_path))
    assert seen == {"dry_run": True}
    assert data == {"removed_images": ["bench/base:old"], "removed_containers": [], "kept": {"locked": ["bench/base:abc"]},
                    "freed_bytes": 0, "dry_run": True}


def test_assess(tmp_path: Path):
    trial = unscored_trial(tmp_path)
    data = run_json("assess", str(trial.dir), str(scoring(tmp_path, entry("mustDemonstrate", SHOWS))), "--by", "ann")
    assert data["trial"] == str(trial.dir) and data["exit_status"] == 0 and data["replaced"] is None
    assert data["result"]["verdict"] == "PASS" and data["assessment"]["assessed_by"] == "ann"
    assert [(e["text"], e["status"]) for e in data["result"]["expectations"] if e["status"] != "unscored"] == [
        (SHOWS, "pass")]


# --- errors under --json: one object on stdout, the same exit code ---------------------------------


@pytest.mark.parametrize("args, code, kind, words", [
    (["run", "nosuchcase"], 2, "usage", "nosuchcase"),
    (["nosuchcase"], 2, "usage", "nosuchcase"),  # the `bench CASE` shorthand
    (["cases", "--bogus"], 2, "usage", "--bogus"),  # refused by click's parser, before any verb ran
    (["compare", "nolabel", "other", "--results", "."], 2, "usage", "nolabel"),
])
def test_an_error_under_json_is_one_object_with_the_same_exit_code(bench, args, code, kind, words):
    plain = bench(*args)
    done = bench(*args, "--json")
    assert plain.returncode == done.returncode == code, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["exit_code"] == code and error["kind"] == kind and words in error["message"]
    assert plain.stdout == "" and words in plain.stderr  # the text mode keeps its one line on stderr


def test_a_case_error_under_json_names_file_field_and_fix(bench, project: Path):
    (project / "cases" / "hello" / "case.toml").write_text('title = "x"\nimage = 5\n')
    done = bench("run", "hello", "--json", root=project)
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "case" and error["file"].endswith("cases/hello/case.toml") and error["field"] == "image"
    assert error["problem"] and error["message"].startswith(error["file"])

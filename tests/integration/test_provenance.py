"""verify-provenance recomputes everything it can and names each difference."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
HARNESS_ROOT = Path(__file__).resolve().parents[2]  # the checkout whose bench/ the CLI runs (conftest's PYTHONPATH)


@pytest.fixture()
def recorded(docker_client, bench, tmp_path, project) -> Path:
    """One oracle trial of hello, recorded from a scratch project copy whose lock this engine wrote.

    The committed lock names another machine's image IDs; locking base here keeps the
    expected level a fact of this machine (a rebuild's proof carries over only to the same ID).
    """
    bench("images", "lock", "base", root=project, check_rc=0)
    bench("run", "hello", "--agent", "oracle", "--label", "rec", root=project, check_rc=0)
    return tmp_path / "results" / "rec"


def verify(bench, results: Path, project: Path):
    return bench("verify-provenance", str(results), "--json", root=project)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(HARNESS_ROOT), *args], capture_output=True, text=True, check=True).stdout


def harness_checkout() -> tuple[str, bool]:
    """(HEAD, dirty) of the harness checkout, asked of git here, not of bench.harness (the code under test)."""
    paths = ("--", "bench", "cases", "goldens", "images", "provenance", "pyproject.toml")  # all that changes a result
    changed = _git("diff", "--name-only", "HEAD", *paths) + _git("ls-files", "--others", "--exclude-standard", *paths)
    return _git("rev-parse", "HEAD").strip(), bool(changed.strip())


def test_untouched_results_verify(bench, recorded, project):
    """Clean where the harness checkout is clean (as in CI); else exactly the dirty flag is named."""
    head, dirty = harness_checkout()
    done = verify(bench, recorded, project)
    report = json.loads(done.stdout)
    lock = json.loads((project / "provenance" / "images.lock.json").read_text())
    level = {"bit": "bit-reproducible", "content": "content-reproducible", None: "pinned"}[
        lock["images"]["base"].get("verified")]
    assert report["trials"] == 1 and report["levels"] == {level: 1}
    harness = json.loads((recorded / "hello" / "default" / "trial-1" / "provenance.json").read_text())["harness"]
    assert (harness["git_sha"], harness["dirty"]) == (head, dirty)
    if dirty:
        assert done.returncode == 1
        assert [d["what"].split(" (")[0] for d in report["differences"]] == ["harness was dirty"]
    else:
        assert done.returncode == 0, done.stdout
        assert report["ok"]


@pytest.mark.parametrize("name", ["result.json", "provenance.json", "transcript.log", "gate.log", "workspace.tar"])
def test_one_changed_byte_in_any_recorded_file_is_named(bench, recorded, project, name):
    target = recorded / "hello" / "default" / "trial-1" / name
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    done = verify(bench, recorded, project)
    assert done.returncode == 1
    whats = [d["what"] for d in json.loads(done.stdout)["differences"]]
    assert any(w.startswith(f"{name}: SHA-256 differs") for w in whats), whats


def test_missing_and_added_files_are_named(bench, recorded, project):
    trial = recorded / "hello" / "default" / "trial-1"
    (trial / "gate.log").unlink()
    (trial / "reward.txt").write_text("1\n")
    whats = [d["what"] for d in json.loads(verify(bench, recorded, project).stdout)["differences"]]
    assert "gate.log: recorded but missing" in whats
    assert any(w.startswith("reward.txt: present but not in the manifest") for w in whats)


def test_changed_case_and_goldens_are_named(bench, recorded, project):
    prompt = project / "cases" / "hello" / "PROMPT.md"
    prompt.write_text(prompt.read_text() + " ")
    gate = project / "goldens" / "hello" / "gate.toml"
    gate.write_text(gate.read_text() + "\n")
    done = verify(bench, recorded, project)
    assert done.returncode == 1
    whats = " | ".join(d["what"] for d in json.loads(done.stdout)["differences"])
    assert "case hello changed" in whats
    assert "goldens of hello changed" in whats


def test_image_recorded_with_another_id_is_named(bench, recorded, project):
    trial = recorded / "hello" / "default" / "trial-1"
    provenance = json.loads((trial / "provenance.json").read_text())
    provenance["images"]["grader"]["id"] = "sha256:" + "0" * 64
    (trial / "provenance.json").write_text(json.dumps(provenance))
    done = verify(bench, recorded, project)
    assert done.returncode == 1
    whats = " | ".join(d["what"] for d in json.loads(done.stdout)["differences"])
    assert "grader image" in whats and "not present on this engine" in whats


def test_dirty_harness_is_named(bench, recorded, project):
    trial = recorded / "hello" / "default" / "trial-1"
    provenance = json.loads((trial / "provenance.json").read_text())
    provenance["harness"]["dirty"] = True
    (trial / "provenance.json").write_text(json.dumps(provenance))
    whats = " | ".join(d["what"] for d in json.loads(verify(bench, recorded, project).stdout)["differences"])
    assert "harness was dirty" in whats


def test_bad_usage_exits_2(bench, tmp_path, project):
    done = bench("verify-provenance", str(tmp_path / "nowhere"), root=project)
    assert done.returncode == 2
    assert "does not exist" in done.stderr

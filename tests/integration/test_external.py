"""Work made outside bench, on the real engine: `bench setup`, `bench grade`, check-answers, exit statuses, tags."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
HARNESS_PATHS = ("bench", "cases", "goldens", "images", "provenance", "pyproject.toml")


def set_up(bench, case: str, folder: Path, *args: str, root: Path = ROOT) -> Path:
    done = bench("setup", case, str(folder), *args, root=root, check_rc=0)
    assert done.stdout.splitlines()[-1] == str(folder.resolve())
    return folder


def trial(tmp_path: Path, label: str, case: str, arm: str = "default") -> Path:
    return tmp_path / "results" / label / case / arm / "trial-1"


def withheld_strings(case: str) -> set[str]:
    """Lines of goldens/<case>/ (gate, withheld tests, solution) that appear nowhere in what the case shows the agent."""
    visible = "\n".join(p.read_text(errors="replace") for p in (ROOT / "cases" / case).rglob("*") if p.is_file())
    found = {"BENCH-GOLDEN-MARKER"}
    for path in (ROOT / "goldens" / case).rglob("*"):
        if path.is_file() and "answers" not in path.relative_to(ROOT / "goldens" / case).parts:
            found |= {line.strip() for line in path.read_text(errors="replace").splitlines()
                      if len(line.strip()) >= 16 and line.strip() not in visible}
    return found


def only_dirty_harness(done) -> bool:
    """verify-provenance passed, or named exactly the harness's uncommitted changes (a checkout being edited)."""
    report = json.loads(done.stdout)
    if done.returncode == 0:
        return report["ok"]
    return {d["what"].split(" (")[0] for d in report["differences"]} == {"harness was dirty"}


def test_setup_then_grade_of_the_oracle_solution_passes_as_external(docker_client, bench, tmp_path):
    folder = set_up(bench, "c-rle", tmp_path / "work")
    assert (folder / "PROMPT.md").read_bytes() == (ROOT / "cases/c-rle/PROMPT.md").read_bytes()
    assert (folder / "src" / "rle.h").is_file() and (folder / "Makefile").is_file()
    laid = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())
    markers = withheld_strings("c-rle")
    assert len(markers) > 10 and not [m for m in markers if m in laid]

    shutil.copytree(ROOT / "goldens/c-rle/solution", folder, dirs_exist_ok=True, symlinks=True)  # as the oracle's cp -a
    graded = bench("grade", "c-rle", str(folder), "--label", "graded", check_rc=0)
    assert "c-rle/default/trial-1: PASS" in graded.stderr
    result = json.loads((trial(tmp_path, "graded", "c-rle") / "result.json").read_text())
    provenance = json.loads((trial(tmp_path, "graded", "c-rle") / "provenance.json").read_text())
    assert (result["verdict"], result["agent"], provenance["agent"]["name"]) == ("PASS", "external", "external")
    assert [c["passed"] for c in result["checks"]] == [True, True, True]
    assert only_dirty_harness(bench("verify-provenance", str(tmp_path / "results/graded"), "--json"))

    bench("run", "c-rle", "--agent", "oracle", "--label", "ran", check_rc=0)
    compared = bench("compare", "ran", "graded", "--results", str(tmp_path / "results"))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    again = bench("grade", "c-rle", str(folder), "--label", "graded")
    assert again.returncode == 2 and "already holds a graded c-rle/default" in again.stderr


def test_symlinks_in_a_submission_are_graded_as_links_never_followed(docker_client, bench, tmp_path):
    folder = set_up(bench, "hello", tmp_path / "work")
    os.symlink(ROOT / "goldens/hello/solution/hello.txt", folder / "hello.txt")  # the right bytes, on the host only
    os.symlink("/etc/passwd", folder / "passwd")
    os.symlink(ROOT / "goldens", folder / "goldens")
    done = bench("grade", "hello", str(folder), "--label", "links")
    assert done.returncode == 1, done.stdout + done.stderr  # some FAIL
    graded = trial(tmp_path, "links", "hello")
    result = json.loads((graded / "result.json").read_text())
    assert result["verdict"] == "FAIL" and result["agent"] == "external"
    assert [c["passed"] for c in result["checks"]] == [False, False]
    assert "matched in none of 0 file(s)" in result["checks"][1]["detail"]  # the grep check saw no regular file
    with tarfile.open(graded / "workspace.tar") as archive:
        links = {m.name: m.linkname for m in archive if m.issym()}
        assert not [m.name for m in archive if m.name.startswith("workspace/goldens/")]
    assert links == {"workspace/hello.txt": str(ROOT / "goldens/hello/solution/hello.txt"),
                     "workspace/passwd": "/etc/passwd", "workspace/goldens": str(ROOT / "goldens")}
    recorded = b"".join(p.read_bytes() for p in graded.rglob("*") if p.is_file())
    assert b"BENCH-GOLDEN-MARKER" not in recorded and (Path("/etc/passwd").read_bytes()[:40] not in recorded)


def test_check_answers_gives_each_expected_verdict_and_fails_on_a_wrong_expectation(docker_client, bench, tmp_path,
                                                                                  project):
    done = bench("cases", "check-answers", "hello", "--label", "answers", check_rc=0)
    rows = {line.split("│")[2].strip(): line for line in done.stdout.splitlines() if line.startswith("│ hello")}
    assert set(rows) == {"correct", "wrong-text"} and all(row.rstrip(" │").endswith("ok") for row in rows.values())
    verdicts = {arm: json.loads((trial(tmp_path, "answers", "hello", arm) / "result.json").read_text())["verdict"]
                for arm in rows}
    assert verdicts == {"correct": "PASS", "wrong-text": "FAIL"}
    assert only_dirty_harness(bench("verify-provenance", str(tmp_path / "results/answers"), "--json"))

    wrong = project / "goldens/hello/answers/wrong-text/answer.toml"
    wrong.write_text('expect = "PASS"\n')
    failed = bench("cases", "check-answers", "hello", "--label", "wrong", root=project)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "NO" in next(line for line in failed.stdout.splitlines() if "wrong-text" in line)


def test_exit_status_of_real_runs_and_grades(docker_client, bench, tmp_path, project):
    assert bench("run", "hello", "--agent", "oracle", "--label", "pass").returncode == 0
    assert bench("run", "hello", "--agent", "null", "--label", "fail").returncode == 1
    assert bench("run", "hello", "--no-such-flag").returncode == 2
    assert bench("grade", "nosuch", str(tmp_path)).returncode == 2
    case = project / "cases/hello/case.toml"
    case.write_text('setup = ["echo the case setup breaks >&2; exit 7"]\n' + case.read_text())  # no agent's doing
    broken = bench("run", "hello", "--agent", "oracle", "--label", "error", root=project)
    assert broken.returncode == 3, broken.stdout + broken.stderr
    result = json.loads((trial(tmp_path, "error", "hello") / "result.json").read_text())
    assert result["verdict"] == "ERROR" and result["reason"].startswith("case setup failed (exit 7)")


def test_tag_runs_every_case_carrying_it(docker_client, bench, tmp_path, project):
    case = project / "cases/hello/case.toml"
    lines = [line for line in case.read_text().splitlines() if not line.startswith("tags =")]
    case.write_text('tags = ["tagged-probe"]\n' + "\n".join(lines) + "\n")
    bench("run", "--tag", "tagged-probe", "--agent", "oracle", "--label", "tagged", root=project, check_rc=0)
    ran = sorted(p.relative_to(tmp_path / "results/tagged").parts[0]
                 for p in (tmp_path / "results/tagged").glob("*/*/trial-*"))
    assert ran == ["hello"]

"""`bench setup` and `bench grade` refuse what cannot mean what was asked, before anything is built (exit 2)."""

from __future__ import annotations


def test_grade_refuses_a_missing_folder_an_unknown_arm_and_results_inside_the_work(bench, tmp_path):
    work = tmp_path / "work"
    missing = bench("grade", "hello", str(work))
    assert missing.returncode == 2 and f"{work}: not a folder" in missing.stderr
    work.mkdir()
    arm = bench("grade", "hello", str(work), "--arm", "bare")
    assert arm.returncode == 2 and "case hello has no such arm; its arms are default" in arm.stderr
    inside = bench("grade", "hello", str(work), "--results", str(work / "results"))
    assert inside.returncode == 2 and "is inside the graded folder" in inside.stderr
    assert not (work / "results").exists()


def test_setup_refuses_a_folder_that_is_not_empty(bench, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    done = bench("setup", "hello", str(work))
    assert done.returncode == 2 and "is not an empty folder" in done.stderr
    assert [p.name for p in work.iterdir()] == ["notes.txt"]


def test_run_refuses_the_external_agent(bench):
    done = bench("run", "hello", "--agent", "external")
    assert done.returncode == 2 and "`bench grade CASE DIR`" in done.stderr

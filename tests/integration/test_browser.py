"""Browser gates end to end: real containers, Debian's Chromium, the six Shallot cases.

On a machine without a GPU the seat is SwiftShader: every case needs a GPU, so only
``--seat software`` grades them, and without it each trial is INCOMPLETE. Runs share
one oracle-and-null run of all six (module fixture), because a trial costs 15-60 s here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cases import case_ids, known_cases, load_case
from bench.gates import pixels
from bench.gates.session import slug
from bench.paths import Project

pytestmark = [pytest.mark.docker, pytest.mark.browser]
ROOT = Path(__file__).resolve().parents[2]
CASES = [c for c in case_ids(Project(ROOT), known_cases(Project(ROOT))) if load_case(Project(ROOT), c).spec.seat != "none"]
SOFTWARE = ("--seat", "software", "--concurrency", "1")
PIN = "ba15aaa315a427a2daf15eacb8fcbef6bed0795e93af10bb6c1063dddb663b2a"


def bench_cli(cwd: Path, *args: str, root: Path = ROOT, rc: int | None = 0, timeout: int = 1800):
    env = {**os.environ, "BENCH_ROOT": str(root), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "bench.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)
    if rc is not None:
        assert done.returncode == rc, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    return done


def trial(cwd: Path, label: str, case: str, arm: str) -> Path:
    return cwd / "results" / label / case / arm / "trial-1"


def result(cwd: Path, label: str, case: str, arm: str) -> dict:
    return json.loads((trial(cwd, label, case, arm) / "result.json").read_text())


def assert_exit_status(done: subprocess.CompletedProcess, cwd: Path, label: str, trials: list[tuple[str, str]]):
    """Without --seat, whether a case is graded or INCOMPLETE is the engine's (a GPU or none): the exit status
    must follow the verdicts recorded, by bench/exit_status.py's rule."""
    from bench.exit_status import exit_status

    verdicts = [result(cwd, label, case, arm)["verdict"] for case, arm in trials]
    assert done.returncode == exit_status(verdicts), (done.returncode, verdicts, done.stderr[-2000:])


def predicates(res: dict) -> dict[str, dict]:
    return {p["name"]: p for check in res["checks"] for p in check["predicates"]}


@pytest.fixture(scope="module")
def six(docker_client, tmp_path_factory) -> Path:
    """The oracle (arm good) and the null agent (arm bad) on all six cases, software seat."""
    cwd = tmp_path_factory.mktemp("six")
    bench_cli(cwd, "run", *CASES, "--arm", "good=context:with-context,agent:oracle",
              "--arm", "bad=context:with-context,agent:null", "--label", "six", *SOFTWARE, rc=1)  # arm bad FAILs
    return cwd


def test_the_six_cases_are_here():
    assert set(CASES) == {"red-box", "falling-box", "orbit-on-drag", "color-on-key", "persist-color", "striped-material"}


@pytest.mark.parametrize("case", CASES)
def test_oracle_passes_on_a_software_seat(six, case):
    res = result(six, "six", case, "good")
    assert res["verdict"] == "PASS", res["reason"]
    seat = res["checks"][0]["seat"]
    assert seat["class"] == "fallback" and seat["mode"] == "software" and seat["need"] == "gpu"
    assert seat["chromium"] and "swiftshader" in seat["adapter"]
    assert seat["viewport"] == "1280x720@1" and seat["encoding"] == "final-canvas 1280x720@1 rgba8"
    provenance = json.loads((trial(six, "six", case, "good") / "provenance.json").read_text())
    assert provenance["seat"]["mode"] == "software" and provenance["seat"]["class"] == "fallback"
    assert provenance["subject"]["tarball_sha256"] == PIN and provenance["subject"]["source"] == "registry"


@pytest.mark.parametrize("case", CASES)
def test_null_fails_on_a_predicate(six, case):
    res = result(six, "six", case, "bad")
    assert res["verdict"] == "FAIL"
    assert res["reason"].startswith("check '") and "FAILS" in res["reason"]
    assert any(not p["passed"] for p in predicates(res).values())


@pytest.mark.parametrize("case", CASES)
def test_saved_frames_show_what_the_predicates_measured(six, case):
    """Every frame a predicate used is a PNG that, decoded again, gives the very same numbers."""
    folder = trial(six, "six", case, "good")
    res = result(six, "six", case, "good")
    manifest = json.loads((folder / "manifest.json").read_text())["files"]
    check = res["checks"][0]
    gate = {p.name: p.model_dump() for p in load_case(Project(ROOT), case).gate.checks[0].predicates}
    for name, measured in predicates(res).items():
        files = {frame: folder / "artifacts" / slug(check["name"]) / f"{slug(frame)}.png" for frame in measured["frames"]}
        for path in files.values():
            assert path.relative_to(folder).as_posix() in manifest
        frames = {frame: pixels.read_png(path.read_bytes()) for frame, path in files.items()}
        assert all((f.width, f.height) == (1280, 720) for f in frames.values())
        series = {gate[name]["series"]: measured["frames"]} if gate[name]["kind"] == "centroid" else {}
        again = pixels.evaluate(gate[name], frames, series)
        assert again["values"] == measured["values"] and again["passed"] == measured["passed"]


def test_without_seat_software_a_machine_without_gpu_is_incomplete(docker_client, tmp_path):
    from bench.seat import engine_has_gpu

    if engine_has_gpu(docker_client):
        pytest.skip("this engine can hand graders a GPU; the refusal is for software-only machines")
    bench_cli(tmp_path, "run", *CASES, "--arm", "with-context", "--label", "auto", "--concurrency", "1", rc=3)
    for case in CASES:
        res = result(tmp_path, "auto", case, "with-context")
        assert res["verdict"] == "INCOMPLETE", (case, res["reason"])
        assert "seat refused" in res["reason"] and "--seat software" in res["reason"]
        assert res["checks"][0]["incomplete"] is True and res["checks"][0]["seat"]["class"] == "fallback"
    summary = json.loads((tmp_path / "results" / "auto" / "summary.json").read_text())
    assert all(arm["pass_rate"] is None for arm in summary["arms"])  # counted as neither pass nor fail


def test_seat_gpu_is_refused_up_front_on_an_engine_without_gpu(docker_client, tmp_path):
    from bench.seat import engine_has_gpu

    if engine_has_gpu(docker_client):
        pytest.skip("this engine has an NVIDIA runtime")
    done = bench_cli(tmp_path, "run", "red-box", "--seat", "gpu", rc=2)
    assert "NVIDIA" in done.stderr and "--seat software" in done.stderr


def test_a_project_that_does_not_build_fails_naming_the_build(docker_client, tmp_path):
    broken = "cd {workspace} && echo 'export const = ;' >> src/build.ts"
    bench_cli(tmp_path, "run", "red-box", "--arm", "with-context", "--agent", "command", "--agent-cmd", broken,
              "--label", "broken", *SOFTWARE, rc=1)
    res = result(tmp_path, "broken", "red-box", "with-context")
    assert res["verdict"] == "FAIL"
    assert "the build `bunx shallot build` exited" in res["reason"]


def test_a_page_that_never_becomes_ready_fails_with_a_timeout(docker_client, tmp_path, project):
    gate = project / "goldens" / "red-box" / "gate.toml"
    gate.write_text(gate.read_text().replace('serve = "dist"', 'serve = "dist"\nready_timeout_s = 20'))
    stuck = ("cd {workspace} && printf '%s\\n' "
             "'export default { name: \"Ring\", warm() { throw new Error(\"never ready\"); } };' > src/build.ts")
    bench_cli(tmp_path, "run", "red-box", "--arm", "with-context", "--agent", "command", "--agent-cmd", stuck,
              "--label", "stuck", *SOFTWARE, root=project, rc=1)
    res = result(tmp_path, "stuck", "red-box", "with-context")
    assert res["verdict"] == "FAIL"
    assert "timeout: the page was not ready after 20 s" in res["reason"]


MUTATIONS = {
    # case: (solution file, text, replacement, the predicate that must fail)
    "red-box": ("public/scenes/red-box.scene", "rgba: 0.9 0.02 0.02 1", "rgba: 0.1 0.2 0.9 1", "the centre is red"),
    "falling-box": ("public/scenes/falling-box.scene", "half-extents: 0.7 0.7 0.7; mass: 1",
                    "half-extents: 0.7 0.7 0.7; mass: 0", "the blue box moves down, then settles"),
    "color-on-key": ("src/paint.ts", 'isKeyPressed("Space")', 'isKeyPressed("KeyQ")', "the centre is green after Space"),
}


def test_a_mutated_oracle_fails_on_the_matching_predicate(docker_client, tmp_path, project):
    """Wrong colour, no motion, a key that does nothing: each fails exactly where it should."""
    for case, (file, text, replacement, _) in MUTATIONS.items():
        path = project / "goldens" / case / "solution" / file
        assert text in path.read_text()
        path.write_text(path.read_text().replace(text, replacement))
    bench_cli(tmp_path, "run", *MUTATIONS, "--arm", "with-context", "--label", "mutants", *SOFTWARE, root=project, rc=1)
    for case, (*_, predicate) in MUTATIONS.items():
        res = result(tmp_path, "mutants", case, "with-context")
        assert res["verdict"] == "FAIL", case
        assert f"failed: {predicate}: FAILS" in res["reason"]
        failing = [name for name, p in predicates(res).items() if not p["passed"]]
        assert failing == [predicate], (case, failing)


def test_the_bare_arm_loses_the_packaged_context(docker_client, tmp_path):
    probe = ("cd {workspace}; P=node_modules/@dylanebert/shallot; "
             "for f in $P/examples $P/AGENTS.md; do test -e $f && echo HAS:$f || echo NO:$f; done; "
             "grep -q 'examples/AGENTS.md' AGENTS.md && echo POINTER || echo NOPOINTER; "
             "tar tzf /opt/subject/subject.tgz | grep -q '^package/examples/' && echo TARBALL-EXAMPLES || echo TARBALL-BARE")
    done = bench_cli(tmp_path, "run", "red-box", "--arm", "bare", "--arm", "with-context", "--agent", "command",
                     "--agent-cmd", probe, "--label", "arms", rc=None)
    assert_exit_status(done, tmp_path, "arms", [("red-box", "bare"), ("red-box", "with-context")])
    # whole lines, so "POINTER" is never satisfied by "NOPOINTER"
    bare = set((trial(tmp_path, "arms", "red-box", "bare") / "transcript.log").read_text().splitlines())
    full = set((trial(tmp_path, "arms", "red-box", "with-context") / "transcript.log").read_text().splitlines())
    shallot = "node_modules/@dylanebert/shallot"
    assert {f"NO:{shallot}/examples", f"NO:{shallot}/AGENTS.md", "NOPOINTER", "TARBALL-BARE"} <= bare
    assert {f"HAS:{shallot}/examples", "POINTER", "TARBALL-EXAMPLES"} <= full
    assert "NOPOINTER" not in full and "POINTER" not in bare


def test_subject_from_a_path_is_recorded_by_its_tarball(docker_client, tmp_path):
    from bench.subject import resolve

    tarball = tmp_path / "shallot.tgz"
    tarball.write_bytes(resolve(Project(ROOT), "shallot").tarball.read_bytes())  # the pinned bytes, fetched once
    done = bench_cli(tmp_path, "run", "red-box", "--arm", "with-context", "--agent", "null", "--subject", str(tarball),
                     "--label", "subject", rc=None)
    assert_exit_status(done, tmp_path, "subject", [("red-box", "with-context")])
    provenance = json.loads((trial(tmp_path, "subject", "red-box", "with-context") / "provenance.json").read_text())
    subject = provenance["subject"]
    assert subject["source"] == "path" and subject["origin"] == str(tarball)
    assert subject["tarball_sha256"] == PIN and subject["version"] == "0.9.0"

"""Subject arms on the real engine: two versions of a package trialled interleaved in one invocation.

The Shallot cases are too heavy for this, so the test adds a tiny subject case to the
scratch project: an image on base (images/tiny-subject) whose project.Dockerfile only
copies the subject tarball in, a pin for it that is never fetched (both arms bring their
own source), and a gate that checks what the agent read from the installed tarball. The
two sources are .tgz files differing by one file, written deterministically (gzip
without a time), so each one's SHA-256 is known before the run.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from bench.hashing import sha256_file

pytestmark = pytest.mark.docker
AGENT = "tar -xzOf /opt/subject/subject.tgz package/index.js | tee {workspace}/seen.js"


def npm_tarball(path: Path, index: str) -> Path:
    """A package as `npm pack` writes one (package/...), byte-for-byte the same for the same files."""
    files = {"package/package.json": b'{"name": "tiny-subject", "version": "1.0.0"}\n',
             "package/index.js": index.encode()}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return path


@pytest.fixture()
def tiny(project: Path) -> Path:
    """The scratch project with case tiny-subject, pinned to subject `tiny` on image tiny-subject."""
    image = project / "images/tiny-subject"
    image.mkdir()
    (image / "image.toml").write_text('parent = "base"\n')
    (image / "Dockerfile").write_text("ARG PARENT\nFROM ${PARENT}\n")
    (image / "project.Dockerfile").write_text("ARG PARENT\nFROM ${PARENT}\nCOPY subject.tgz /opt/subject/subject.tgz\n")
    with open(project / "provenance/subjects.toml", "a") as pins:
        pins.write(f'\n[tiny]\npackage = "tiny-subject"\nversion = "1.0.0"\nsha256 = "{"0" * 64}"\n'
                   'image = "tiny-subject"\n')
    case = project / "cases/tiny-subject"
    (case / "workspace").mkdir(parents=True)
    (case / "case.toml").write_text('title = "Read the installed subject"\nimage = "tiny-subject"\n'
                                    'subject = "tiny"\narms = ["default"]\n\n[limits]\ntimeout_s = 60\n')
    (case / "PROMPT.md").write_text("Copy package/index.js of /opt/subject/subject.tgz to seen.js.\n")
    (case / "workspace/README.md").write_text("An empty workspace.\n")
    goldens = project / "goldens/tiny-subject"
    (goldens / "solution").mkdir(parents=True)
    (goldens / "solution/seen.js").write_text("export const colour = 'red';\n")
    (goldens / "gate.toml").write_text('[[checks]]\nkind = "grep"\nname = "read the subject"\nfiles = ["seen.js"]\n'
                                       "pattern = '^export const colour'\n")
    return project


def test_two_subject_arms_interleave_are_recorded_compare_and_refuse_a_changed_source(docker_client, bench, tiny,
                                                                                     tmp_path):
    base = npm_tarball(tmp_path / "tiny-a.tgz", "export const colour = 'red';\n")
    cand = npm_tarball(tmp_path / "tiny-b.tgz", "export const colour = 'blue';\n")
    args = ["run", "tiny-subject", "--agent", "command", "--agent-cmd", AGENT, "--arm", f"base=subject:{base}",
            "--arm", "cand=subject:../tiny-b.tgz", "--trials", "2", "--concurrency", "1", "--label", "subjects"]
    work = tmp_path / "work"
    work.mkdir()
    bench(*args, root=tiny, check_rc=0, cwd=work, timeout=300)
    label = work / "results/subjects"
    trials = [json.loads(p.read_text()) for p in label.glob("tiny-subject/*/trial-*/result.json")]
    assert [f"{r['arm']}-{r['trial']}" for r in sorted(trials, key=lambda r: r["started_at"])] == \
        ["base-1", "cand-1", "base-2", "cand-2"]
    assert {r["verdict"] for r in trials} == {"PASS"}
    subjects = {arm: json.loads((label / f"tiny-subject/{arm}/trial-1/provenance.json").read_text())["subject"]
                for arm in ("base", "cand")}
    assert subjects["base"]["tarball_sha256"] == sha256_file(base) != subjects["cand"]["tarball_sha256"] == \
        sha256_file(cand)
    assert (subjects["cand"]["source"], subjects["cand"]["origin"]) == ("path", str(cand))
    seen = {arm: (label / f"tiny-subject/{arm}/trial-2/transcript.log").read_text() for arm in ("base", "cand")}
    assert "'red'" in seen["base"] and "'blue'" in seen["cand"]  # each arm's trials ran on its own subject
    run = json.loads((label / "run.json").read_text())["cases"]["tiny-subject"]
    assert run["subjects"] == {"base": sha256_file(base), "cand": sha256_file(cand)} and run["subject_sha256"] is None

    done = bench("compare", "subjects:base", "subjects:cand", "--results", str(label.parent), "--json", root=tiny,
                 check_rc=0)
    report = json.loads(done.stdout)
    pair = report["comparisons"][0]
    assert (pair["baseline_arm"], pair["candidate_arm"], pair["pairs"]) == ("base", "cand", 2)
    assert report["drift"] == [] and [(d["where"], d["field"]) for d in report["declared"]] == \
        [("tiny-subject", "subject tarball")]

    npm_tarball(cand, "export const colour = 'green';\n")  # the candidate's source changed between runs
    refused = bench(*args[:-2], "--trials", "3", "--label", "subjects", root=tiny, cwd=work, timeout=300)
    assert refused.returncode == 2, refused.stderr
    assert f"tiny-subject subjects.cand: recorded {subjects['cand']['tarball_sha256']}, now " in refused.stderr
    assert not (label / "tiny-subject/cand/trial-3").exists()

"""Subject arms: `subject:` parsed, resolved per case x arm (each source packed once), recorded per arm in run.json.

Images are a fake here; the real engine is in tests/integration/test_subject_arms.py, and
the resume refusal in tests/unit/test_resume.py (beside the plugin one)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench.arm_inputs import check_subjects, recorded, resolve_arms
from bench.arms import parse_arm
from bench.cases import Case
from bench.errors import UsageError
from bench.hashing import sha256_file
from bench.models import ArmSpec, CaseInputs, ImageRecord
from bench.case_spec import CaseSpec
from bench.paths import Project
from bench.subject import Subjects, cache_dir


def npm_tarball(path: Path, version: str, body: str = "export const x = 1;\n") -> Path:
    """A package tarball as `npm pack` writes one: package/package.json and the files under package/."""
    files = {"package/package.json": json.dumps({"name": "tiny", "version": version}).encode(),
             "package/index.js": body.encode()}
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def case(name: str = "tiny-case", subject: str | None = "tiny") -> Case:
    spec = CaseSpec(title="t", image="base", subject=subject, arms=["default"])
    return Case(id=name, spec=spec, gate=SimpleNamespace(image=None), dir=Path("."), goldens_dir=Path("."))


class FakeImages:
    """Images without an engine: every name resolves, and each project image build is counted by tag."""

    def __init__(self, root: Path) -> None:
        self.project, self.ca, self.builds = Project(root), None, []

    def ensure(self, name: str) -> ImageRecord:
        return ImageRecord(name=name, tag=f"bench/{name}:1", id=f"sha256:{name}-id", content_digest=f"sha256:{name}")

    def context_hash(self, name: str) -> str:
        return f"sha256:{name}-context"

    def build_once(self, name, tag, build, why=""):
        self.builds.append(tag)
        return SimpleNamespace(id=f"sha256:{tag}", labels={})


@pytest.fixture()
def pinned(tmp_path, monkeypatch) -> Path:
    """A scratch project pinning `tiny` (on base), its registry tarball already in the (scratch) subject cache."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / "provenance").mkdir(parents=True)
    pin = npm_tarball(tmp_path / "pin.tgz", "1.0.0")
    (root / "provenance/subjects.toml").write_text(
        f'[tiny]\npackage = "tiny"\nversion = "1.0.0"\nsha256 = "{sha256_file(pin)}"\nimage = "base"\n')
    pin.rename(cache_dir() / f"tiny-1.0.0-{sha256_file(pin)[:16]}.tgz")
    return root


# --- parsing ---------------------------------------------------------------------------


def test_a_subject_path_is_made_absolute_and_a_git_source_is_kept(tmp_path, monkeypatch):
    (tmp_path / "shallot-a").mkdir()
    monkeypatch.chdir(tmp_path)
    assert parse_arm("base=subject:shallot-a").subject == str(tmp_path / "shallot-a")
    assert parse_arm("cand=subject:https://example.com/shallot.git@abcdef0,model:m") == ArmSpec(
        name="cand", subject="https://example.com/shallot.git@abcdef0", model="m")
    assert parse_arm("scp=subject:git@github.com:a/b.git@abcdef0").subject == "git@github.com:a/b.git@abcdef0"


def test_a_subject_that_is_neither_a_path_nor_a_commit_is_refused_naming_the_arm(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        parse_arm("cand=subject:../nowhere")
    assert str(caught.value).startswith("--arm 'cand=subject:../nowhere': subject '../nowhere' is neither a file, "
                                        "a folder, nor GIT_URL@COMMIT")


def test_a_subject_arm_on_a_case_without_a_subject_names_the_case_and_the_arm():
    cases = [case(), case("hello", subject=None)]
    arms = {c.id: [ArmSpec(name="base"), ArmSpec(name="cand", subject="/src/b")] for c in cases}
    with pytest.raises(UsageError, match="arm 'cand' sets subject:/src/b, but case hello pins no subject"):
        check_subjects(cases, arms, None)
    check_subjects(cases[:1], arms, None)


def test_one_source_cannot_replace_two_pins():
    cases = [case("a"), case("b", subject="other")]
    arms = {c.id: [ArmSpec(name="cand", subject="/src/b")] for c in cases}
    with pytest.raises(UsageError, match=r"the subject of arm\(s\) cand replaces one pinned subject, and these cases "
                                         r"use \['other', 'tiny'\]"):
        check_subjects(cases, arms, None)
    with pytest.raises(UsageError, match="--subject replaces one pinned subject"):
        check_subjects([case("hello", subject=None)], {"hello": [ArmSpec(name="base")]}, "/src/b")


# --- resolution per arm ----------------------------------------------------------------


def test_each_arm_gets_its_own_subject_packed_once_and_the_others_the_pin(pinned, tmp_path):
    a, b = npm_tarball(tmp_path / "a.tgz", "1.1.0", "a\n"), npm_tarball(tmp_path / "b.tgz", "1.2.0", "b\n")
    arms = [ArmSpec(name="pin"), ArmSpec(name="base", subject=str(a)), ArmSpec(name="cand", subject=str(b)),
            ArmSpec(name="again", subject=str(b))]
    images = FakeImages(pinned)
    subjects = Subjects(Project(pinned), images, None, None)
    found = resolve_arms(images, None, [case()], {"tiny-case": arms}, subjects, [])
    got = {arm: found[("tiny-case", arm)].subject for arm in ("pin", "base", "cand", "again")}
    assert (got["pin"].source, got["pin"].version) == ("registry", "1.0.0")
    assert (got["base"].tarball_sha256, got["base"].origin) == (sha256_file(a), str(a))
    assert got["cand"].tarball_sha256 == sha256_file(b) and got["again"] is got["cand"]  # one source, packed once
    assert len(images.builds) == len(set(images.builds)) == 3  # a project image per tarball
    grader = found[("tiny-case", "cand")].images["grader"]
    assert grader is found[("tiny-case", "cand")].images["agent"]  # no gate image: graded with the subject installed
    assert grader.built_on.startswith("images/base sha256:") and grader.built_on.endswith(" on base sha256:base")
    assert grader.built_on == found[("tiny-case", "pin")].images["grader"].built_on  # only the subject differs


def test_the_run_wide_subject_serves_the_arms_without_their_own(pinned, tmp_path):
    run_wide, own = npm_tarball(tmp_path / "r.tgz", "2.0.0"), npm_tarball(tmp_path / "o.tgz", "3.0.0")
    images = FakeImages(pinned)
    arms = [ArmSpec(name="base"), ArmSpec(name="cand", subject=str(own))]
    found = resolve_arms(images, None, [case()], {"tiny-case": arms}, Subjects(Project(pinned), images, str(run_wide),
                                                                                      None), [])
    assert [found[("tiny-case", arm)].subject.version for arm in ("base", "cand")] == ["2.0.0", "3.0.0"]


# --- run.json (resume: tests/unit/test_resume.py) ---------------------------------------------------------------


def test_run_json_records_each_subject_arm_by_its_tarball_and_images(pinned, tmp_path):
    b = npm_tarball(tmp_path / "b.tgz", "1.2.0")
    arms = [ArmSpec(name="base"), ArmSpec(name="cand", subject=str(b))]
    images = FakeImages(pinned)
    found = resolve_arms(images, None, [case()], {"tiny-case": arms}, Subjects(Project(pinned), images, None, None), [])
    inputs = CaseInputs(visible_hash="v", goldens_hash="g", arms=arms, **recorded("tiny-case", arms, found))
    assert inputs.subjects == {"cand": sha256_file(b)}
    assert inputs.subject_sha256 == found[("tiny-case", "base")].subject.tarball_sha256 != sha256_file(b)
    assert sorted(inputs.images) == ["agent", "agent@cand", "grader", "grader@cand"]
    assert inputs.images["agent@cand"] != inputs.images["agent"]

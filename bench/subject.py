"""The subject: the package under test, always installed from a tarball whose SHA-256 is recorded.

A pin in provenance/subjects.toml names a package at an exact version and the SHA-256
of the tarball the registry serves for it; fetching checks that hash, so a registry
that serves other bytes is refused rather than trusted. A run can replace the pin with
a source: ``--subject PATH`` (a checkout, packed with ``npm pack``, or a ready .tgz) or
``--subject GIT_URL@COMMIT`` (cloned at that commit, then packed). Either way the
agent and the grader see a tarball, never a checkout, and the record says which
commit it came from and whether the checkout was dirty.

The tarball is installed by a *project image*: images/<image>/project.Dockerfile built
on the pin's image, with the tarball and the CA bundle in its context, tagged by the
image folder, the parent's ID and the tarball's SHA-256 — so each subject is built once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import ssl
import subprocess
import tarfile
import tempfile
import tomllib
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import InfrastructureError, UsageError
from .hashing import combine, sha256_file, short_tag, tree_digest
from .harness import git_state
from .images import Images
from .models import ImageRecord, SubjectRecord, toolchains_of
from .paths import Project
from .trust import trusted_bundle

REGISTRY = "https://registry.npmjs.org"
# GIT_URL@COMMIT. The URL reaches `git clone`, so it must never read as an option: it starts
# with a known scheme (whose host or user starts alphanumeric) or is scp-like user@host:path
# with an alphanumeric first character; no whitespace anywhere.
GIT_SPEC = re.compile(
    r"^(?P<url>(?:https?|ssh|git)://[A-Za-z0-9\[]\S*|file:///\S+|[A-Za-z0-9][^@\s]*@[A-Za-z0-9][^:\s]*:\S+)"
    r"@(?P<commit>[0-9a-fA-F]{7,40})$")


class Pin(BaseModel):
    """One entry of provenance/subjects.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    package: str
    version: str
    sha256: str
    image: str


@dataclass(frozen=True)
class Subject:
    record: SubjectRecord
    tarball: Path
    image: str


def pins(project: Project) -> dict[str, Pin]:
    path = project.root / "provenance" / "subjects.toml"
    if not path.is_file():
        return {}
    try:
        return {name: Pin.model_validate(entry) for name, entry in tomllib.loads(path.read_text()).items()}
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise UsageError(f"{path}: {exc}") from None


def cache_dir() -> Path:
    path = Path.home() / ".cache" / "hermetic-bench" / "subjects"
    path.mkdir(parents=True, exist_ok=True)
    return path


def resolve(project: Project, name: str, override: str | None = None, ca: Path | None = None) -> Subject:
    """The subject for pin `name`: the pinned registry tarball, or the --subject source packed."""
    known = pins(project)
    if name not in known:
        raise UsageError(f"subject {name!r} is not pinned in provenance/subjects.toml; pinned: {', '.join(known) or '(none)'}")
    pin = known[name]
    if override is None:
        return Subject(_pinned(name, pin, ca), _cached(pin), pin.image)
    record, tarball = _from_source(name, override, ca)
    return Subject(record, tarball, pin.image)


def _cached(pin: Pin) -> Path:
    return cache_dir() / f"{pin.package.replace('/', '+')}-{pin.version}-{pin.sha256[:16]}.tgz"


def _pinned(name: str, pin: Pin, ca: Path | None) -> SubjectRecord:
    """Fetch the exact version once (npm pack when npm is here, else the registry URL), check the pin."""
    target = _cached(pin)
    if not target.is_file() or sha256_file(target) != pin.sha256:
        with tempfile.TemporaryDirectory(prefix="bench-subject-") as tmp:
            fetched = _npm_pack(f"{pin.package}@{pin.version}", Path(tmp), None, ca) if shutil.which("npm") \
                else _download(pin, Path(tmp), ca)
            digest = sha256_file(fetched)
            if digest != pin.sha256:
                raise InfrastructureError(
                    f"the registry served {pin.package}@{pin.version} with SHA-256 {digest}, but "
                    f"provenance/subjects.toml pins {pin.sha256}; refusing it (update the pin only if the change is intended)")
            shutil.move(str(fetched), target)
    return SubjectRecord(name=name, package=pin.package, version=pin.version, source="registry",
                         origin=f"{pin.package}@{pin.version}", tarball_sha256=pin.sha256)


def _download(pin: Pin, out: Path, ca: Path | None) -> Path:
    basename = pin.package.split("/")[-1]
    url = f"{REGISTRY}/{pin.package}/-/{basename}-{pin.version}.tgz"
    bundle = trusted_bundle(ca)
    context = ssl.create_default_context(cafile=str(bundle) if bundle else None)
    target = out / f"{basename}-{pin.version}.tgz"
    try:
        with urllib.request.urlopen(url, context=context, timeout=120) as response, open(target, "wb") as handle:
            shutil.copyfileobj(response, handle)
    except OSError as exc:
        raise InfrastructureError(f"could not fetch {url}: {exc} — behind a TLS-intercepting proxy, pass "
                                  f"--ca-bundle or set BENCH_CA_BUNDLE") from None
    return target


def _npm_pack(spec: str, out: Path, cwd: Path | None, ca: Path | None) -> Path:
    """`npm pack --json` of a registry spec or a checkout (cwd); the tarball's path."""
    if shutil.which("npm") is None:
        raise UsageError("packing a subject from source needs npm on this host — `apt-get install npm`, "
                         "or pass an already packed .tgz as --subject")
    bundle = trusted_bundle(ca)
    env = {**os.environ, **({"NODE_EXTRA_CA_CERTS": str(bundle)} if bundle else {})}
    done = subprocess.run(["npm", "pack", "--json", "--pack-destination", str(out), spec], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise InfrastructureError(f"`npm pack {spec}` failed ({done.returncode}): {done.stderr.strip()[-1500:]}")
    return out / json.loads(done.stdout)[0]["filename"]


def _from_source(name: str, override: str, ca: Path | None) -> tuple[SubjectRecord, Path]:
    """--subject PATH (a .tgz or a checkout) or GIT_URL@COMMIT, packed into the cache, described."""
    path = Path(override).expanduser()
    git = None if path.exists() else git_source(override)  # refused here, before anything runs
    out = Path(tempfile.mkdtemp(prefix="bench-subject-", dir=cache_dir()))
    if path.is_file():
        tarball, sha, dirty, source, origin = path.resolve(), None, None, "path", str(path.resolve())
    elif path.is_dir():
        sha, dirty = git_state(path.resolve(), (".",))  # the whole checkout, not the harness's paths
        tarball, source, origin = _npm_pack(".", out, path.resolve(), ca), "path", str(path.resolve())
    else:
        url, commit = git
        tarball, sha = _pack_git(url, commit, out, ca)
        dirty, source, origin = False, "git", f"{url}@{sha}"
    package, version = _identity(tarball)
    record = SubjectRecord(name=name, package=package, version=version, source=source, origin=origin,
                           tarball_sha256=sha256_file(tarball), source_sha=sha, dirty=dirty)
    return record, tarball


def git_source(text: str, flag: str = "--subject") -> tuple[str, str]:
    """(url, commit) of GIT_URL@COMMIT, or UsageError: a URL git could read as an option never reaches git."""
    match = GIT_SPEC.match(text)
    if match is None:
        raise UsageError(f"{flag} {text!r} is neither a file, a folder, nor GIT_URL@COMMIT — GIT_URL is "
                         "https://, ssh://, git://, file:/// or user@host:path, COMMIT 7 to 40 hex digits")
    return match["url"], match["commit"]


def _pack_git(url: str, commit: str, out: Path, ca: Path | None) -> tuple[Path, str]:
    """Clone and check out the commit; ``--`` ends the options, so neither argument is read as one."""
    checkout = out / "checkout"
    for args in (["clone", "--quiet", "--", url, str(checkout)],
                 ["-C", str(checkout), "checkout", "--quiet", "--detach", commit, "--"]):
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise UsageError(f"`git {' '.join(args)}` failed: {done.stderr.strip()[-800:]}")
    sha, _ = git_state(checkout)
    return _npm_pack(".", out, checkout, ca), sha or commit


def _identity(tarball: Path) -> tuple[str, str]:
    """name and version from the tarball's own package/package.json."""
    try:
        with tarfile.open(tarball) as archive:
            data = json.load(archive.extractfile("package/package.json"))
        return data["name"], data["version"]
    except (tarfile.TarError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{tarball} is not an npm package tarball (no package/package.json): {exc}") from None


def project_image(images: Images, subject: Subject) -> ImageRecord:
    """The pin's image with the subject installed: built once per (image, parent, tarball) and reused."""
    parent = images.ensure(subject.image)
    key = combine({"image": images.context_hash(subject.image), "parent": parent.id,
                   "subject": subject.record.tarball_sha256})
    name = f"{subject.image}-project"
    tag = f"bench/{name}:{short_tag(key)}"
    image = images.build_once(name, tag, lambda: _build_project(images, subject, tag, parent.tag, trusted_bundle(images.ca)),
                              f" with {subject.record.origin}")
    recipe = tree_digest(images.project.image_dir(subject.image))
    built_on = f"images/{subject.image} {recipe} on {parent.name} {parent.content_digest or f'id {parent.id}'}"
    return ImageRecord(name=name, tag=tag, id=image.id, built_on=built_on, toolchains=toolchains_of(image.labels))


def _build_project(images: Images, subject: Subject, tag: str, parent_tag: str, ca: Path | None):
    with tempfile.TemporaryDirectory(prefix="bench-project-") as tmp:
        context = Path(tmp) / "context"
        shutil.copytree(images.project.image_dir(subject.image), context, symlinks=True)
        shutil.copyfile(subject.tarball, context / "subject.tgz")
        (context / "bench-ca.crt").write_bytes(ca.read_bytes() if ca else b"")
        return images.run_build(f"{subject.image}-project", tag, labels={"bench.subject-sha256": subject.record.tarball_sha256},
                         path=str(context), dockerfile="project.Dockerfile", buildargs={"PARENT": parent_tag})


class Subjects:
    """Each subject a run needs, resolved and built into its project image once per run.

    A subject is known by its pin and its source: an arm's ``subject:``, else the run's
    --subject, else the pin itself. Two arms naming one source share its packing and its
    image; each arm's own source is packed exactly once, however many trials use it.
    """

    def __init__(self, project: Project, images: Images, override: str | None, ca: Path | None) -> None:
        self.project, self.images, self.override, self.ca = project, images, override, ca
        self._subjects: dict[tuple[str, str | None], Subject] = {}
        self._images: dict[tuple[str, str | None], ImageRecord] = {}

    def get(self, name: str, source: str | None = None) -> Subject:
        key = (name, source or self.override)
        if key not in self._subjects:
            self._subjects[key] = resolve(self.project, name, key[1], self.ca)
        return self._subjects[key]

    def image(self, name: str, source: str | None = None) -> ImageRecord:
        key = (name, source or self.override)
        if key not in self._images:
            self._images[key] = project_image(self.images, self.get(name, source))
        return self._images[key]

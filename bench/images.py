"""Pinned images: build only what is missing, and record exactly what was used.

``base`` is made from Debian packages by mmdebstrap with SOURCE_DATE_EPOCH, and loaded
as a hand-written docker-archive whose config has a fixed creation time: the same
packages give the same bytes, so the same image ID on any machine. Every other image
is a Dockerfile on a parent, tagged by a hash of its build context and its parent's
image ID, so a tag that exists is an image that is up to date and nothing is rebuilt.

An image's identity for reproducibility is its *content digest* (bench/hashing.py),
cached per image ID with the dpkg package list and the per-path entries, so a later
rebuild can say which packages and which paths drifted (bench/rebuild.py). Images made
by Nix dockerTools enter through ``bench.lock.load_archive`` and are locked like any
other; the lock itself, and the level a result reaches from it, are bench/lock.py's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import docker
from docker.errors import ImageNotFound

from .cases import load_toml
from .engine import engine_faults, harness_labels, owner_labels, patient
from .errors import CaseError, InfrastructureError, UsageError
from .hashing import combine, filesystem_digest, sha256_file, short_tag, tree_digest
from .image_spec import ImageSpec
from .models import ImageRecord, LockEntry, toolchains_of
from .paths import Project
from .layer_build import CONTAINER_VOLATILE
from .layer_build import build as build_layer_image
from .debs import check_installed, read_base_pins
from .layer_build import builder_digest, fetch_debs, load
from .layer_writer import ChunkReader, iso, write_archive

BASE = "base"
SHARED = "_shared"
ENV_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
Log = Callable[[str], None]


@dataclass
class Built:
    record: ImageRecord
    built: bool


class Images:
    """Resolve image names to pinned image IDs, building what is missing."""

    def __init__(self, client: docker.DockerClient, project: Project, ca: Path | None = None,
                 log: Log = lambda line: None) -> None:
        self.client, self.project, self.ca, self.log = client, project, ca, log
        self.built: list[str] = []
        self._resolved: dict[str, ImageRecord] = {}

    def names(self) -> list[str]:
        return sorted(p.parent.name for p in self.project.images.glob("*/image.toml"))

    def spec(self, name: str) -> ImageSpec:
        path = self.project.image_dir(name) / "image.toml"
        if not path.is_file():
            raise UsageError(f"unknown image {name!r}; known images: {', '.join(self.names())}")
        return load_toml(path, ImageSpec)

    def context_hash(self, name: str) -> str:
        """What the tag is derived from: the image folder (recipe and pins), shared files, the parent's ID.

        Nothing of the host: the CA bundle that fetches inputs is trust, not content (issue 12).
        """
        spec = self.spec(name)
        parts = {"context": tree_digest(self.project.image_dir(name))}
        parts.update({f"shared/{file}": sha256_file(path) for file, path in self.shared_files(name).items()})
        if spec.parent:
            parts["parent"] = self.ensure(spec.parent).id
        if self.builder(name) == "layer":
            parts["builder"] = builder_digest()
        return combine(parts)

    def shared_files(self, name: str) -> dict[str, Path]:
        """Helper files several images use (images/_shared/), so each is written once."""
        files = {}
        for file in self.spec(name).shared:
            path = self.project.images / SHARED / file
            if not path.is_file():
                raise CaseError(self.project.image_dir(name) / "image.toml", "shared",
                                f"{path} does not exist", f"add it under images/{SHARED}/ or drop it")
            files[file] = path
        return files

    def tag(self, name: str) -> str:
        return f"bench/{name}:{short_tag(self.context_hash(name))}"

    def ensure(self, name: str, force: bool = False) -> ImageRecord:
        """The image's record, building it (and its parents) only when its tag is missing."""
        if name in self._resolved and not force:
            return self._resolved[name]
        if not (self.project.image_dir(name) / "image.toml").is_file():
            return self._resolved.setdefault(name, self.loaded(name))
        tag = self.tag(name)
        build = lambda: self._build(name, tag)
        image = self.build_once(name, tag, build) if not force else self._built(name, tag, build, "")
        record = self._with_digest(ImageRecord(name=name, tag=tag, id=image.id, toolchains=toolchains_of(image.labels)),
                                   image)
        self._resolved[name] = record
        return record

    def loaded(self, name: str) -> ImageRecord:
        """An image with no images/ folder: one `bench images load --name` locked (a Nix dockerTools build).

        Nothing here can build it, so it is used only as the lock names it: its tag must
        hold exactly the lock's image ID on this engine.
        """
        from .lock import read_lock

        entry = read_lock(self.project).images.get(name)
        if entry is None or entry.builder != "dockertools":
            self.spec(name)  # raises "unknown image" with the known names
        image = self.find(entry.tag)
        if image is None or image.id != entry.id:
            raise UsageError(f"image {name!r} ({entry.id[7:19]}) was loaded from a Nix build and is not on this engine "
                             f"as the lock names it: `nix build .#{name.removesuffix('-nix')}` and "
                             f"`bench images load result --name {name}`")
        return ImageRecord(name=name, tag=entry.tag, id=entry.id, content_digest=entry.content_digest,
                           toolchains=toolchains_of(image.labels))

    def pinned(self) -> dict[str, ImageRecord]:
        """Every image resolved from images/ so far (parents included), by name: what the lock speaks for."""
        return dict(self._resolved)

    def build_once(self, name: str, tag: str, build: Callable[[], Any], why: str = ""):
        """The image under ``tag``, built (and counted in ``built``) only when the tag is missing.

        The one way any image of a run gets made: pinned images, agent layers on a
        workspace image, subject project images.
        """
        return self.find(tag) or self._built(name, tag, build, why)

    def _built(self, name: str, tag: str, build: Callable[[], Any], why: str):
        self.log(f"building image {name} as {tag}{why}")
        image = build()
        self.built.append(name)
        return image

    def find(self, tag: str):
        """The image with this tag, or None."""
        with engine_faults(f"looking up image {tag}"):
            try:
                return self.client.images.get(tag)
            except ImageNotFound:
                return None

    def rebuild(self, name: str, tag: str):
        """Build ``name`` from images/ again under ``tag``, reusing nothing from an earlier build.

        base reruns mmdebstrap (it never uses a cache); Dockerfile images build with
        ``nocache``, so every RUN step really runs again against today's mirror.
        """
        return self._build(name, tag, nocache=True)

    def builder(self, name: str) -> str:
        """mmdebstrap (no parent), dockerfile (a Dockerfile in the folder), else layer (bench/layer_build.py)."""
        if self.spec(name).parent is None:
            return "mmdebstrap"
        return "dockerfile" if (self.project.image_dir(name) / "Dockerfile").is_file() else "layer"

    def _build(self, name: str, tag: str, nocache: bool = False):
        spec, builder = self.spec(name), self.builder(name)
        if builder == "mmdebstrap":
            return self._build_base(name, spec, tag)
        if builder == "layer":
            return build_layer_image(self, name, spec, tag)
        return self._build_dockerfile(name, spec, tag, nocache)

    # --- base: mmdebstrap -> deterministic docker-archive ---------------------------

    def _build_base(self, name: str, spec: ImageSpec, tag: str):
        pins = read_base_pins(self.project.image_dir(name), spec)
        with tempfile.TemporaryDirectory(prefix="bench-base-") as tmp:
            debs = Path(tmp) / "debs"
            debs.mkdir()
            for file, path in fetch_debs(pins, spec, self.ca, self.log).items():
                shutil.copyfile(path, debs / file)
            rootfs = Path(tmp) / "rootfs.tar"
            self._mmdebstrap(spec, rootfs, debs if pins else None)
            if pins:
                check_installed(pins, installed_packages(rootfs))
            archive = Path(tmp) / "image.tar"
            write_docker_archive(rootfs, archive, tag, spec.source_date_epoch,
                                 harness_labels(**{"bench.image": name}))
            load(self.client, archive, name)
        with engine_faults(f"looking up image {name}"):
            return self.client.images.get(tag)

    def _mmdebstrap(self, spec: ImageSpec, out: Path, debs: Path | None = None) -> None:
        """Run mmdebstrap from wherever it is installed (a Nix store path too), with the host's PATH.

        The child keeps the caller's PATH (the Nix wrapper's tools live there) with the
        system's sbin folders appended for chroot and friends; a tool that cannot be
        started is a setup problem, never "the engine went away".
        """
        found = shutil.which("mmdebstrap")
        if found is None:
            raise InfrastructureError(
                "mmdebstrap not found on PATH: the base image is built from Debian packages — "
                "`apt-get install mmdebstrap` (Debian/Ubuntu), or run through `nix run .#bench`, and retry")
        hook = 'chroot "$1" useradd --create-home --uid 1000 --shell /bin/sh bench'
        command = [
            found, "--quiet", f"--variant={spec.variant}",
            f"--include={','.join(spec.packages)}" if spec.packages else "--include=",
            f"--customize-hook={hook}",
            "--customize-hook=rm -rf \"$1\"/var/cache/apt/* \"$1\"/var/lib/apt/lists/*",
            *(pinned_debs_hooks(debs) if debs else []),
            spec.suite, str(out),
            f"http://snapshot.debian.org/archive/debian/{spec.snapshot}" if spec.snapshot else spec.mirror,
        ]
        path = os.pathsep.join(filter(None, [os.environ.get("PATH", ""), "/usr/sbin:/usr/bin:/sbin:/bin"]))
        env = {"SOURCE_DATE_EPOCH": str(spec.source_date_epoch), "PATH": path}
        self.log(" ".join(command))
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True)
        except OSError as exc:
            raise InfrastructureError(f"could not start mmdebstrap ({found}): {exc}") from None
        if done.returncode != 0:
            raise InfrastructureError(f"mmdebstrap failed ({done.returncode}): {done.stderr.strip()[-2000:]}")

    # --- derived: Dockerfile on a parent -------------------------------------------

    def _build_dockerfile(self, name: str, spec: ImageSpec, tag: str, nocache: bool = False):
        parent = self.ensure(spec.parent)
        with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as tmp:
            context = Path(tmp) / "context"
            shutil.copytree(self.project.image_dir(name), context, symlinks=True)
            for file, path in self.shared_files(name).items():
                shutil.copy2(path, context / file)
            return self.run_build(name, path=str(context), tag=tag, nocache=nocache, buildargs={"PARENT": parent.tag})

    def run_build(self, name: str, tag: str, labels: dict[str, str] | None = None, **build: object):
        """One `docker build` with the harness's labels, its output streamed to the log."""
        with engine_faults(f"building image {name}"):
            stream = self.client.api.build(
                tag=tag, rm=True, forcerm=True, pull=False, decode=True,
                labels=harness_labels(**{"bench.image": name, **(labels or {})}), **build,
            )
            for chunk in stream:
                if "error" in chunk:
                    raise InfrastructureError(f"building image {name} failed: {chunk['error'].strip()}")
                if line := chunk.get("stream", "").rstrip():
                    self.log(line)
        return self.client.images.get(tag)

    # --- content digest --------------------------------------------------------------

    def _with_digest(self, record: ImageRecord, image) -> ImageRecord:
        return record.model_copy(update={"content_digest": self.filesystem(record.name, image.id)["digest"]})

    def filesystem(self, name: str, image_id: str) -> dict:
        """Digest, dpkg packages and per-path entries, computed once per image ID and cached on disk.

        The cache is keyed by image ID, which names the bytes exactly, so it never goes stale.
        """
        cached = read_cached_filesystem(image_id)
        if cached is not None:
            return cached
        self.log(f"computing the content digest of {name} ({image_id[7:19]})")
        data = self.inspect_filesystem(name, image_id)
        target = cache_file(image_id)
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data))
        partial.replace(target)  # atomic: a concurrent reader never sees half a file
        return data

    def inspect_filesystem(self, name: str, image_id: str) -> dict:
        """Normalized filesystem digest plus the dpkg package list, from `docker export`."""
        has_spec = (self.project.image_dir(name) / "image.toml").is_file()
        spec = self.spec(name) if has_spec else ImageSpec()
        # pid and host labels let `bench images prune` remove this container if we die mid-export.
        with engine_faults(f"exporting image {name} for its content digest"):
            container = self.client.containers.create(image_id, command=["true"], labels=owner_labels())
        try:
            digest, entries, captured = patient(
                self.client, "export", f"exporting image {name} for its content digest",
                lambda client: filesystem_digest(ChunkReader(client.api.export(container.id)),
                                                 tuple(spec.volatile) + CONTAINER_VOLATILE,
                                                 capture=("var/lib/dpkg/status",)))
        finally:
            patient(self.client, "remove", f"removing the export container of {name}",
                    lambda client: client.api.remove_container(container.id, force=True))
        return {"digest": digest, "packages": parse_dpkg_status(captured.get("var/lib/dpkg/status", b"")),
                "paths": entries}

    def lock_entry(self, name: str) -> LockEntry:
        record = self.ensure(name)
        spec = self.spec(name)
        return LockEntry(name=name, tag=record.tag, id=record.id, content_digest=record.content_digest,
                         parent=spec.parent, context_hash=self.context_hash(name),
                         packages=self.filesystem(name, record.id)["packages"],
                         builder=self.builder(name))


def digest_cache_dir() -> Path:
    path = Path.home() / ".cache" / "hermetic-bench" / "digests"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_file(image_id: str) -> Path:
    return digest_cache_dir() / f"{image_id.split(':')[-1]}.json"


def read_cached_filesystem(image_id: str) -> dict | None:
    """The cached digest/packages/paths of an image ID, or None when this machine never computed it."""
    path = cache_file(image_id)
    return json.loads(path.read_text()) if path.is_file() else None


def pinned_debs_hooks(debs: Path) -> list[str]:
    """mmdebstrap takes the pinned files from apt's cache instead of downloading (its documented sync-in)."""
    return ["--skip=essential/unlink", '--setup-hook=mkdir -p "$1"/var/cache/apt/archives/',
            f"--setup-hook=sync-in {debs} /var/cache/apt/archives/"]


def installed_packages(rootfs: Path) -> dict[str, str]:
    """name -> version from a root filesystem tar's dpkg status."""
    with tarfile.open(rootfs) as archive:
        for name in ("./var/lib/dpkg/status", "var/lib/dpkg/status"):
            try:
                return parse_dpkg_status(archive.extractfile(name).read())
            except KeyError:
                continue
    return {}


def parse_dpkg_status(data: bytes) -> dict[str, str]:
    packages: dict[str, str] = {}
    for stanza in data.decode("utf-8", "replace").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" "))
        if "Package" in fields and "installed" in fields.get("Status", ""):
            packages[fields["Package"]] = fields.get("Version", "")
    return dict(sorted(packages.items()))


def write_docker_archive(rootfs: Path, out: Path, tag: str, epoch: int, labels: dict[str, str]) -> str:
    """Write a `docker load` archive with one layer and a fixed config; returns the image ID.

    The image ID is the SHA-256 of the config, and the config holds only the layer's
    digest, the fixed creation time and fixed settings: same rootfs bytes, same ID.
    """
    created = iso(epoch)
    config = {
        "architecture": "amd64", "os": "linux", "created": created,
        "config": {"Env": [ENV_PATH, "LANG=C.UTF-8"], "Cmd": ["/bin/sh"], "Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{sha256_file(rootfs)}"]},
        "history": [{"created": created, "created_by": "mmdebstrap (hermetic-bench images/base)"}],
    }
    return write_archive(out, json.dumps(config, sort_keys=True, separators=(",", ":")).encode(), tag, rootfs, 0, epoch)

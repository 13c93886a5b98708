"""What travels between the driver and a Ray node, content-addressed both ways.

A node must run a trial on exactly the inputs the driver resolved, and the driver must
write exactly the files the node recorded. So nothing is trusted for its name alone:

* to the node: the project (cases, fixtures, goldens, images/, pins and lock, skills) as
  one deterministic tar, any host file a trial names (a subject tarball, the CA bundle)
  inside it under ``files/<sha256>``, and the harness wheel beside it; each goes by the
  SHA-256 of its bytes, which the node recomputes before it unpacks or uses anything
  (``unpack``), and unpacks once per node into a folder named by that digest;
* back to the driver: every file of the trial folder, with the manifest the node's record
  phase wrote; the driver recomputes each file's SHA-256 against that manifest and refuses
  any file missing, extra or changed (``check_trial_files``) before it writes a byte under
  results/<label>/.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .errors import InfrastructureError
from .hashing import sha256_bytes
from .models import Manifest
from .paths import Project

PARTS = ("cases", "goldens", "images", "provenance", "skills")  # what a node needs of the project to run a trial
FILES = "files"  # host files shipped by digest: files/<sha256>
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Shipment:
    """The digests a node checks what it received against (the bytes travel as Ray objects beside it)."""

    bundle_sha256: str
    wheel_sha256: str
    wheel_name: str
    files: dict[str, str] = field(default_factory=dict)  # host path -> SHA-256 of its bytes, under files/ in the bundle


def pack_project(project: Project, host_files: list[Path]) -> tuple[bytes, dict[str, str]]:
    """The project's parts and the named host files as one deterministic tar; with host path -> digest."""
    buffer = io.BytesIO()
    digests: dict[str, str] = {}
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for part in PARTS:
            top = project.root / part
            if top.is_dir():
                for path in sorted([top, *top.rglob("*")], key=lambda p: p.relative_to(project.root).as_posix()):
                    _add(archive, path, path.relative_to(project.root).as_posix())
        for path in sorted(set(host_files)):
            data = path.read_bytes()
            digests[str(path)] = sha256_bytes(data)
            _add_bytes(archive, f"{FILES}/{digests[str(path)]}", data)
    return buffer.getvalue(), digests


def _add(archive: tarfile.TarFile, path: Path, name: str) -> None:
    """One entry, with nothing of the host in it (owner, times): the same tree gives the same bytes."""
    info = archive.gettarinfo(str(path), arcname=name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    if info.isfile():
        with open(path, "rb") as handle:
            archive.addfile(info, handle)
    elif info.isdir() or info.issym():
        archive.addfile(info)


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    archive.addfile(info, io.BytesIO(data))


def verified(data: bytes, expected: str, what: str) -> bytes:
    """``data`` when its SHA-256 is ``expected``; otherwise InfrastructureError naming both."""
    found = sha256_bytes(data)
    if found != expected:
        raise InfrastructureError(f"{what} arrived with SHA-256 {found}, the driver sent {expected}: refusing to use it")
    return data


def unpack(bundle: bytes, wheel: bytes, shipment: Shipment, cache: Path) -> tuple[Path, Path]:
    """The project root and the wheel on this node, unpacked once per digest; both verified first."""
    verified(bundle, shipment.bundle_sha256, "the project bundle")
    verified(wheel, shipment.wheel_sha256, "the harness wheel")
    root = cache / shipment.bundle_sha256
    if not (root / ".complete").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
        with tarfile.open(fileobj=io.BytesIO(bundle)) as archive:
            archive.extractall(staging, filter="tar")  # no absolute paths, no escaping links
        (staging / ".complete").write_text("")
        try:
            os.rename(staging, root)
        except OSError:  # another task on this node unpacked the same digest first
            pass
    wheel_path = cache / "wheels" / shipment.wheel_sha256 / shipment.wheel_name
    if not wheel_path.is_file():
        wheel_path.parent.mkdir(parents=True, exist_ok=True)
        partial = wheel_path.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(wheel)
        os.replace(partial, wheel_path)
    return root, wheel_path


def shipped_file(root: Path, shipment: Shipment, host_path: Path | None) -> Path | None:
    """Where a host file the driver named lies on this node (None stays None)."""
    if host_path is None:
        return None
    return root / FILES / shipment.files[str(host_path)]


def pack_trial(folder: Path) -> dict[str, bytes]:
    """Every file of a recorded trial folder, by its path inside the folder."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file() and not path.is_symlink()}


def check_trial_files(files: dict[str, bytes]) -> list[str]:
    """What is wrong with a trial's files against the manifest they came with; [] when every file matches."""
    if MANIFEST not in files:
        return ["manifest.json missing"]
    try:
        manifest = Manifest.model_validate_json(files[MANIFEST])
    except ValueError as exc:
        return [f"manifest.json unreadable: {exc}"]
    problems = [f"{name}: not a plain path inside the trial folder" for name in files if not _plain(name)]
    for name, digest in manifest.files.items():
        if name not in files:
            problems.append(f"{name}: in the manifest but not sent")
        elif sha256_bytes(files[name]) != digest:
            problems.append(f"{name}: SHA-256 differs from the node's manifest (changed in transit)")
    problems += [f"{name}: sent but not in the manifest" for name in sorted(set(files) - set(manifest.files) - {MANIFEST})]
    return problems


def _plain(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and name == path.as_posix()


def write_trial(folder: Path, files: dict[str, bytes]) -> None:
    """Write checked files under the trial folder, the manifest last (a crash leaves no false manifest)."""
    for name in sorted(files, key=lambda n: n == MANIFEST):
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[name])

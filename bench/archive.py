"""Locked images through files (docker save / load), for machines no registry reaches.

`bench images save DIR` writes one docker-archive per locked image, ``DIR/<name>.tar``,
named with the lock's tag, and ``DIR/bench-images.json``: each image's name, tag, ID
and the SHA-256 of its archive. `bench images load DIR` checks every archive's SHA-256
against that manifest and every manifest ID against this checkout's lock before it
loads anything, then checks the loaded image ID once more, and only then gives the
lock's tag. The lock, not the folder, is the authority: a folder saved from another
lock is refused, naming the image. A copy damaged or altered in transit is refused
naming the archive, so no run ever starts on bytes nobody locked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from pydantic import Field

from .engine import connect, engine_faults
from .errors import InfrastructureError, UsageError
from .hashing import sha256_file
from .lock import read_lock
from .models import SCHEMA_VERSION, LockEntry, Record
from .paths import Project
from .readback import read_record
from .registry import give_lock_tag, locked_image, selected

Log = Callable[[str], None]
MANIFEST = "bench-images.json"


class SavedImage(Record):
    name: str
    tag: str = Field(description="The lock's tag, also the name inside the archive.")
    id: str = Field(description="The image ID (sha256:...) the lock names.")
    file: str = Field(description="The archive, relative to the manifest's folder.")
    sha256: str = Field(description="Hex SHA-256 of the archive's bytes as saved.")


class SavedImages(Record):
    """DIR/bench-images.json, written by `bench images save` and checked by `bench images load DIR`."""

    schema_version: int = SCHEMA_VERSION
    images: list[SavedImage] = Field(default_factory=list)


def save(project: Project, folder: Path, names: list[str], log: Log) -> SavedImages:
    """`bench images save`: each locked image (all by default) to ``folder``, with the manifest."""
    entries = selected(project, read_lock(project), names)
    client = connect()
    images = [locked_image(client, entry) for entry in entries]  # all present before writing anything
    folder.mkdir(parents=True, exist_ok=True)
    saved = SavedImages()
    for entry, image in zip(entries, images):
        give_lock_tag(image, entry)  # the archive carries the lock's tag, so `docker load` alone names it too
        path = folder / f"{entry.name}.tar"
        log(f"saving {entry.name} to {path}")
        with engine_faults(f"saving image {entry.name}"), open(path, "wb") as handle:
            for chunk in client.images.get(entry.id).save(named=entry.tag):
                handle.write(chunk)
        saved.images.append(SavedImage(name=entry.name, tag=entry.tag, id=entry.id, file=path.name,
                                       sha256=sha256_file(path)))
    (folder / MANIFEST).write_text(saved.model_dump_json(indent=2) + "\n")
    return saved


def load_saved(project: Project, folder: Path, log: Log) -> list[LockEntry]:
    """`bench images load DIR`: verify every archive against the manifest and the lock, then load each."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise UsageError(f"{folder} has no {MANIFEST} — pass a folder written by `bench images save`")
    saved = read_record(manifest, SavedImages, f"save the images again (`bench images save {folder}`)")
    lock = read_lock(project)
    entries = [_checked(project, lock.images.get(item.name), folder, item) for item in saved.images]
    client = connect()
    for entry, item in zip(entries, saved.images):
        log(f"loading {entry.name} from {folder / item.file}")
        with engine_faults(f"loading {folder / item.file}"), open(folder / item.file, "rb") as handle:
            loaded = client.images.load(handle)
        if [image.id for image in loaded] != [entry.id]:
            raise InfrastructureError(f"{folder / item.file}: loaded {[image.id[:19] for image in loaded]}, "
                                      f"not the lock's {entry.name} {entry.id[:19]}; nothing was tagged")
        give_lock_tag(loaded[0], entry)
    return entries


def _checked(project: Project, entry: LockEntry | None, folder: Path, item: SavedImage) -> LockEntry:
    """The lock entry an archive must match; UsageError naming the archive when it is not what was saved."""
    path = folder / item.file
    if entry is None or entry.id != item.id:
        found = "has no entry for it" if entry is None else f"locks {entry.id[:19]}"
        raise UsageError(f"{path}: image {item.name} is {item.id[:19]} but {project.lock_file} {found} — "
                         "load a folder saved from this lock, or use the lock it was saved with")
    if Path(item.file).name != item.file or not path.is_file():
        raise UsageError(f"{folder / MANIFEST}: images.{item.name}.file {item.file!r} is not a file in {folder}")
    actual = sha256_file(path)
    if actual != item.sha256:
        raise UsageError(f"{path}: SHA-256 {actual[:16]}… differs from {MANIFEST}'s {item.sha256[:16]}… — the "
                         "archive was altered or damaged in transit; copy it again or save it again")
    return entry

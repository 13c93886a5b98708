"""A folder made outside bench, packed as the workspace tar an agent's export would be.

`bench grade CASE DIR` grades work a person, an IDE agent or another harness produced.
Everything in that folder is hostile input: links out of it, names no tool expects,
files too big to keep, FIFOs, device nodes. So:

* the folder is walked by directory handle (``os.fwalk``), which never descends
  through a link, not even one swapped in while it walks; each entry is opened with
  O_NOFOLLOW relative to its folder's handle and must still be what ``lstat`` said;
* a symlink is stored as a link with its target text and never read through, as
  Docker's archive of an agent's /workspace stores it; a FIFO is stored as a FIFO and
  never opened; a socket is left out, as Docker's archive leaves it out;
* a device node is refused: an agent's container cannot make one, and no grader gets one;
* the tar is bounded by the export budget while it is written, and a file is measured
  before it is read, so a huge (or sparse) file is refused without reading it.

What cannot be packed is the submission's FAIL, naming the path, exactly as an agent's
oversized export is: the folder is the submission's own doing, so it can never turn
into ERROR. The layout is Docker's archive of /workspace: a ``workspace/`` entry, then
every entry under it, owned by uid 1000. The top-level PROMPT.md is left out: `bench
setup` lays the task there, and an agent's exported workspace never holds its prompt.
"""

from __future__ import annotations

import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .agent_run import ExportOutcome
from .models import ArmSpec
from .sandbox import MiB

ROOT = "workspace"
UID = 1000
PROMPT = "PROMPT.md"  # what `bench setup` lays beside the work: the task, not the work
BLOCK = tarfile.BLOCKSIZE
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Submission:
    """One folder to grade as the workspace of one arm of a case (its agent: external)."""

    arm: ArmSpec
    folder: Path


class Unpackable(Exception):
    """Something in the folder that cannot be graded as it is: the submission's FAIL."""


class _Capped:
    """A write-only file that refuses to grow past ``limit`` bytes."""

    def __init__(self, handle: BinaryIO, limit: int) -> None:
        self.handle, self.limit, self.written = handle, limit, 0

    def write(self, data: bytes) -> int:
        self.room(len(data))
        self.written += len(data)
        return self.handle.write(data)

    def tell(self) -> int:
        return self.written

    def room(self, size: int) -> None:
        if self.written + size > self.limit:
            raise Unpackable(f"export budget: the submission passed {self.limit // MiB} MiB and was stopped there")


def pack_submission(folder: Path, to: Path, budget_mb: int) -> ExportOutcome:
    """``folder`` as workspace.tar at ``to``; past the budget or on anything unpackable, no tar and the reason."""
    try:
        with open(to, "wb") as handle:
            out = _Capped(handle, budget_mb * MiB)
            with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
                archive.addfile(_info(ROOT, tarfile.DIRTYPE, 0o755))
                _add_tree(archive, out, folder)
            return ExportOutcome(out.written)
    except Unpackable as exc:
        to.unlink(missing_ok=True)
        return ExportOutcome(0, str(exc))


def _add_tree(archive: tarfile.TarFile, out: _Capped, folder: Path) -> None:
    def refuse(error: OSError) -> None:
        raise Unpackable(f"submission: cannot read {_shown(folder, error.filename)}: {error.strerror}")

    for dirpath, dirnames, filenames, dirfd in os.fwalk(folder, onerror=refuse, follow_symlinks=False):
        dirnames.sort()  # fwalk descends in this order: the tar is the same for the same folder
        relative = os.path.relpath(dirpath, folder)
        for name in sorted(dirnames + filenames):
            inside = name if relative == "." else f"{relative}/{name}"
            if inside != PROMPT:
                _add_entry(archive, out, dirfd, name, inside)


def _add_entry(archive: tarfile.TarFile, out: _Capped, dirfd: int, name: str, inside: str) -> None:
    """One entry by its name in an open folder: never through a link, never a device."""
    try:
        found = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except OSError as exc:
        raise Unpackable(f"submission: cannot read {inside}: {exc.strerror}") from None
    mode, arcname = found.st_mode, f"{ROOT}/{inside}"
    if stat.S_ISREG(mode):
        _add_file(archive, out, dirfd, name, inside, found)
    elif stat.S_ISDIR(mode):
        archive.addfile(_info(arcname, tarfile.DIRTYPE, mode, found.st_mtime))
    elif stat.S_ISLNK(mode):
        link = _info(arcname, tarfile.SYMTYPE, 0o777, found.st_mtime)
        link.linkname = os.readlink(name, dir_fd=dirfd)
        archive.addfile(link)
    elif stat.S_ISFIFO(mode):
        archive.addfile(_info(arcname, tarfile.FIFOTYPE, mode, found.st_mtime))
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise Unpackable(f"submission: {inside} is a device file, which no workspace can hold — remove it")
    # a socket: left out, as Docker's archive of an agent's workspace leaves it out


def _add_file(archive: tarfile.TarFile, out: _Capped, dirfd: int, name: str, inside: str,
              found: os.stat_result) -> None:
    """A regular file, opened without following a link and checked to be the one lstat saw."""
    out.room(BLOCK + -(-found.st_size // BLOCK) * BLOCK)  # refused before a byte of it is read
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dirfd)
    except OSError as exc:
        raise Unpackable(f"submission: cannot read {inside}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
            raise Unpackable(f"submission: {inside} changed while it was packed — grade a folder nothing is writing to")
        info = _info(f"{ROOT}/{inside}", tarfile.REGTYPE, opened.st_mode, opened.st_mtime)
        info.size = opened.st_size
        try:
            archive.addfile(info, handle)
        except OSError as exc:  # it shrank while being read: tarfile would pad a lie
            raise Unpackable(f"submission: {inside} changed while it was packed ({exc})") from None


def _info(name: str, kind: bytes, mode: int, mtime: float = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, stat.S_IMODE(mode) & 0o777, int(mtime)
    info.uid = info.gid = UID
    info.uname = info.gname = ""
    return info


def _shown(folder: Path, filename: str | None) -> str:
    """A path the user recognises: relative to the submission folder when it is under it."""
    if not filename:
        return str(folder)
    try:
        return Path(filename).relative_to(folder).as_posix() or "."
    except ValueError:
        return filename

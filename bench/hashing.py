"""Content hashes: the identity of everything a result depends on.

A tree's digest covers relative paths, file modes (permission bits and type), file
bytes and symlink targets, in sorted order, and nothing else: not timestamps, not
owners, not the directory it sits in. So the same case checked out anywhere hashes
the same, and any changed byte, mode or link changes the digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
from pathlib import Path
from typing import IO, Iterable

CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def walk(root: Path) -> Iterable[Path]:
    """Every entry under root, sorted, never following symlinks."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            yield base / name


def tree_entries(root: Path) -> Iterable[tuple[str, str]]:
    """(relative path, entry digest) for every file, dir and link under root."""
    for path in walk(root):
        rel = path.relative_to(root).as_posix()
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            yield rel, f"l {os.readlink(path)}"
        elif stat.S_ISDIR(info.st_mode):
            yield rel, f"d {mode:o}"
        elif stat.S_ISREG(info.st_mode):
            yield rel, f"f {mode & 0o111 and 755 or 644} {sha256_file(path)}"


def tree_digest(root: Path) -> str:
    """Digest of a directory tree (see module docstring); an absent tree hashes as empty.

    File modes are reduced to executable or not, as git does, so a checkout's umask
    does not change a case's identity.
    """
    digest = hashlib.sha256()
    if root.exists():
        for rel, entry in tree_entries(root):
            digest.update(f"{rel}\0{entry}\n".encode())
    return "sha256:" + digest.hexdigest()


def short_tag(digest: str) -> str:
    """The first 16 hex digits of a digest ("sha256:..." or bare hex): the one rule for image tags.

    64 bits keep tags readable and make an accidental collision between two build
    inputs negligible; every tag the harness derives from a digest uses this length.
    """
    hex_part = digest.split(":", 1)[1] if ":" in digest else digest
    if len(hex_part) < 16 or any(c not in "0123456789abcdef" for c in hex_part[:16].lower()):
        raise ValueError(f"{digest!r} is not a SHA-256 digest (sha256:<hex> or <hex>)")
    return hex_part[:16]


def combine(parts: dict[str, str]) -> str:
    """One digest from named digests, order-independent."""
    digest = hashlib.sha256()
    for name in sorted(parts):
        digest.update(f"{name}={parts[name]}\n".encode())
    return "sha256:" + digest.hexdigest()


def filesystem_digest(
    stream: IO[bytes], exclude: tuple[str, ...], capture: tuple[str, ...] = ()
) -> tuple[str, dict[str, str], dict[str, bytes]]:
    """Normalized digest of a container filesystem exported as a tar stream.

    Returns the digest, the per-path entries (so two images can be diffed path by
    path) and the bytes of the files named in ``capture`` (package manifests). Paths
    under any prefix in ``exclude`` (logs, caches) are left out, because they change
    on every build without changing what the image does.
    """
    entries: dict[str, str] = {}
    captured: dict[str, bytes] = {}
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            path = member.name.removeprefix("./").lstrip("/")
            if not path or any(path == p or path.startswith(p + "/") for p in exclude):
                continue
            if path in capture and member.isfile():
                captured[path] = archive.extractfile(member).read()
                entries[path] = f"f {member.mode & 0o7777:o} {sha256_bytes(captured[path])}"
                continue
            entries[path] = _member_entry(archive, member)
    digest = hashlib.sha256()
    for path in sorted(entries):
        digest.update(f"{path}\0{entries[path]}\n".encode())
    return "sha256:" + digest.hexdigest(), entries, captured


def _member_entry(archive: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    mode = f"{member.mode & 0o7777:o}"
    if member.issym():
        return f"l {member.linkname}"
    if member.islnk():
        return f"h {member.linkname.removeprefix('./')}"
    if member.isdir():
        return f"d {mode}"
    if member.isfile():
        digest = hashlib.sha256()
        handle = archive.extractfile(member)
        if handle is not None:
            for block in iter(lambda: handle.read(CHUNK), b""):
                digest.update(block)
        return f"f {mode} {digest.hexdigest()}"
    return f"o {mode} {member.type!r}"

"""Write a container's changes as one deterministic image layer, and the image around it.

Docker's own commit stamps the time and writes entries in whatever order the
filesystem returns them, so two builds of the same files get two image IDs. Here the
layer holds exactly the paths `docker diff` names (less the volatile ones), sorted,
with mtimes clamped to SOURCE_DATE_EPOCH, no user or group names and only xattrs kept
from the pax headers; a hard-link group is always written as its smallest name plus
links to it. The config is written by hand with a fixed creation time. The same files
therefore give the same layer digest and the same image ID on any machine.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import IO, Iterable

from .errors import InfrastructureError
from .hashing import sha256_file

CHANGED, ADDED, DELETED = 0, 1, 2
CONFIG_KEYS = ("Env", "Cmd", "Entrypoint", "User", "WorkingDir", "ExposedPorts", "Volumes", "StopSignal", "Shell")


@dataclass
class Selection:
    """Which paths of a container's filesystem go into the layer, from `docker diff`."""

    keep: set[str] = field(default_factory=set)
    deleted: list[str] = field(default_factory=list)


def select(changes: Iterable[dict], skip: Iterable[str]) -> Selection:
    """The changed and added paths outside ``skip`` (path prefixes), and the top-most deletions."""
    prefixes = tuple(p.strip("/") for p in skip)
    skipped = lambda path: any(path == p or path.startswith(p + "/") for p in prefixes)
    selection = Selection()
    gone = set()
    for change in changes:
        path = change["Path"].strip("/")
        if not path or skipped(path):
            continue
        if change["Kind"] == DELETED:
            gone.add(path)
        else:
            selection.keep.add(path)
    selection.deleted = sorted(p for p in gone if not any(str(a) in gone for a in PurePosixPath(p).parents))
    return selection


def write_layer(export: IO[bytes], selection: Selection, out: Path, epoch: int) -> str:
    """Write the selected entries of a `docker export` stream to ``out``; returns the layer's diff ID."""
    members: dict[str, tarfile.TarInfo] = {}
    with tempfile.TemporaryFile(prefix="bench-layer-") as spool:
        offsets: dict[str, tuple[int, int]] = {}
        with tarfile.open(fileobj=export, mode="r|") as stream:
            for member in stream:
                name = member.name.strip("/")
                if name not in selection.keep:
                    continue
                members[name] = member
                if member.isreg():
                    offsets[name] = (spool.tell(), member.size)
                    _copy(stream.extractfile(member), spool)
        missing = selection.keep - members.keys()
        if missing:
            raise InfrastructureError(f"docker export lacks paths docker diff named: {sorted(missing)[:5]}")
        links = _link_groups(members)
        with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as layer:
            for name in sorted(members):
                _add(layer, name, members[name], links, offsets, spool, epoch)
            for path in selection.deleted:
                gone = PurePosixPath(path)
                _add_bytes(layer, str(gone.with_name(f".wh.{gone.name}")), b"", epoch)
    return "sha256:" + sha256_file(out)


def _copy(source: IO[bytes] | None, target: IO[bytes]) -> None:
    while source is not None and (chunk := source.read(1 << 20)):
        target.write(chunk)


def _link_groups(members: dict[str, tarfile.TarInfo]) -> dict[str, str]:
    """Each member of a hard-link group -> the group's smallest name, which carries the bytes."""
    groups: dict[str, list[str]] = {}
    for name, member in members.items():
        if member.islnk():
            target = member.linkname.strip("/")
            if target not in members:
                raise InfrastructureError(f"{name} is a hard link to {target}, which the layer does not hold")
            groups.setdefault(target, [target]).append(name)
    return {name: min(group) for group in groups.values() for name in group}


def _add(layer: tarfile.TarFile, name: str, member: tarfile.TarInfo, links: dict[str, str],
         offsets: dict[str, tuple[int, int]], spool: IO[bytes], epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.mode, info.uid, info.gid, info.type = member.mode, member.uid, member.gid, member.type
    info.mtime = min(int(member.mtime), epoch)
    info.linkname, info.devmajor, info.devminor = member.linkname, member.devmajor, member.devminor
    info.pax_headers = {k: v for k, v in sorted(member.pax_headers.items()) if k.startswith("SCHILY.xattr.")}
    carrier = links.get(name)
    if carrier is not None and carrier != name:
        info.type, info.linkname, info.size = tarfile.LNKTYPE, carrier, 0
        layer.addfile(info)
        return
    if carrier == name or member.isreg():
        source = name if member.isreg() else member.linkname.strip("/")
        start, size = offsets[source]
        info.type, info.linkname, info.size = tarfile.REGTYPE, "", size
        spool.seek(start)
        layer.addfile(info, _Window(spool, size))
        return
    layer.addfile(info)


class ChunkReader(io.RawIOBase):
    """A file-like view of a chunk iterator, so tarfile can stream `docker export`."""

    def __init__(self, chunks) -> None:
        self._chunks, self._buffer = iter(chunks), b""

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        while not self._buffer:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(target), len(self._buffer))
        target[:size], self._buffer = self._buffer[:size], self._buffer[size:]
        return size



class _Window(io.RawIOBase):
    """``size`` bytes of the spool from its current position."""

    def __init__(self, handle: IO[bytes], size: int) -> None:
        self.handle, self.left = handle, size

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        data = self.handle.read(size)
        self.left -= len(data)
        return data


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes, epoch: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), epoch, 0o644
    archive.addfile(info, io.BytesIO(data))


def iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def derived_config(parent: dict, diff_id: str, epoch: int, env: dict[str, str], labels: dict[str, str],
                   created_by: str) -> bytes:
    """The image config of parent + one layer, canonical JSON: its SHA-256 is the image ID."""
    settings = {key: parent["Config"][key] for key in CONFIG_KEYS if parent["Config"].get(key)}
    inherited = dict(item.split("=", 1) for item in settings.get("Env", []))
    settings["Env"] = [f"{k}={v}" for k, v in {**inherited, **env}.items()]
    settings["Labels"] = {**(parent["Config"].get("Labels") or {}), **labels}
    config = {
        "architecture": parent.get("Architecture", "amd64"), "os": parent.get("Os", "linux"),
        "created": iso(epoch), "config": settings,
        "rootfs": {"type": "layers", "diff_ids": [*parent["RootFS"]["Layers"], diff_id]},
        "history": [{"created": iso(epoch), "created_by": created_by}],
    }
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def write_archive(out: Path, config: bytes, tag: str, layer: Path, parent_layers: int, epoch: int) -> str:
    """A `docker load` archive holding only the new layer: the parent's layers are on the engine already.

    Returns the image ID (the config's SHA-256).
    """
    image_id = hashlib.sha256(config).hexdigest()
    diff_ids = json.loads(config)["rootfs"]["diff_ids"]
    paths = [f"{d.split(':')[1]}/layer.tar" for d in diff_ids]
    manifest = [{"Config": f"{image_id}.json", "RepoTags": [tag], "Layers": paths}]
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as archive:
        _add_bytes(archive, f"{image_id}.json", config, epoch)
        _add_bytes(archive, "manifest.json", json.dumps(manifest).encode(), epoch)
        info = archive.gettarinfo(str(layer), arcname=paths[parent_layers])
        info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "", ""
        with open(layer, "rb") as handle:
            archive.addfile(info, handle)
    return f"sha256:{image_id}"

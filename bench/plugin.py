"""Plugin arms: a plugin checkout under test, packed once per run and handed to the agent read-only.

``--arm base=plugin:../allium-plugin --arm cand=plugin:../allium-cand`` trials two
checkouts of a plugin (the Allium skills, any Claude Code plugin) side by side, the
way a user installs one: Claude Code gets ``--plugin-dir``. Why pack rather than
mount the checkout: it is read once, into a deterministic tar (sorted, root-owned, no
write bits, no timestamps, ``.git`` left out, links kept as links and never followed),
so every trial of the arm gets the very bytes whose SHA-256 its provenance records,
even if the checkout is edited while the run goes on; and a resume or a comparison
tells a changed checkout by that hash alone.

In the agent's container the tar is laid at PLUGIN_DIR, root-owned and read-only, so
the agent under test cannot edit the plugin it is judged with; every agent finds it
in ``$BENCH_PLUGIN_DIR``.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from .errors import UsageError
from .harness import git_state
from .hashing import sha256_bytes, walk
from .models import ArmSpec, PluginRecord
from .sandbox import ROOT, Sandbox, dir_tar

PLUGIN_DIR = "/opt/bench/plugin"
ENV = "BENCH_PLUGIN_DIR"
MAX_BYTES = 64 << 20
PREFIX = "plugin"  # members are plugin/<path>, as npm's are package/<path>


@dataclass(frozen=True)
class Plugin:
    record: PluginRecord
    tar: bytes = field(repr=False)


def pack(checkout: str | Path) -> Plugin:
    """The checkout as a deterministic tar, described; a missing, special or oversized tree is a UsageError."""
    root = Path(checkout).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"plugin {checkout}: not a folder — `plugin:` takes the path of a plugin checkout")
    data, files = pack_tree(root, PREFIX, "plugin")
    sha, dirty = git_state(root, (".",))
    record = PluginRecord(origin=str(root), tarball_sha256=sha256_bytes(data), files=files, source_sha=sha,
                          dirty=dirty if sha else None)
    return Plugin(record, data)


def pack_tree(root: Path, prefix: str, what: str) -> tuple[bytes, int]:
    """``root`` as a deterministic tar under ``prefix``/ (root-owned, read-only, no times, .git left out, links kept):
    the bytes and the number of regular files. Shared by plugins and skills (bench/skills.py)."""
    buffer, files = io.BytesIO(), 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(_info(prefix, tarfile.DIRTYPE, 0o555))
        for path in walk(root):
            rel = path.relative_to(root)
            if ".git" in rel.parts:
                continue
            files += _add(archive, path, f"{prefix}/{rel.as_posix()}")
            if buffer.tell() > MAX_BYTES:
                raise UsageError(f"{what} {root}: more than {MAX_BYTES >> 20} MiB — point it at the {what}'s own "
                                 "folder, not a tree holding build outputs")
    return buffer.getvalue(), files


def _add(archive: tarfile.TarFile, path: Path, name: str) -> int:
    """One entry, owner and time stripped, write bits dropped; 1 when it is a regular file."""
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        info = _info(name, tarfile.SYMTYPE, 0o777)
        info.linkname = os.readlink(path)
        archive.addfile(info)
    elif stat.S_ISDIR(mode):
        archive.addfile(_info(name, tarfile.DIRTYPE, 0o555))
    elif stat.S_ISREG(mode):
        info = _info(name, tarfile.REGTYPE, 0o555 if mode & 0o111 else 0o444)
        info.size = path.stat().st_size
        with open(path, "rb") as handle:
            archive.addfile(info, handle)
        return 1
    else:
        raise UsageError(f"plugin file {path} is neither a file, a folder nor a link (a socket or FIFO?) — remove it")
    return 0


def _info(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid, info.mtime, info.uname, info.gname = kind, mode, ROOT, ROOT, 0, "", ""
    return info


def pack_arms(arms: Iterable[ArmSpec]) -> dict[str, Plugin]:
    """Arm name -> its plugin, each checkout packed once however many cases and trials use it."""
    packed: dict[str, Plugin] = {}
    for arm in arms:
        if arm.plugin and arm.name not in packed:
            packed[arm.name] = pack(arm.plugin)
    return packed


def env(plugin: Plugin | None) -> dict[str, str]:
    return {ENV: PLUGIN_DIR} if plugin else {}


def lay(box: Sandbox, plugin: Plugin) -> None:
    """Put the plugin at PLUGIN_DIR of a created container: root-owned, nothing writable."""
    parent = PLUGIN_DIR.rsplit("/", 1)[0]
    box.put(dir_tar(parent.lstrip("/"), uid=ROOT, read_only=True))
    box.put(plugin.tar, at=parent)

"""Remove every credential handed to an agent from every file a trial records.

Why here, once: the agent may print its key, write it into the workspace, or a CLI
may echo it in an error; rather than trust each producer, the trial's record step
passes its whole folder through ``redact_tree`` before the manifest is hashed.
Each value becomes ``[REDACTED:NAME]``, naming the variable so a reader knows what
was there.

Archives: a tar (the exported workspace) is rewritten member by member, so sizes
and headers stay valid and the grader's view of names and contents is preserved
apart from the marker. Whatever still holds a value after that (a value inside a
tar header, a file that is not a valid tar) is string-replaced in its raw bytes: the
guarantee is that no recorded byte sequence equals a credential, even at the cost
of a damaged archive. Values inside compressed files (``.gz``, ``.zip`` members) cannot
be seen and are not redacted; an agent that compresses its key defeats this.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def replacements(secrets: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """(needle, marker) pairs, longest first so one value inside another goes cleanly.

    Each value is matched raw and as it appears inside a JSON string, since transcripts
    and records are JSON.
    """
    pairs: dict[bytes, bytes] = {}
    for name, value in secrets.items():
        if not value:
            continue
        for form in {value, json.dumps(value)[1:-1]}:
            pairs[form.encode()] = marker(name).encode()
    return sorted(pairs.items(), key=lambda pair: -len(pair[0]))


def redact_bytes(data: bytes, pairs: list[tuple[bytes, bytes]]) -> bytes:
    for needle, replacement in pairs:
        if needle in data:
            data = data.replace(needle, replacement)
    return data


def contains(data: bytes, pairs: list[tuple[bytes, bytes]]) -> bool:
    return any(needle in data for needle, _ in pairs)


def redact_tree(root: Path, secrets: dict[str, str]) -> list[Path]:
    """Redact every regular file under root in place; returns the files changed."""
    pairs = replacements(secrets)
    if not pairs:
        return []
    changed = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if redact_file(path, pairs):
            changed.append(path)
    return changed


def redact_file(path: Path, pairs: list[tuple[bytes, bytes]]) -> bool:
    data = path.read_bytes()
    if not contains(data, pairs):
        return False
    if path.suffix == ".tar":
        data = _redacted_tar(data, pairs)
    if contains(data, pairs):
        data = redact_bytes(data, pairs)
    _replace(path, data)
    return True


def _redacted_tar(data: bytes, pairs: list[tuple[bytes, bytes]]) -> bytes:
    """The tar rewritten with redacted names, link targets, PAX headers and contents."""
    try:
        source = tarfile.open(fileobj=io.BytesIO(data), mode="r:")
        out = io.BytesIO()
        with source, tarfile.open(fileobj=out, mode="w", format=source.format) as target:
            for member in source:
                _copy_member(source, target, member, pairs)
        return out.getvalue()
    except tarfile.TarError:
        return data  # not a tar after all: the raw replacement below covers it


def _copy_member(source: tarfile.TarFile, target: tarfile.TarFile, member: tarfile.TarInfo,
                 pairs: list[tuple[bytes, bytes]]) -> None:
    text = lambda value: redact_bytes(value.encode("utf-8", "surrogateescape"), pairs).decode("utf-8", "surrogateescape")
    member.name, member.linkname = text(member.name), text(member.linkname)
    member.pax_headers = {key: text(value) for key, value in member.pax_headers.items()}
    if not member.isreg():
        target.addfile(member)
        return
    content = redact_bytes(source.extractfile(member).read(), pairs)
    member.size = len(content)
    target.addfile(member, io.BytesIO(content))


def _replace(path: Path, data: bytes) -> None:
    """Write beside and rename, so a crash never leaves a half-redacted file."""
    temporary = path.with_name(f".{path.name}.redacting")
    temporary.write_bytes(data)
    os.replace(temporary, path)

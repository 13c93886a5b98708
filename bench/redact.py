"""Remove every credential handed to an agent from every file a trial records.

Why here, once: the agent may print its key, write it into the workspace, or a CLI
may echo it in an error; rather than trust each producer, the trial's record step
passes its whole folder through ``redact_tree`` before the manifest is hashed.
Each value becomes ``[REDACTED:NAME]``, naming the variable so a reader knows what
was there.

What is seen, because an agent holding a key can smuggle it out in any of these
(contents, file and folder names, symlink targets, tar member names and link targets):
- the value raw, reversed, and character by character as a JSON escape (``\\"``,
  ``\\u0073`` in either hex case, behind up to 8 backslashes for JSON nested in JSON)
  or a URL escape (``%73``, every byte or only some, as ``urllib.parse.quote`` leaves it);
- the value interrupted between any two characters by up to 16 line breaks or ANSI
  escape sequences (``\\r\\n``, ``\\x1b[31m``), raw or JSON-escaped: printed 10 chars a
  line, coloured, or one character per line;
- hex (either case), base64 (standard or URL-safe, the value at any offset mod 3:
  the stable middle of the encoding, the characters fixed by the value alone, is
  what is replaced, line-wrapped too), and UTF-16 LE/BE (replaced by the marker in
  the same encoding, so the text stays readable).
One regex per trial matches all of these; it is built from escaped literals and
bounded repetitions with few ambiguous branches, so it runs in time linear in the
file. Files are streamed in chunks that overlap by the longest possible match (the
bounds above make it finite), so a transcript of any size is redacted in a few chunks
of memory; a tar member is redacted into a temporary file that spills to disk.

What is not seen, and is accepted: compressed content (``.gz``, ``.zip``, ``.xz`` files
or members: nothing is decompressed), encrypted content, and any other encoding or
cipher (rot13, XOR, base32, hex split by spaces as ``xxd`` prints it, base64 of an
already-encoded form, separators other than the ones above or more than 16 in one
place, a value split across two files or tar members). An agent that transforms its
key that way defeats redaction; the proxy that keeps model keys out of the container
entirely is the real defence for those.

Archives: a tar (the exported workspace) is rewritten member by member, so sizes
and headers stay valid and the grader's view of names and contents is preserved
apart from the marker. Whatever still matches after that (a value inside a tar
header, a file that is not a valid tar) is replaced in its raw bytes: the guarantee
is that no recorded byte sequence holds a credential in a seen form, even at the
cost of a damaged archive.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tarfile
import tempfile
from pathlib import Path
from typing import BinaryIO

CHUNK = 4 << 20  # bytes read at a time; memory stays a few chunks whatever the file size
MAX_GAPS = 16  # interruptions (line breaks, ANSI sequences) seen between two characters
MAX_BACKSLASHES = 8  # escape depth seen for JSON nested in JSON
NAME_MAX = 255  # bytes in one file name on every filesystem we record to

_SLASHES = rb"\\\\{0,%d}" % (MAX_BACKSLASHES - 1)  # a literal first: the regex engine skips on it
_CSI = rb"\[[0-?]{0,16}[ -/]{0,2}[@-~]"  # an ANSI control sequence after its ESC
_GAP = (rb"(?:\r?\n|%(s)sr%(s)sn|%(s)sn|\x1b%(c)s|%(s)s(?:u001[bB]|x1[bB]|033|e)%(c)s)"
        % {b"s": _SLASHES, b"c": _CSI})
_GAP_WIDTH = MAX_BACKSLASHES + len("u001b[") + 16 + 2 + 1  # the widest interruption, a JSON-escaped CSI

Alternative = tuple[bytes, int]  # a regex and the most bytes it can match
Unit = list[Alternative]  # one character of a form, in any of its spellings


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def _literal(data: bytes) -> Alternative:
    return re.escape(data), len(data)


def _hexish(text: str) -> Alternative:
    """Text whose hex digits may be in either case (``\\u00e9``, ``%C3``, hex dumps)."""
    pattern = b"".join(b"[%s%s]" % (c.lower().encode(), c.upper().encode()) if c in "abcdefABCDEF"
                       else re.escape(c.encode()) for c in text)
    return pattern, len(text)


def _escape(text: str) -> Alternative:
    """A JSON escape, whose backslash may be doubled by each level of nesting."""
    pattern, width = _hexish(text[1:]) if text[1:2] == "u" else _literal(text[1:].encode())
    return _SLASHES + pattern, MAX_BACKSLASHES + width


def _char_units(value: str) -> list[Unit]:
    """Each character raw, JSON-escaped, \\u-escaped or percent-encoded, so mixes match too."""
    units = []
    for char in value:
        raw = char.encode()
        unit = {_literal(raw), _hexish("".join(f"%{byte:02x}" for byte in raw))}
        for escaped in {json.dumps(char)[1:-1], json.dumps(char, ensure_ascii=False)[1:-1],
                        f"\\u{ord(char):04x}" if ord(char) < 0x10000 else ""}:
            if escaped.startswith("\\"):
                unit.add(_escape(escaped))
        unit |= {_escape("\\/")} if char == "/" else {_literal(b"+")} if char == " " else set()
        unit |= {_literal(b"\r\n"), _escape("\\r\\n")} if char == "\n" else set()  # a PEM key saved on Windows
        units.append(list(unit))
    return units


def base64_middles(raw: bytes) -> list[str]:
    """The base64 characters fixed by ``raw`` alone, for each offset mod 3 it may sit at.

    At offset k the first characters mix bits of whatever precedes the value and the
    last ones bits of what follows; the ones between depend only on the value.
    """
    middles = []
    for shift in range(3):
        encoded = base64.b64encode(bytes(shift) + raw).decode()
        middles.append(encoded[-(-8 * shift // 6):8 * (shift + len(raw)) // 6])
    return middles


def _base64_units(text: str) -> list[Unit]:
    spellings = {"+": ["+", "-"], "/": ["/", "_"], "-": ["+", "-"], "_": ["/", "_"]}
    units = [[_literal(s.encode()) for s in spellings.get(char, [char])] for char in text]
    for unit in units:
        if _literal(b"/") in unit:
            unit.append(_escape("\\/"))
    return units


def _form(units: list[Unit], gap: Alternative = (b"", 0)) -> Alternative:
    """The units in order, with ``gap`` (a run of interruptions) between two of them."""
    pattern, width = [], 0
    for unit in units:
        pattern.append(b"(?:%s)" % b"|".join(regex for regex, _ in sorted(unit, key=lambda a: a[1])))
        width += max(size for _, size in unit) + gap[1]
    return gap[0].join(pattern), width


def _gap(value: str) -> Alternative:
    """Up to MAX_GAPS interruptions, possessive (never given back) where that is safe.

    Possessive keeps matching linear, and is safe when no spelling of a character of
    the value begins like an interruption: the value has no line break, ESC or
    backslash. Such a rare value gets the plain greedy run instead.
    """
    possessive = b"" if any(c in value for c in "\r\n\x1b\\") else b"+"
    return b"(?:%s){0,%d}%s" % (_GAP, MAX_GAPS, possessive), MAX_GAPS * _GAP_WIDTH


def _forms(value: str, name: str) -> list[tuple[Alternative, bytes]]:
    """Every seen form of one value, each with the marker that replaces it."""
    raw, label, gap = value.encode(), marker(name).encode(), _gap(value)
    forms = [(_form(_char_units(value), gap), label), (_form(_char_units(value[::-1]), gap), label),
             (_form([[_hexish(c)] for c in raw.hex()], gap), label)]
    forms += [(_form(_base64_units(middle), gap), label) for middle in base64_middles(raw)]
    for codec in ("utf-16-le", "utf-16-be"):
        forms.append((_form([[_literal(c.encode(codec))] for c in value]), marker(name).encode(codec)))
    return forms


class Redactor:
    """All of a trial's secrets in all seen forms, as one regex applied in one pass.

    Longer values come first, so a value that contains another is replaced whole.
    The combined regex has no capturing groups, because a group in front of each
    form stops the engine from skipping a form on its first byte (4x slower); the
    rare match is then told apart by which form matches it whole.
    """

    def __init__(self, secrets: dict[str, str]):
        forms = [form for name, value in sorted(secrets.items(), key=lambda item: -len(item[1]))
                 if value for form in _forms(value, name)]
        self.forms = [(re.compile(regex), label) for (regex, _), label in forms]
        self.reach = max((width for (_, width), _ in forms), default=0)
        self.regex = re.compile(b"|".join(regex for (regex, _), _ in forms)) if forms else None

    def _marker(self, match: re.Match) -> bytes:
        """The marker of the first form that matches whole; the combined regex tried them in that order."""
        return next((label for regex, label in self.forms if regex.fullmatch(match.group())), self.forms[0][1])

    def __bool__(self) -> bool:
        return self.regex is not None

    def bytes(self, data: bytes) -> bytes:
        return self.regex.sub(self._marker, data)

    def text(self, value: str) -> str:
        """A name or header: redacted as its bytes, undecodable bytes kept as they were."""
        return self.bytes(value.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")

    def stream(self, source: BinaryIO, target: BinaryIO | None) -> bool:
        """Copy source to target redacted, a chunk at a time; True when anything was replaced.
        Without a target, only say whether anything would be, stopping at the first match.

        A match may straddle two chunks, so the last ``reach`` bytes (the longest
        possible match) are held back and searched again with the next chunk; a match
        that starts before them is complete, since it cannot be longer than reach.
        """
        changed, carry = False, b""
        while True:
            chunk = source.read(CHUNK)
            buffer = carry + chunk
            safe = len(buffer) if not chunk else max(0, len(buffer) - self.reach)
            written = 0
            for match in self.regex.finditer(buffer):
                if match.start() >= safe:
                    break
                if target is None:
                    return True
                target.write(buffer[written:match.start()] + self._marker(match))
                written, changed = match.end(), True
            keep = max(written, safe)
            if target is not None:
                target.write(buffer[written:keep])
            carry = buffer[keep:]
            if not chunk:
                return changed


def redact_tree(root: Path, secrets: dict[str, str]) -> list[Path]:
    """Redact every name and regular file under root in place; returns the paths changed.

    Top-down, renaming a folder before entering it, so every returned path is final.
    """
    redactor = Redactor(secrets)
    if not redactor:
        return []
    changed: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        here = Path(folder)
        dirnames[:] = [_rename(here, name, redactor, changed) for name in sorted(dirnames)]
        for name in sorted(filenames):
            path = here / _rename(here, name, redactor, changed)
            if _redact_entry(path, redactor) and path not in changed:
                changed.append(path)
        for name in dirnames:
            if _redact_entry(here / name, redactor) and here / name not in changed:
                changed.append(here / name)
    return changed


def _rename(folder: Path, name: str, redactor: Redactor, changed: list[Path]) -> str:
    """The entry renamed with its secrets replaced; a numbered name if that one is taken."""
    new = redactor.text(name)
    if new == name:
        return name
    new = os.fsdecode(os.fsencode(new)[:NAME_MAX - 8])  # the marker may be longer than the value
    candidate, number = new, 0
    while os.path.lexists(folder / candidate):
        number += 1
        candidate = f"{new}.{number}"
    os.rename(folder / name, folder / candidate)
    changed.append(folder / candidate)
    return candidate


def _redact_entry(path: Path, redactor: Redactor) -> bool:
    """A symlink gets its target redacted; a regular file its contents; anything else is left."""
    if path.is_symlink():
        target = os.readlink(path)
        if redactor.text(target) == target:
            return False
        temporary = path.with_name(f".{path.name}.redacting")
        os.symlink(redactor.text(target), temporary)
        os.replace(temporary, path)
        return True
    if not path.is_file():
        return False
    tar_changed = path.suffix == ".tar" and _redact_tar(path, redactor)
    with path.open("rb") as source:  # read first: most files hold nothing, and need no copy
        if not redactor.stream(source, None):
            return tar_changed
    return _rewrite(path, redactor.stream)


def _rewrite(path: Path, write) -> bool:
    """Write beside and rename, so a crash never leaves a half-redacted file.

    ``write(source, target)`` says whether it changed anything; when not, the copy is
    dropped and the file (its inode and times) is left untouched.
    """
    temporary = path.with_name(f".{path.name}.redacting")
    try:
        with path.open("rb") as source, temporary.open("wb") as target:
            changed = write(source, target)
        if changed:
            os.replace(temporary, path)
        return changed
    finally:
        temporary.unlink(missing_ok=True)


def _redact_tar(path: Path, redactor: Redactor) -> bool:
    """The tar rewritten with redacted names, link targets, PAX headers and contents."""
    def write(source: BinaryIO, target: BinaryIO) -> bool:
        with tarfile.open(fileobj=source, mode="r:") as archive:
            # ustar cannot hold a name grown by the marker; pax holds any name
            layout = tarfile.PAX_FORMAT if archive.format == tarfile.USTAR_FORMAT else archive.format
            with tarfile.open(fileobj=target, mode="w", format=layout) as out:
                return any([_copy_member(archive, out, member, redactor) for member in archive])
    try:
        return _rewrite(path, write)
    except tarfile.TarError:
        return False  # not a tar after all: the raw pass covers it


def _copy_member(source: tarfile.TarFile, target: tarfile.TarFile, member: tarfile.TarInfo,
                 redactor: Redactor) -> bool:
    """One member copied with secrets out of its header and contents; True when any was in."""
    header = (member.name, member.linkname, member.uname, member.gname, member.pax_headers)
    member.name, member.linkname = redactor.text(member.name), redactor.text(member.linkname)
    member.uname, member.gname = redactor.text(member.uname), redactor.text(member.gname)
    member.pax_headers = {key: redactor.text(value) for key, value in member.pax_headers.items()}
    changed = header != (member.name, member.linkname, member.uname, member.gname, member.pax_headers)
    if not member.isreg():
        target.addfile(member)
        return changed
    # a member may be as large as the export budget: spill to disk rather than hold it
    with tempfile.SpooledTemporaryFile(CHUNK) as content:
        changed = redactor.stream(source.extractfile(member), content) or changed
        member.size = content.tell()
        content.seek(0)
        target.addfile(member, content)
    return changed

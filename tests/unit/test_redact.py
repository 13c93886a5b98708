"""Redaction against an agent that smuggles its key out: encodings, names, archives, size.

Every check reads the recorded bytes with a decoder written here, independent of
bench/redact.py, and first proves that decoder finds the planted value before
redaction, so no test passes because its own check is blind.
"""

import base64
import io
import json
import os
import re
import tarfile
import time
import urllib.parse

import pytest

import bench.redact
from bench.redact import Redactor, marker, redact_tree

PLAIN = "sk-ant-test-PLANTED-0123456789abcdef"
SPECIAL = 'sk-ant-test-PLANTED/"quote" +0123=4567?89&~>'  # needs escaping, quoting, base64 +/
SECRETS = {"API_KEY": PLAIN, "SPECIAL_KEY": SPECIAL}
WINDOW = 8  # the shortest credential accepted: any 8 characters of a value count as a leak

_INTERRUPTION = re.compile(rb"\r|\n|\\+[rn]|(?:\x1b|\\+u001[bB])\[[0-?]*[ -/]*[@-~]")


def readings(data: bytes) -> list[bytes]:
    """Every way a reader could decode data: stripped of line breaks and colours, unescaped,
    reversed, percent-, hex-, base64- and UTF-16-decoded."""
    flat = _INTERRUPTION.sub(b"", data)
    text = re.sub(rb"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)).encode(), flat)
    text = re.sub(rb'\\+(["\\/])', rb"\1", text)
    found = [data, flat, text, text[::-1], urllib.parse.unquote_to_bytes(text),
             urllib.parse.unquote_to_bytes(text.replace(b"+", b" "))]
    for run in re.findall(rb"[0-9a-fA-F]{16,}", flat):
        found += [bytes.fromhex(run[start:].decode()[:(len(run) - start) // 2 * 2]) for start in (0, 1)]
    for run in re.findall(rb"[A-Za-z0-9+/_-]{11,}", flat):
        standard = run.translate(bytes.maketrans(b"-_", b"+/"))
        found += [base64.b64decode(standard[start:][:(len(run) - start) // 4 * 4]) for start in range(4)]
    for codec in ("utf-16-le", "utf-16-be"):
        found += [data[start:].decode(codec, "ignore").encode() for start in (0, 1)]
    return found


def leaks(data: bytes) -> list[str]:
    """The planted values any reading of data shows a WINDOW-long piece of."""
    return [value for value in SECRETS.values()
            if any(value[i:i + WINDOW].encode() in reading
                   for reading in readings(data) for i in range(len(value) - WINDOW + 1))]


def _split(value: str, every: int, separator: str) -> str:
    return separator.join(value[i:i + every] for i in range(0, len(value), every))


def _base64(value: str, offset: int, urlsafe: bool) -> bytes:
    """The value at byte offset (mod 3) inside a longer base64 text, as a CLI or a script makes it."""
    data = b"Hello there, "[:offset + 3] + value.encode() + b" and the rest"
    return base64.urlsafe_b64encode(data) if urlsafe else base64.b64encode(data)


FORMS = {
    "raw": lambda v: v.encode(),
    "json": lambda v: json.dumps(v)[1:-1].encode(),
    "json-in-json": lambda v: json.dumps(json.dumps(v))[1:-1].encode(),
    **{f"base64-{kind}-offset{offset}": (lambda v, o=offset, u=kind == "url": _base64(v, o, u))
       for kind in ("std", "url") for offset in range(3)},
    "base64-wrapped-76": lambda v: base64.encodebytes(b"x" * 50 + v.encode() + b"y" * 60),
    "hex-lower": lambda v: v.encode().hex().encode(),
    "hex-upper": lambda v: v.encode().hex().upper().encode(),
    "percent-every-byte-upper": lambda v: "".join(f"%{b:02X}" for b in v.encode()).encode(),
    "percent-every-byte-lower": lambda v: "".join(f"%{b:02x}" for b in v.encode()).encode(),
    "percent-quote": lambda v: urllib.parse.quote(v).encode(),
    "percent-quote-plus": lambda v: urllib.parse.quote_plus(v).encode(),
    "unicode-escape-lower": lambda v: "".join(f"\\u{ord(c):04x}" for c in v).encode(),
    "unicode-escape-upper": lambda v: "".join(f"\\u{ord(c):04X}" for c in v).encode(),
    "unicode-escape-in-json": lambda v: json.dumps("".join(f"\\u{ord(c):04x}" for c in v))[1:-1].encode(),
    "reversed": lambda v: v[::-1].encode(),
    "lines-of-10": lambda v: _split(v, 10, "\n").encode(),
    "crlf-lines-of-7": lambda v: _split(v, 7, "\r\n").encode(),
    "several-newlines": lambda v: f"{v[:3]}\n\n\n{v[3:17]}\r\n\n{v[17:]}".encode(),
    "lines-in-json": lambda v: json.dumps(_split(v, 10, "\n"))[1:-1].encode(),
    "ansi-colour": lambda v: f"{v[:5]}\x1b[31m{v[5:20]}\x1b[0m{v[20:]}".encode(),
    "ansi-in-json": lambda v: json.dumps(f"{v[:5]}\x1b[1;31m{v[5:]}\x1b[0m")[1:-1].encode(),
    "char-per-line": lambda v: "\n".join(v).encode(),
    "char-per-ansi": lambda v: "\x1b[0m".join(v).encode(),
    "char-per-newline-and-ansi": lambda v: "\x1b[32m\r\n".join(v).encode(),
    "utf-16-le": lambda v: v.encode("utf-16-le"),
    "utf-16-be": lambda v: v.encode("utf-16-be"),
}


def _record(tmp_path, name: str, data: bytes) -> tuple[bytes, list]:
    path = tmp_path / name
    path.write_bytes(data)
    changed = redact_tree(tmp_path, SECRETS)
    return path.read_bytes(), changed


@pytest.mark.parametrize("form", FORMS)
def test_every_form_of_both_values_is_redacted_and_the_text_around_it_kept(tmp_path, form):
    codec = form if form.startswith("utf-16") else "utf-8"
    around = lambda text: text.encode(codec)
    encode = FORMS[form]
    data = around("BEFORE-CONTEXT ") + encode(PLAIN) + around(" | ") + encode(SPECIAL) + around(" AFTER-CONTEXT\n")
    assert leaks(data) == [PLAIN, SPECIAL]  # the decoders see both as planted
    redacted, changed = _record(tmp_path, "out.log", data)
    assert leaks(redacted) == []
    assert changed == [tmp_path / "out.log"]
    assert around("BEFORE-CONTEXT ") in redacted and around(" AFTER-CONTEXT\n") in redacted
    assert marker("API_KEY").encode(codec) in redacted and marker("SPECIAL_KEY").encode(codec) in redacted


@pytest.mark.parametrize("offset", range(3))
def test_base64_keeps_the_characters_the_value_does_not_fix(tmp_path, offset):
    lead, tail = b"Hello there, "[:offset + 3], b" and the rest"
    encoded = base64.b64encode(lead + PLAIN.encode() + tail)
    redacted, _ = _record(tmp_path, "b64.txt", b"blob=" + encoded + b"\n")
    before, _, after = redacted.partition(marker("API_KEY").encode())
    # a base64 character carries 6 bits: those holding any bit of the lead or the tail stay
    assert before == b"blob=" + encoded[:-(-len(lead) * 8 // 6)]
    assert after == encoded[(len(lead) + len(PLAIN)) * 8 // 6:] + b"\n"
    assert leaks(redacted) == []


def test_a_file_named_with_a_value_is_renamed_and_keeps_its_contents(tmp_path):
    for name in (f"log-{PLAIN}.txt", f"{PLAIN.encode().hex()}.bin", base64.urlsafe_b64encode(PLAIN.encode()).decode()):
        (tmp_path / name).write_text("kept as it was\n")
    changed = redact_tree(tmp_path, SECRETS)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted([f"log-{marker('API_KEY')}.txt", f"{marker('API_KEY')}.bin", f"{marker('API_KEY')}"])
    assert sorted(changed) == sorted(tmp_path / name for name in names)
    assert all((tmp_path / name).read_text() == "kept as it was\n" for name in names)


def test_a_folder_named_with_a_value_is_renamed_with_everything_under_it(tmp_path):
    inner = tmp_path / f"cache-{PLAIN}" / f"deeper-{SPECIAL.encode().hex()}"
    inner.mkdir(parents=True)
    (inner / "notes.txt").write_text(f"clean notes\nand {PLAIN}\n")
    (inner / "other.txt").write_text("untouched\n")
    changed = redact_tree(tmp_path, SECRETS)
    moved = tmp_path / f"cache-{marker('API_KEY')}" / f"deeper-{marker('SPECIAL_KEY')}"
    assert changed == [moved.parent, moved, moved / "notes.txt"]  # final paths, not stale ones
    assert (moved / "notes.txt").read_text() == f"clean notes\nand {marker('API_KEY')}\n"
    assert (moved / "other.txt").read_text() == "untouched\n"
    assert leaks("\n".join(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")).encode()) == []


def test_a_symlink_named_with_or_pointing_at_a_value_is_relinked(tmp_path):
    os.symlink(f"/home/agent/{PLAIN}", tmp_path / "link")
    os.symlink("plain-target", tmp_path / f"link-{PLAIN}")
    redact_tree(tmp_path, SECRETS)
    assert os.readlink(tmp_path / "link") == f"/home/agent/{marker('API_KEY')}"
    assert os.readlink(tmp_path / f"link-{marker('API_KEY')}") == "plain-target"


def _tar(members: list[tarfile.TarInfo], contents: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for member in members:
            data = contents.get(member.name, b"")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def test_tar_member_names_link_targets_and_contents_are_redacted_in_every_form(tmp_path):
    hexed, b64 = PLAIN.encode().hex(), base64.urlsafe_b64encode(PLAIN.encode()).decode()
    link = tarfile.TarInfo("workspace/link")
    link.type, link.linkname = tarfile.SYMTYPE, f"../{b64}"
    members = [tarfile.TarInfo(f"workspace/{PLAIN[:30]}{PLAIN[30:]}.txt"), tarfile.TarInfo(f"workspace/{hexed}"),
               tarfile.TarInfo("workspace/ok.txt"), link]
    contents = {members[0].name: b"named badly\n", members[1].name: _split(PLAIN, 10, "\n").encode(),
                "workspace/ok.txt": b"fine\n"}
    data = _tar(members, contents)
    redacted, changed = _record(tmp_path, "workspace.tar", data)
    assert changed == [tmp_path / "workspace.tar"] and leaks(redacted) == []
    with tarfile.open(tmp_path / "workspace.tar") as archive:
        got = {m.name: (archive.extractfile(m).read() if m.isreg() else m.linkname) for m in archive}
    label = marker("API_KEY")
    assert got == {f"workspace/{label}.txt": b"named badly\n", f"workspace/{label}": label.encode(),
                   "workspace/ok.txt": b"fine\n", "workspace/link": f"../{label}"}


def test_a_clean_file_is_left_untouched(tmp_path):
    path = tmp_path / "clean.txt"
    path.write_text(f"nothing here but {PLAIN[:7]} and {PLAIN[-7:]}\n")
    before = path.stat()
    assert redact_tree(tmp_path, SECRETS) == []
    assert path.stat().st_ino == before.st_ino and path.stat().st_mtime_ns == before.st_mtime_ns
    assert [p.name for p in tmp_path.iterdir()] == ["clean.txt"]  # no copy left beside it


def test_streaming_in_small_chunks_redacts_what_a_whole_buffer_pass_does(monkeypatch):
    redactor = Redactor(SECRETS)
    pieces = [form(value) for form in FORMS.values() for value in (PLAIN, SPECIAL)]
    data = b"".join(b"filler %d " % i * (i % 7) + piece for i, piece in enumerate(pieces))
    monkeypatch.setattr(bench.redact, "CHUNK", 997)  # every value straddles some chunk boundary
    out = io.BytesIO()
    assert redactor.stream(io.BytesIO(data), out)
    assert out.getvalue() == redactor.bytes(data) and out.getvalue() != data


def test_a_20_mb_transcript_of_near_misses_is_redacted_in_seconds(tmp_path):
    """Linear time: lines that almost hold the value, coloured and wrapped, must not backtrack."""
    line = json.dumps({"type": "tool_result", "text": f"\x1b[31m{_split(PLAIN[:-1], 9, chr(10))}\x1b[0m 0123abcd"})
    block = (line + "\n").encode() * 2000
    planted = [FORMS["lines-in-json"](PLAIN), FORMS["base64-std-offset1"](PLAIN), FORMS["char-per-ansi"](PLAIN)]
    data = b"".join(block + piece for piece in planted * (20_000_000 // len(block) // 3 + 1))
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(data)
    started = time.monotonic()
    assert redact_tree(tmp_path, SECRETS) == [path]
    elapsed = time.monotonic() - started
    redacted = path.read_bytes()
    assert len(data) > 20_000_000 and redacted.count(marker("API_KEY").encode()) == data.count(planted[0]) * 3
    assert PLAIN.encode() not in redacted and redacted.count(block) == data.count(block)
    assert elapsed < 15, f"{elapsed:.1f}s for {len(data) >> 20} MiB"


def test_a_multi_line_value_is_redacted_raw_escaped_and_with_windows_line_ends(tmp_path):
    """A value with line breaks and a backslash takes the greedy (not possessive) path."""
    pem = "-----BEGIN KEY-----\nMIIBVwIBADANBgkqhkiG9w0B\\AQEFAASCAT\n-----END KEY-----"
    forms = [pem, json.dumps(pem), json.dumps(json.dumps(pem)), pem.replace("\n", "\r\n"), pem.replace("\n", "\\r\\n")]
    (tmp_path / "keys.txt").write_bytes("".join(f"<{form}>" for form in forms).encode())
    redact_tree(tmp_path, {"PEM": pem})
    label = marker("PEM")
    assert (tmp_path / "keys.txt").read_bytes().decode() == f'<{label}><"{label}"><"\\"{label}\\""><{label}><{label}>'

"""The deterministic layer writer and the pinned-input rules, on hand-made tars (no engine)."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile
import threading

import pytest

from bench.debs import parse_uris, snapshot_url
from bench.errors import InfrastructureError
from bench.fetch import fetched
from bench.image_spec import Fetch
from bench.layer_writer import ADDED, CHANGED, DELETED, derived_config, select, write_layer

EPOCH = 1735689600


def export_tar(entries: list[tuple[str, str, bytes | str, int]]) -> io.BytesIO:
    """A `docker export`-like stream: (name, kind, data or link target, mtime), in the given order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, kind, data, mtime in entries:
            info = tarfile.TarInfo(name)
            info.mtime, info.uname, info.gname = mtime, "someone", "somegroup"
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            elif kind == "link":
                info.type, info.linkname = tarfile.LNKTYPE, data
                archive.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
    out.seek(0)
    return out


ENTRIES = [
    ("usr", "dir", b"", 5_000_000_000), ("usr/bin", "dir", b"", 1), ("usr/bin/tool", "file", b"tool", 5_000_000_000),
    ("usr/bin/alias", "link", "usr/bin/tool", 5_000_000_000), ("etc", "dir", b"", 3),
    ("etc/untouched", "file", b"lower", 2), ("tmp", "dir", b"", 9), ("tmp/scratch", "file", b"x", 9),
]
CHANGES = [{"Path": "/usr/bin", "Kind": CHANGED}, {"Path": "/usr/bin/tool", "Kind": ADDED},
           {"Path": "/usr/bin/alias", "Kind": ADDED}, {"Path": "/tmp/scratch", "Kind": ADDED},
           {"Path": "/etc/gone", "Kind": DELETED}, {"Path": "/etc/gone/child", "Kind": DELETED}]


def layer_members(path) -> list[tarfile.TarInfo]:
    with tarfile.open(path) as archive:
        return archive.getmembers()


def test_the_layer_holds_exactly_the_changes_sorted_clamped_and_anonymous(tmp_path):
    out = tmp_path / "layer.tar"
    write_layer(export_tar(ENTRIES), select(CHANGES, ["tmp"]), out, EPOCH)
    members = layer_members(out)
    assert [m.name for m in members] == ["usr/bin", "usr/bin/alias", "usr/bin/tool", "etc/.wh.gone"]
    assert all(m.mtime <= EPOCH and m.uname == "" and m.gname == "" for m in members)
    assert members[0].mtime == 1  # older than the epoch: kept as it was
    alias, tool = members[1], members[2]
    assert alias.isreg() and alias.size == 4  # the group's smallest name carries the bytes
    assert tool.islnk() and tool.linkname == "usr/bin/alias"


def test_export_order_does_not_change_the_layer(tmp_path):
    first, second = tmp_path / "a.tar", tmp_path / "b.tar"
    shuffled = [ENTRIES[i] for i in (4, 5, 0, 1, 2, 3, 6, 7)]
    assert write_layer(export_tar(ENTRIES), select(CHANGES, ["tmp"]), first, EPOCH) == \
        write_layer(export_tar(shuffled), select(CHANGES, ["tmp"]), second, EPOCH)
    assert first.read_bytes() == second.read_bytes()


def test_a_changed_file_changes_the_layer_digest(tmp_path):
    changed = [(n, k, b"TOOL" if n == "usr/bin/tool" else d, m) for n, k, d, m in ENTRIES]
    assert write_layer(export_tar(ENTRIES), select(CHANGES, ["tmp"]), tmp_path / "a.tar", EPOCH) != \
        write_layer(export_tar(changed), select(CHANGES, ["tmp"]), tmp_path / "b.tar", EPOCH)


def test_a_hard_link_to_a_file_outside_the_layer_is_refused(tmp_path):
    changes = [{"Path": "/usr/bin/alias", "Kind": ADDED}]
    with pytest.raises(InfrastructureError, match="hard link to usr/bin/tool"):
        write_layer(export_tar(ENTRIES), select(changes, []), tmp_path / "l.tar", EPOCH)


def test_a_path_diff_names_but_export_lacks_is_a_harness_fault(tmp_path):
    with pytest.raises(InfrastructureError, match="lacks paths"):
        write_layer(export_tar(ENTRIES), select([{"Path": "/nowhere", "Kind": ADDED}], []), tmp_path / "l.tar", EPOCH)


def test_the_config_is_canonical_and_carries_env_labels_and_the_new_layer():
    parent = {"Config": {"Env": ["PATH=/bin", "LANG=C"], "Cmd": ["/bin/sh"], "Labels": {"a": "1"}, "Hostname": "x"},
              "RootFS": {"Layers": ["sha256:" + "1" * 64]}, "Architecture": "amd64", "Os": "linux"}
    config = derived_config(parent, "sha256:" + "2" * 64, EPOCH, {"LANG": "C.UTF-8"}, {"b": "2"}, "made")
    data = json.loads(config)
    assert data["config"]["Env"] == ["PATH=/bin", "LANG=C.UTF-8"]
    assert data["config"]["Labels"] == {"a": "1", "b": "2"} and "Hostname" not in data["config"]
    assert data["rootfs"]["diff_ids"][-1] == "sha256:" + "2" * 64 and data["created"] == "2025-01-01T00:00:00Z"
    assert config == derived_config(parent, "sha256:" + "2" * 64, EPOCH, {"LANG": "C.UTF-8"}, {"b": "2"}, "made")


def test_apt_print_uris_lines_become_pins_and_others_are_ignored():
    output = ("Reading package lists...\n"
              "'http://deb.debian.org/debian/pool/main/m/make-dfsg/make_4.3-4.1_amd64.deb' make_4.3-4.1_amd64.deb "
              "395632 SHA256:" + "a" * 64 + "\n"
              "'http://deb.debian.org/debian/pool/main/l/lib/lib_1%3a2.0_amd64.deb' lib_1%3a2.0_amd64.deb 10 MD5Sum:ff\n")
    [pin] = parse_uris(output)
    assert (pin.package, pin.version, pin.size, pin.sha256) == ("make", "4.3-4.1", 395632, "a" * 64)
    assert snapshot_url(pin, "20261130T000000Z") == \
        "http://snapshot.debian.org/archive/debian/20261130T000000Z/pool/main/m/make-dfsg/make_4.3-4.1_amd64.deb"


def test_a_fetch_needs_exactly_one_well_formed_hash():
    with pytest.raises(ValueError, match="exactly one"):
        Fetch(name="a.tgz", url="https://x/a.tgz")
    with pytest.raises(ValueError, match="64 lowercase hex"):
        Fetch(name="a.tgz", url="https://x/a.tgz", sha256="abc")
    with pytest.raises(ValueError, match="plain file name"):
        Fetch(name="../a.tgz", url="https://x/a.tgz", sha256="a" * 64)
    item = Fetch(name="a.tgz", url="https://x/a.tgz", integrity="sha512-" + "A" * 86 + "==")
    assert item.check[0] == "sha512"


@pytest.fixture
def served(tmp_path):
    """A real HTTP server on 127.0.0.1 serving tmp_path/www."""
    root = tmp_path / "www"
    root.mkdir()
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_fetch_verifies_bytes_caches_them_and_refuses_other_bytes(served, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_INPUTS_CACHE", str(tmp_path / "cache"))
    root, base = served
    (root / "good.deb").write_bytes(b"pinned bytes")
    (root / "evil.deb").write_bytes(b"other bytes")
    expected = hashlib.sha256(b"pinned bytes").hexdigest()
    path = fetched([f"{base}/good.deb"], "sha256", expected, None, lambda line: None)
    assert path.read_bytes() == b"pinned bytes"
    (root / "good.deb").unlink()
    assert fetched([f"{base}/good.deb"], "sha256", expected, None, lambda line: None) == path  # from the cache
    with pytest.raises(InfrastructureError, match="evil.deb: got sha256"):
        fetched([f"{base}/evil.deb"], "sha256", "0" * 64, None, lambda line: None)
    assert not list((tmp_path / "cache").glob("*.part"))
    # the first URL serving other bytes, the second the pinned ones: the pinned ones win
    (root / "mirror.deb").write_bytes(b"pinned bytes")
    path.unlink()
    assert fetched([f"{base}/evil.deb", f"{base}/mirror.deb"], "sha256", expected, None, lambda l: None).is_file()

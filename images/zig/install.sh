# Offline, from /bench-inputs. The wheel's ziglang/ folder is the official Zig release (a
# static `zig` and its lib/): unpacked with Python's zipfile (base has no unzip); zip keeps
# no owner, so everything is root's, mode from the entry.
set -eu
python3 - <<'PY'
import os, stat, zipfile
wheel = "/bench-inputs/ziglang-0.16.0-py3-none-manylinux_2_12_x86_64.manylinux2010_x86_64.musllinux_1_1_x86_64.whl"
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        name = info.filename
        if not (name == "ziglang/zig" or name.startswith(("ziglang/lib/", "ziglang/LICENSE"))) or name.endswith("/"):
            continue
        target = "/opt/zig/" + name[len("ziglang/"):]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as source, open(target, "wb") as out:
            while chunk := source.read(1 << 20):
                out.write(chunk)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(target, 0o755 if mode & stat.S_IXUSR else 0o644)
PY
# zig finds lib/ beside its own resolved path, so a link on PATH is enough.
ln -s /opt/zig/zig /usr/local/bin/zig
test "$(zig version)" = 0.16.0

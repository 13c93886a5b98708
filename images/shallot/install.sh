# bun and bunx are one executable (it answers to the name it is run as).
set -eu
mkdir -p /opt/bun
tar -xzf /bench-inputs/bun.tgz -C /opt/bun --strip-components=1 --no-same-owner package/bin/bun package/package.json
ln -s /opt/bun/bin/bun /usr/local/bin/bun
ln -s /opt/bun/bin/bun /usr/local/bin/bunx
bun --version
mkdir -p /workspace && chown bench:bench /workspace

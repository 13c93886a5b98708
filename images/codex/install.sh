set -eu
mkdir -p /opt/agent/codex
tar -xzf /bench-inputs/package.tgz -C /opt/agent/codex --strip-components=3 --no-same-owner \
    --exclude='*/codex-resources/voice' package/vendor/x86_64-unknown-linux-musl
echo "b76a027d6b210f9a8da7aaf321dd235c700f0ef7a794d4a5314b9af6c134f0f0  /opt/agent/codex/bin/codex" | sha256sum -c -
ln -s /opt/agent/codex/bin/codex /usr/local/bin/codex

set -eu
mkdir -p /opt/agent/claude-code
tar -xzf /bench-inputs/package.tgz -C /opt/agent/claude-code --strip-components=1 --no-same-owner \
    package/claude package/package.json package/LICENSE.md
echo "a2df1f41bb00250992926420d0063f89b127cb81abdd284dbefb80c50ff1d026  /opt/agent/claude-code/claude" | sha256sum -c -
ln -s /opt/agent/claude-code/claude /usr/local/bin/claude

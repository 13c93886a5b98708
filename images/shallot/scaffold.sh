#!/bin/sh
# Scaffold the project an agent starts from: Shallot's own build-a-scene recipe in
# /workspace, the subject tarball installed (never the registry's copy), warm.
#
# The overrides pin two transitive packages whose declared ranges do not resolve on the
# registry as it stands (PLATFORM-NOTES). typescript is installed so `bunx tsc --noEmit`,
# the check the engine's AGENTS.md asks for, works in an offline agent container.
set -eu
SUBJECT=/opt/subject/subject.tgz
CA=/opt/subject/bench-ca.crt
set --
if [ -s "$CA" ]; then set -- --cafile "$CA"; export NODE_EXTRA_CA_CERTS="$CA"; fi

mkdir -p /tmp/carrier && cd /tmp/carrier
cat > package.json <<JSON
{"name": "carrier", "private": true,
 "dependencies": {"@dylanebert/shallot": "file:$SUBJECT"},
 "overrides": {"unplugin-typegpu": "0.11.4", "tinyest": "0.3.1"}}
JSON
bun install --no-progress "$@"
bunx shallot recipe build-a-scene /workspace

cd /workspace
bun -e '
const pkg = JSON.parse(await Bun.file("package.json").text());
pkg.dependencies["@dylanebert/shallot"] = "file:'"$SUBJECT"'";
pkg.devDependencies = { typescript: "5.9.3" };
pkg.overrides = { "unplugin-typegpu": "0.11.4", "tinyest": "0.3.1" };
await Bun.write("package.json", JSON.stringify(pkg, null, 4) + "\n");
'
bun install --no-progress "$@"
bunx shallot build
rm -rf dist /tmp/carrier

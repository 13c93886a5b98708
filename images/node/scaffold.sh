# A TypeScript project in /workspace with the subject installed from its tarball, offline,
# its install scripts never run: what a user who just added the package has. The tsconfig is
# the one the `compile` check grades with (strict, bundler resolution, no emit), so an agent
# that runs `tsc` here sees what the gate will see.
set -eu
cd /workspace
printf '{\n  "name": "submission",\n  "private": true,\n  "type": "module"\n}\n' > package.json
HOME=/tmp npm install --offline --ignore-scripts --no-audit --no-fund --loglevel=error /opt/subject/subject.tgz
cat > tsconfig.json <<'JSON'
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "ES2022",
    "lib": ["ES2023", "DOM"],
    "module": "preserve",
    "moduleResolution": "bundler",
    "jsx": "react",
    "types": [],
    "allowImportingTsExtensions": true,
    "skipLibCheck": false
  },
  "include": ["**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts"],
  "exclude": ["node_modules"]
}
JSON
rm -rf /tmp/.npm

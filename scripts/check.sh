#!/usr/bin/env bash
# `make check`: the inner loop, lint and unit tests only (no cluster, no Python environment made),
# each step timed. The Python SDK's type check and unit tests run in .venv-notebook when it is
# there (`make test` makes it first, see docs/python.md). `make test` runs the same first, then the end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { # NAME COMMAND...: runs it and says how long it took
  local name=$1 t=$SECONDS
  shift
  "$@"
  echo "make check: $name took $((SECONDS - t)) s" >&2
}
step lint make --no-print-directory lint
step "unit tests" go test -count=1 ./...
if [ -x .venv-notebook/bin/python ]; then
  step "python types" bash -c 'cd python && ../.venv-notebook/bin/python -m mypy --cache-dir /dev/null'
  step "python tests" .venv-notebook/bin/python -m pytest -q -p no:cacheprovider python/tests
else
  echo "make check: no .venv-notebook: the Python SDK's tests skipped (make test makes it, see docs/python.md)" >&2
fi
echo "make check: passed in $((SECONDS - start)) s" >&2

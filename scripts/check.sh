#!/usr/bin/env bash
# `make check`: the inner loop, lint and unit tests only (no cluster), each step timed. The Python
# SDK's unit tests run in .venv-notebook (scripts/tfenv.sh notebook: pinned, made once, ~12 s). `make test` runs the same first, then the end-to-end tests.
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
step "python env" bash scripts/tfenv.sh notebook
step "python types" bash -c 'cd python && ../.venv-notebook/bin/python -m mypy --cache-dir /dev/null'
step "python tests" .venv-notebook/bin/python -m pytest -q -p no:cacheprovider python/tests
echo "make check: passed in $((SECONDS - start)) s" >&2

#!/usr/bin/env bash
# `make check`: the inner loop, lint and unit tests only (no cluster, no Python environment), each
# step timed. `make test` runs the same first, then the end-to-end tests.
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
echo "make check: passed in $((SECONDS - start)) s" >&2

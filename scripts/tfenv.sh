#!/usr/bin/env bash
# Creates .venv/ with the pinned TensorFlow the examples and the e2e tests use
# (examples/requirements.txt). Idempotent: a stamp holding the requirements' hash makes a
# complete environment a fast no-op; any change to the requirements reinstalls.
# Works without a terminal (CI=true, no stdin). Override the interpreter with PYTHON=...
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV=.venv
REQ=examples/requirements.txt
STAMP="$VENV/.tfenv-stamp"

fail() { echo "tfenv: $*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python 3.9-3.11 (or set PYTHON=/path/to/python3)"
want="$(sha256sum "$REQ" | cut -d' ' -f1) $("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"

complete() { [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; }
complete && exit 0

# One installer at a time (parallel CI steps); the loser finds the work done.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/tfyarn-tfenv-$(pwd | sha256sum | cut -c1-16).lock"
  flock 9
  complete && exit 0
fi

start=$(date +%s)
echo "tfenv: creating $VENV from $REQ (first time: downloads ~250 MB from PyPI)" >&2
rm -f "$STAMP"
if ! "$PYTHON" -m venv --clear "$VENV" </dev/null; then
  fail "'$PYTHON -m venv' failed: on Debian/Ubuntu install it with 'apt-get install python3-venv', then rerun bash scripts/tfenv.sh"
fi
pipflags=(--disable-pip-version-check --no-input --progress-bar off -q)
if ! "$VENV/bin/python" -m pip install "${pipflags[@]}" -r "$REQ" </dev/null; then
  fail "pip could not install $REQ: check that PyPI is reachable (proxy: HTTPS_PROXY, mirror: PIP_INDEX_URL) and that this Python ($("$PYTHON" --version 2>&1)) has tensorflow-cpu wheels, then rerun bash scripts/tfenv.sh"
fi
# Import once: catches a broken wheel now rather than in the middle of a training run.
if ! "$VENV/bin/python" -c 'import tensorflow as tf; assert tf.__version__' </dev/null >/dev/null 2>&1; then
  fail "TensorFlow installed but does not import: see '$VENV/bin/python -c \"import tensorflow\"'"
fi
echo "$want" >"$STAMP"
echo "tfenv: $VENV ready in $(( $(date +%s) - start ))s" >&2

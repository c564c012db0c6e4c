#!/usr/bin/env bash
# Creates the pinned Python environments the examples and the e2e tests use:
#   bash scripts/tfenv.sh           .venv/          TensorFlow (examples/requirements.txt)
#   bash scripts/tfenv.sh pytorch   .venv-pytorch/  PyTorch    (examples/requirements-pytorch.txt)
#   bash scripts/tfenv.sh jax       .venv-jax/      JAX        (examples/requirements-jax.txt)
#   bash scripts/tfenv.sh xgboost   .venv-xgboost/  XGBoost and LightGBM (examples/requirements-xgboost.txt)
#   bash scripts/tfenv.sh mlflow    .venv-mlflow/   MLflow     (examples/requirements-mlflow.txt)
#   bash scripts/tfenv.sh notebook  .venv-notebook/ the Python SDK's tests and notebooks: pytest,
#                                   mypy, cloudpickle, nbclient, ipykernel (examples/requirements-notebook.txt)
# Idempotent: a stamp holding the requirements' hash makes a complete environment a fast no-op;
# any change to the requirements reinstalls.
# The environments but TensorFlow's (GBs: PyPI's Linux torch brings the CUDA libraries) live in a
# per-machine cache, $TFYARN_VENV_CACHE (default /var/cache/tfyarn/venvs for root, whose home the
# test cluster's container users cannot enter, else ~/.cache/tfyarn/venvs), keyed by the
# requirements' hash, and .venv-pytorch/.venv-jax are links to it: a second clone on the same
# machine (CI's fresh clone) links in a second instead of installing again.
# Works without a terminal (CI=true, no stdin). Override the interpreter with PYTHON=...
# The default interpreter is the system's /usr/bin/python3 when there is one, not the first python3
# on PATH: a venv's bin/python is a link to it, and on the test cluster containers run as the
# submitting Unix user (LinuxContainerExecutor), who cannot execute an interpreter under /root
# (pyenv's: exit 126). Debian's is also the one in the test image, so a venv made here runs inside it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
fail() { echo "tfenv: $*" >&2; exit 1; }

kind="${1:-tensorflow}"
case "$kind" in
tensorflow) VENV=.venv REQ=examples/requirements.txt
  CHECK='import tensorflow as tf; assert tf.__version__' WHAT="tensorflow-cpu wheels" SIZE="~250 MB" ;;
pytorch) VENV=.venv-pytorch REQ=examples/requirements-pytorch.txt
  CHECK='import torch, torch.distributed as d; assert d.is_available() and d.is_gloo_available()' WHAT="torch wheels" SIZE="2.6 GB, 4.7 GB on disk" ;;
jax) VENV=.venv-jax REQ=examples/requirements-jax.txt
  CHECK='import jax, jax.numpy as jnp; assert float(jnp.ones(2).sum()) == 2.0' WHAT="jaxlib wheels" SIZE="~120 MB" ;;
xgboost) VENV=.venv-xgboost REQ=examples/requirements-xgboost.txt
  CHECK='import xgboost, lightgbm, xgboost.collective, numpy; assert xgboost.__version__ and lightgbm.__version__' WHAT="xgboost-cpu and lightgbm wheels" SIZE="~100 MB" ;;
mlflow) VENV=.venv-mlflow REQ=examples/requirements-mlflow.txt
  CHECK='import mlflow, mlflow.server; assert mlflow.__version__' WHAT="mlflow wheels" SIZE="~200 MB, 850 MB on disk" ;;
notebook) VENV=.venv-notebook REQ=examples/requirements-notebook.txt
  CHECK='import cloudpickle, nbclient, ipykernel, pytest, mypy' WHAT="pytest, nbclient and ipykernel wheels" SIZE="~15 MB" ;;
*) echo "tfenv: unknown environment '$kind'; give tensorflow (default), pytorch, jax, xgboost, mlflow or notebook" >&2; exit 2 ;;
esac
STAMP="$VENV/.tfenv-stamp"

command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python 3.9-3.11 (or set PYTHON=/path/to/python3)"
# The stamp names the interpreter too: a venv made from another Python is made again.
want="$(sha256sum "$REQ" | cut -d' ' -f1) $("$PYTHON" -c 'import os, sys; print("%d.%d %s" % (sys.version_info[:2] + (os.path.realpath(sys.executable),)))')"

# pip writes each console script (mlflow, pytest, torchrun, ...) with the interpreter's path as it
# was called: through $VENV, a link in the clone that made the environment. Another clone (CI's
# fresh one) or a removed worktree then runs a script whose interpreter no longer exists. The
# scripts of a cached environment name its own path instead (idempotent; run on every link, which
# also repairs an environment cached before this).
own_scripts() { # DIR: the environment's real directory
  local dir=$1 f first
  for f in "$dir"/bin/*; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    IFS= read -r first <"$f" 2>/dev/null || continue
    case $first in
    '#!'*/bin/python | '#!'*/bin/python3)
      [ "$first" = "#!$dir/bin/python" ] || sed -i "1s|.*|#!$dir/bin/python|" "$f" ;;
    esac
  done
}

cached=""
if [ "$kind" != tensorflow ]; then
  # The environment itself is in the machine's cache; $VENV links to it. Root's cache is outside
  # its home: the test cluster's containers run as their users and reach the environment by its
  # path (--python), so it must be readable by all.
  if [ -n "${TFYARN_VENV_CACHE:-}" ]; then cache=$TFYARN_VENV_CACHE
  elif [ "$(id -u)" = 0 ]; then cache=/var/cache/tfyarn/venvs
  else cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tfyarn/venvs
  fi
  key="$kind-$(echo "$want" | sha256sum | cut -c1-16)"
  cached="$cache/$key"
fi
complete() { [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ] && { [ -z "$cached" ] || [ "$(readlink "$VENV")" = "$cached" ]; }; }
if complete; then [ -z "$cached" ] || own_scripts "$cached"; exit 0; fi

# One installer at a time (parallel CI steps); the loser finds the work done.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/tfyarn-tfenv-$(pwd | sha256sum | cut -c1-16).lock"
  flock 9
  complete && exit 0
fi

start=$(date +%s)
if [ "$kind" != tensorflow ]; then
  mkdir -p "$cache"
  [ "$cache" = /var/cache/tfyarn/venvs ] && chmod 0755 /var/cache/tfyarn "$cache"
  # One made before in root's home (the earlier default): hard links, no copy and no download.
  old=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tfyarn/venvs/$key
  if [ ! -e "$cached" ] && [ "$old" != "$cached" ] && [ -x "$old/bin/python" ] && [ "$(cat "$old/.tfenv-stamp" 2>/dev/null)" = "$want" ]; then
    rm -rf "$cached.tmp" && cp -al "$old" "$cached.tmp" && mv "$cached.tmp" "$cached"
  fi
  if [ -x "$cached/bin/python" ] && [ "$(cat "$cached/.tfenv-stamp" 2>/dev/null)" = "$want" ]; then
    own_scripts "$cached"
    rm -rf "$VENV" && ln -s "$cached" "$VENV"
    echo "tfenv: $VENV linked to $cached (cached)" >&2
    exit 0
  fi
  rm -rf "$VENV" "$cached" && mkdir -p "$cached" && ln -s "$cached" "$VENV"
fi
echo "tfenv: creating $VENV from $REQ (first time: downloads $SIZE from PyPI)" >&2
rm -f "$STAMP"
if ! "$PYTHON" -m venv --clear "$(cd "$VENV" 2>/dev/null && pwd -P || echo "$VENV")" </dev/null; then
  fail "'$PYTHON -m venv' failed: on Debian/Ubuntu install it with 'apt-get install python3-venv', then rerun bash scripts/tfenv.sh"
fi
pipflags=(--disable-pip-version-check --no-input --progress-bar off -q)
if ! "$VENV/bin/python" -m pip install "${pipflags[@]}" -r "$REQ" </dev/null; then
  fail "pip could not install $REQ: check that PyPI is reachable (proxy: HTTPS_PROXY, mirror: PIP_INDEX_URL) and that this Python ($("$PYTHON" --version 2>&1)) has $WHAT, then rerun bash scripts/tfenv.sh $*"
fi
# Import once: catches a broken wheel now rather than in the middle of a training run.
if ! "$VENV/bin/python" -c "$CHECK" </dev/null >/dev/null 2>&1; then
  fail "$kind installed but does not work: see '$VENV/bin/python -c \"$CHECK\"'"
fi
[ -n "$cached" ] && own_scripts "$cached"
echo "$want" >"$STAMP"
echo "tfenv: $VENV ready in $(( $(date +%s) - start ))s" >&2

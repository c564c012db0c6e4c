#!/usr/bin/env bash
# `make demo`: on a fresh machine, start the real single-machine Hadoop cluster, create the
# pinned TensorFlow environment, and train examples/mwms_keras.py (MultiWorkerMirroredStrategy:
# a chief and two workers) on YARN with tfyarn. The cluster is left running (stop it with
# `make cluster-down`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/prereqs.sh demo
bash testcluster/cluster.sh up "${PROFILE:-plain}"
bash scripts/tfenv.sh
make --no-print-directory build
source .testcluster/env.sh

echo
echo "== tfyarn cluster (Go, native YARN RPC, no JVM)"
bin/tfyarn cluster
echo
echo "== MultiWorkerMirroredStrategy on YARN: chief + 2 workers"
# The NodeManagers run on this machine, so the tasks use this checkout's .venv by absolute path.
set +e
bin/tfyarn run --name tfyarn-demo-mwms --chief 1c,1g --worker 2x1c,1g \
  --python "$PWD/.venv/bin/python" examples/mwms_keras.py -- --epochs 2 --steps-per-epoch 10
code=$?
set -e
echo
if [ "$code" = 0 ]; then
  echo "== demo: the job SUCCEEDED (each task's logs: bin/tfyarn logs <application id above>)"
else
  echo "== demo: the job did not succeed (exit code $code); see the diagnostics above" >&2
fi
exit "$code"

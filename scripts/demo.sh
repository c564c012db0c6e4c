#!/usr/bin/env bash
# `make demo`: on a fresh machine, start the real single-machine Hadoop cluster and show what
# tfyarn does against it today. The cluster is left running (stop it with `make cluster-down`).
set -euo pipefail
cd "$(dirname "$0")/.."

bash testcluster/cluster.sh up "${PROFILE:-plain}"
make --no-print-directory build
source .testcluster/env.sh

echo
echo "== tfyarn cluster (Go, native YARN RPC, no JVM)"
bin/tfyarn cluster
echo
echo "== the same cluster seen by Hadoop's own Java CLI"
testcluster/hadoop.sh yarn node -list -showDetails

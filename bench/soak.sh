#!/usr/bin/env bash
# The soak of issue 5: the MWMS example (chief + 2 workers) 20 times back to back on the
# test cluster (started if needed), each run under a hard timeout: every run must end
# SUCCEEDED, with no port conflict in any task's log. Builds tfyarn from this tree itself;
# writes bench/results/soak.{md,json}. Takes about 10-20 minutes.
# SOAK_RUNS=N and SOAK_TIMEOUT=5m override the run count and the per-run timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -tags soak -run '^TestSoak' -count=1 -timeout 120m -v ./bench/ "$@"

#!/usr/bin/env bash
# Gradient-boosted trees on the test cluster (bench/results/gbt.md): each example with 3 workers
# of ROWS rows each, then 1 worker with all 3*ROWS rows (the same training on one machine),
# REPS times. Prints the wall clock of each `tfyarn run` and the workers' own lines (time to
# join the collective, to train; model checksum). Hold the cluster lock:
#   flock -o /work/cluster.lock bash bench/gbt.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${ROWS:-200000} ROUNDS=${ROUNDS:-50} REPS=${REPS:-2}
source .testcluster/env.sh
bash scripts/tfenv.sh xgboost
mkdir -p bench/work && go build -o bench/work/tfyarn ./cmd/tfyarn
PY=$(readlink -f .venv-xgboost)/bin/python
for rep in $(seq 1 "$REPS"); do
  for fw in xgboost lightgbm; do
    for shape in "3x1c,1g $ROWS" "1x1c,2g $((3 * ROWS))"; do
      set -- $shape
      start=$(date +%s.%N)
      out=$(bench/work/tfyarn run --name "bench-$fw" --framework "$fw" --worker "$1" --python "$PY" --output json \
        "examples/${fw}_dist.py" -- --rows "$2" --rounds "$ROUNDS")
      end=$(date +%s.%N)
      app=$(echo "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["app_id"])')
      echo "== rep $rep $fw --worker $1 --rows $2: wall $(echo "$end - $start" | bc) s, $app, load $(cut -d' ' -f1 /proc/loadavg)"
      logs=""
      for _ in $(seq 1 30); do
        logs=$(bench/work/tfyarn logs "$app" 2>/dev/null) && [ -n "$logs" ] && break
        sleep 2
      done
      echo "$logs" | grep -E "joined the collective|met the others|model checksum" | sed 's/^/   /'
    done
  done
done

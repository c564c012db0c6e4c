#!/usr/bin/env bash
# `make test`: lint, unit tests, then every end-to-end test against one start of the real test
# cluster. A cluster that was already up is reused and left running; one this script started is
# stopped at the end, whatever the outcome.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/prereqs.sh test

# /dev/null must stay the null device: every container's launch script and Hadoop's own scripts
# write to it. Once, on a shared development machine, something running beside the tests replaced
# it with a regular file owned by alice, and every later job failed in ways that named nothing of
# it ("/dev/null: Permission denied" in a task's stderr). Checked before and after the tests, so
# that a test that does it is named by the run that catches it.
null_device() { [ "$(stat -c %t:%T:%F /dev/null 2>/dev/null)" = "1:3:character special file" ]; }
null_device || { echo "make test: /dev/null is not the null device ($(stat -c '%F, owner %U, mode %a' /dev/null 2>&1)); restore it as root (rm -f /dev/null && mknod -m 666 /dev/null c 1 3), then run make test again" >&2; exit 2; }

# make check first: lint and unit tests, each timed; the Python SDK's too, in .venv-notebook
# (pytest, mypy, cloudpickle, nbclient, ipykernel; also the kernel of the notebooks' tests).
bash scripts/tfenv.sh notebook
bash scripts/check.sh
make --no-print-directory build

# The examples' end-to-end tests need the pinned environments: .venv (tensorflow-cpu), and
# .venv-pytorch and .venv-jax (--framework pytorch|jax), links into a per-machine cache.
t=$SECONDS
bash scripts/tfenv.sh
bash scripts/tfenv.sh pytorch
bash scripts/tfenv.sh jax
bash scripts/tfenv.sh xgboost
bash scripts/tfenv.sh mlflow
echo "make test: the Python environments took $((SECONDS - t)) s" >&2

# The Unix users the tests make (tfyarn-e2e-<random>, see internal/clustertest/users.go) are
# removed at the end with their files; alice and bob, the cluster's own, stay (make clean-machine).
source testcluster/users.sh
users_before=$(test_users_made '^tfyarn-' | sort)
started=0
if ! bash testcluster/cluster.sh status >/dev/null 2>&1; then
  bash testcluster/cluster.sh up "${PROFILE:-plain}"
  started=1
fi
logs=$(mktemp -d /tmp/tfyarn-make-test.XXXXXX)
cleanup() {
  wait 2>/dev/null || true # the lanes (an interrupt reaches their go test processes too)
  [ "$started" = 1 ] && bash testcluster/cluster.sh down || true
  # The other clusters are only ever started by the tests themselves (clustertest).
  TC_DIR="$PWD/.testcluster-privacy" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  TC_DIR="$PWD/.testcluster-kerberos" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  TC_DIR="$PWD/.testcluster-faults" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  TC_DIR="$PWD/.testcluster-docker" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  # The compatibility suite's clusters, one per Hadoop release (clustertest.RequireHadoop).
  local dir
  for dir in "$PWD"/.testcluster-hadoop-*/; do
    [ -d "$dir" ] && TC_DIR="${dir%/}" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
  done
  rm -rf "$logs"
  if [ "$(id -u)" = 0 ]; then
    local name
    for name in $(comm -13 <(printf '%s\n' "$users_before") <(test_users_made '^tfyarn-' | sort)); do
      remove_test_user "$name" || true
    done
  fi
}
trap cleanup EXIT

# The shell acts as the test user alice from here (env.sh: the cluster's containers run as their
# users, and LinuxContainerExecutor refuses root).
source .testcluster/env.sh
# The end-to-end tests run in lanes at once, most of their time being spent waiting for YARN
# rather than computing. `testlanes plan` deals them to the lanes by their measured times
# (bench/results/maketest-times.tsv, rewritten by every run in .maketest/times.tsv): each lane is
# a sequence of go test invocations of one package each, every one measured at most 300 s here,
# so that each binary ends far inside its 25-minute limit on a slower or busier machine; the
# tests of a side cluster (Kerberos, faults, Docker, privacy) run together in one lane, and that
# cluster is stopped as soon as they are done. Only end-to-end tests run here: the unit tests ran
# above. TFYARN_TEST_LANES sets how many lanes (default 4).
step_limit=25m
run_step() { # NAME DIR PATTERN: go test -json into files of its own, read by testlanes at the end
  local name=$1 dir=$2 pattern=$3 start=$SECONDS rc=0 count
  count=$(($(tr -cd '|' <<<"$pattern" | wc -c) + 1))
  go test -json -tags e2e -count=1 -timeout "$step_limit" -run "$pattern" "$dir" >"$logs/$name.json" 2>"$logs/$name.stderr" || rc=$?
  echo "=== make test: step $name: $dir ($count tests): exit $rc after $((SECONDS - start)) s" >"$logs/$name.summary"
  return "$rc"
}
run_lane() { # N: the plan's steps of lane N, one after the other
  local n=$1 rc=0 i=0 start=$SECONDS step kind dir pattern secs
  while IFS=$'\t' read -r step kind dir pattern secs; do
    [ "$step" = "$n" ] || continue
    case $kind in
      run)
        i=$((i + 1))
        run_step "$(printf '%d.%02d' "$n" "$i")" "$dir" "$pattern" || rc=1
        ;;
      stop)
        TC_DIR="$PWD/$dir" bash testcluster/cluster.sh down >/dev/null 2>&1 || true
        echo "make test: lane $n stopped $dir after $((SECONDS - start)) s: none of its tests is left" >&2
        ;;
    esac
  done <"$logs/plan"
  echo "make test: lane $n: exit $rc after $((SECONDS - start)) s" >&2
  return "$rc"
}
go build -o "$logs/testlanes" ./internal/testlanes
lanes=${TFYARN_TEST_LANES:-4}
"$logs/testlanes" plan -lanes "$lanes" >"$logs/plan"
start=$SECONDS
pids=()
for n in $(seq 1 "$lanes"); do
  run_lane "$n" &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
cat "$logs"/*.summary
cat "$logs"/*.stderr
mkdir -p .maketest
rm -f .maketest/*.json
"$logs/testlanes" report -times .maketest/times.tsv -limit "$step_limit" "$logs"/*.json || rc=1
cp "$logs"/*.json .maketest/ 2>/dev/null || true
if ! null_device; then
  echo "make test: a test replaced /dev/null ($(stat -c '%F, owner %U, mode %a, since %w' /dev/null 2>&1)): find it in the lanes' output above; restore it as root (rm -f /dev/null && mknod -m 666 /dev/null c 1 3)" >&2
  rc=1
fi
echo "make test: the end-to-end lanes took $((SECONDS - start)) s; exit $rc"
exit "$rc"

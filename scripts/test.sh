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

make --no-print-directory lint
make --no-print-directory build
go test -count=1 ./...

# The examples' end-to-end tests need the pinned environments: .venv (tensorflow-cpu), and
# .venv-pytorch and .venv-jax (--framework pytorch|jax), links into a per-machine cache.
bash scripts/tfenv.sh
bash scripts/tfenv.sh pytorch
bash scripts/tfenv.sh jax

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
  rm -rf "$logs"
}
trap cleanup EXIT

# The shell acts as the test user alice from here (env.sh: the cluster's containers run as their
# users, and LinuxContainerExecutor refuses root).
source .testcluster/env.sh
# cmd/tfyarn's end-to-end tests would not fit one 25-minute package limit on a loaded machine, nor
# the three invocations below the 30-minute budget of `make test` one after the other: they run
# as three lanes at once, each test binary with its own limit, most of their time being spent
# waiting for YARN rather than computing.
# Lane 1: every package's end-to-end tests but those below.
# Lane 2: the attacks of another user (TestE2EAttack*, issue 18), the tests on the fault suite's
# own cluster (faults, preemption, placement constraints, NodeManager processes killed or frozen,
# jobs over its three unlabelled hosts), the containers-as-their-users checks and the tasks in
# Docker images.
# Lane 3: every package's Kerberos tests but lane 2's (their own cluster; about 500 s together),
# then the PyTorch and JAX jobs (torch imports take seconds per process; about 4 minutes
# together on this machine), then cmd/tfyarn's TensorFlow jobs (below), each an invocation of
# its own.
second='^TestE2EAttack|^TestE2EFaults$|^TestE2EPreemption|^TestE2ESpread$|^TestE2EAffinity$|^TestE2ELinuxExecutor$|^TestE2ENode|^TestE2EDockerImage$'
frameworks='^TestE2EPyTorch$|^TestE2EPyTorchElastic$|^TestE2EJAX$'
lane() { # NAME COMMAND...: runs it with its output in a file of its own, then prints that file
  local name=$1 start=$SECONDS rc=0
  shift
  "$@" >"$logs/$name.log" 2>&1 || rc=$?
  {
    echo "=== make test: $name: exit $rc after $((SECONDS - start)) s"
    cat "$logs/$name.log"
  } >"$logs/$name.done"
  return "$rc"
}
# cmd/tfyarn's TensorFlow jobs, the web UI and TensorBoard (TF imports take seconds of CPU per
# process) run after the frameworks in lane 3, which is the shortest: lane 1 had come to 1456 s of
# its 1500 s limit at load 30 with them (bench/results/maketest-shape.md).
tensorflow='^TestE2ETF$|^TestE2ETF1$|^TestE2ETensorBoard$|^TestE2EWebUIHistoryGPU$|^TestE2EProgressKeras$'
lane1() { lane "e2e (all packages)" go test -tags e2e -count=1 -p 2 -timeout 25m -skip "$second|$frameworks|$tensorflow|Kerberos" ./...; }
lane2() { lane "e2e (attacks, faults, nodes)" go test -tags e2e -count=1 -timeout 25m -run "$second" ./cmd/tfyarn; }
lane3() {
  local rc=0
  lane "e2e (Kerberos)" go test -tags e2e -count=1 -p 2 -timeout 25m -run Kerberos -skip "$second|$frameworks" ./... || rc=$?
  lane "e2e (frameworks)" go test -tags e2e -count=1 -timeout 25m -run "$frameworks" ./cmd/tfyarn || rc=$?
  lane "e2e (TensorFlow)" go test -tags e2e -count=1 -timeout 25m -run "$tensorflow" ./cmd/tfyarn || rc=$?
  return "$rc"
}
start=$SECONDS
lane1 & one=$!
lane2 & two=$!
lane3 & three=$!
rc=0
wait "$one" || rc=1
wait "$two" || rc=1
wait "$three" || rc=1
for f in "$logs"/*.done; do cat "$f"; done
if ! null_device; then
  echo "make test: a test replaced /dev/null ($(stat -c '%F, owner %U, mode %a, since %w' /dev/null 2>&1)): find it in the lanes' output above; restore it as root (rm -f /dev/null && mknod -m 666 /dev/null c 1 3)" >&2
  rc=1
fi
echo "make test: the end-to-end lanes took $((SECONDS - start)) s; exit $rc"
exit "$rc"

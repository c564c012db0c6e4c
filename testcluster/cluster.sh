#!/usr/bin/env bash
# Starts, stops and checks the single-machine Hadoop test cluster.
#   cluster.sh up [plain|privacy|kerberos]   start in the background and wait until really ready (idempotent)
#   cluster.sh down                 stop it and every process it started
#   cluster.sh status               exit 0 when healthy, 1 otherwise
#   cluster.sh nm stop|start I      crash NodeManager I (no unregistering, its containers SIGKILLed; with
#                                   TC_NM_HOSTS=1 its process and its containers' die at once; the RM
#                                   declares it LOST after TC_NM_EXPIRY_MS), or start it again on the
#                                   same node id (returns once the RM lists it RUNNING)
#   cluster.sh nm freeze|thaw I     SIGSTOP / SIGCONT NodeManager I's process (its containers run on);
#                                   thaw returns once the RM lists it RUNNING again (TC_NM_HOSTS=1 only)
#   cluster.sh preempt CONTAINER_ID [WAIT_MS]
#                                   the CapacityScheduler preempts that container: its application's
#                                   next allocate response announces it (PreemptionMessage), and WAIT_MS
#                                   later (default: the cluster's max_wait_before_kill, 5000) it is killed
#                                   (exit status -102); returns after the kill
# HADOOP_VERSION=X: Hadoop X (3.3.6, 3.5.0, ...; default 3.4.2) in .testcluster-hadoop-X, every
# port shifted by the release's own amount (jvm.sh's TC_HADOOP_VERSIONS), beside the default cluster.
# Ports come from the environment (RM_PORT, SCHEDULER_PORT, TRACKER_PORT, ADMIN_PORT, RM_WEB_PORT,
# NN_PORT, NN_HTTP_PORT, and for kerberos KDC_PORT); the readiness wait from CLUSTER_TIMEOUT (seconds,
# default 180). Kerberos only: TOKEN_RENEW_MS and TOKEN_MAX_LIFETIME_MS, the HDFS delegation
# tokens' renew interval and maximum lifetime (default 20000 and 90000).
# NodeManagers (the production shape, the default): each a JVM of its own (Hadoop's NodeManager
# main class) on a loopback "host" of its own, NodeManager I on 127.0.1.(10+I), named
# nmI.tfyarn.test (this script maps the names in /etc/hosts when it runs as root; otherwise the
# NodeManagers are named by their addresses), every one on NM_PORT (RPC), NM_LOCALIZER_PORT and
# NM_WEB_PORT of its own address. TC_NM_HOSTS=0: MiniYARNCluster's NodeManagers instead, in the
# cluster's JVM, all named localhost (no `nm freeze|thaw`).
# Scale: TC_NODEMANAGERS (default 3, at least 2; NodeManager 1 carries the gpu label; 0 with
# TC_NM_HOSTS=1: none of Hadoop's, for the simulated ones of bench/scalesim),
# TC_NM_MEMORY_MB (default 8192) and TC_NM_VCORES (default 8) per NodeManager. TC_NM_EXPIRY_MS:
# how long a silent NodeManager stays RUNNING before the RM declares it LOST (default 30000:
# short for tests, yet no busy 2-core machine delays a heartbeat that long).
# Containers (TC_EXECUTOR=linux, the default; root only): each runs as the user who submitted it,
# under YARN's LinuxContainerExecutor with the test cluster's own setuid helper
# (testcluster/containerexecutor, built and installed as $TC_DIR/bin/container-executor), test
# users alice and bob, and cgroups (cpu, memory) when the machine lets us create them
# (TC_CGROUPS=none: without). It refuses root: env.sh makes the shell that sources it act as alice.
# TC_EXECUTOR=default: every container runs as the cluster's own user (DefaultContainerExecutor).
# Profile kerberos: also each NodeManager with a service principal of its host,
# <you>/nmI.tfyarn.test, in a keytab of its own, DIR/nm-I.keytab; and auth_to_local rules on
# every server and in the client configuration that make Alice.ML@EXAMPLE.COM the user alice.
# TC_DOCKER=1 (with TC_EXECUTOR=linux): also a Docker daemon of the cluster's own and the test image
# in it (testcluster/docker.sh); env.sh exports the image's name as TFYARN_TEST_IMAGE.
set -euo pipefail
. "$(dirname "$0")/jvm.sh"
. "$(dirname "$0")/linuxexecutor.sh"
. "$(dirname "$0")/docker.sh"
# HADOOP_VERSION=X (jvm.sh): Hadoop X's cluster, in .testcluster-hadoop-X on ports of its own.
tc_version_ports

RM_PORT=${RM_PORT:-8032}
SCHEDULER_PORT=${SCHEDULER_PORT:-8030}
TRACKER_PORT=${TRACKER_PORT:-8031}
ADMIN_PORT=${ADMIN_PORT:-8033}
RM_WEB_PORT=${RM_WEB_PORT:-8088}
NN_PORT=${NN_PORT:-8020}
NN_HTTP_PORT=${NN_HTTP_PORT:-9870}
NM_PORT=${NM_PORT:-8041}
NM_LOCALIZER_PORT=${NM_LOCALIZER_PORT:-8040}
NM_WEB_PORT=${NM_WEB_PORT:-8042}
KDC_PORT=${KDC_PORT:-8090}
TOKEN_RENEW_MS=${TOKEN_RENEW_MS:-20000}
TOKEN_MAX_LIFETIME_MS=${TOKEN_MAX_LIFETIME_MS:-90000}
CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-180}
asked_nodemanagers=${TC_NODEMANAGERS:-}
asked_nm_hosts=${TC_NM_HOSTS:-}
asked_executor=${TC_EXECUTOR:-}
TC_NODEMANAGERS=${TC_NODEMANAGERS:-3}
TC_NM_HOSTS=${TC_NM_HOSTS:-1}
TC_NM_MEMORY_MB=${TC_NM_MEMORY_MB:-8192}
TC_NM_VCORES=${TC_NM_VCORES:-8}
TC_NM_EXPIRY_MS=${TC_NM_EXPIRY_MS:-30000}
TC_EXECUTOR=${TC_EXECUTOR:-linux}
TC_DOCKER=${TC_DOCKER:-0}
export TC_DOCKER # the NodeManagers allow the Docker runtime when 1 (LinuxExecutor.java)
# With TC_DOCKER=1, NodeManager 1 (gpu-labelled) discovers its GPU with this stand-in (LinuxExecutor.java).
export TC_GPU_DISCOVERY=$TC_HOME/gpu/nvidia-smi

pidfile=$TC_DIR/cluster.pid
die() { echo "testcluster: $*" >&2; exit 2; }

alive() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

port_taken() { (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null; }

nm_address() { echo "127.0.1.$(( $1 + 10 ))"; }

# Maps nmI.tfyarn.test to NodeManager I's address in /etc/hosts (root only; lines are only ever
# added, never changed, since other clusters on this machine share them).
map_hosts() {
  local i want missing=()
  for i in $(seq 0 $((TC_NODEMANAGERS - 1))); do
    want="$(nm_address "$i") nm$i.tfyarn.test"
    grep -qxF "$want" /etc/hosts 2>/dev/null || missing+=("$want")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || [ ! -w /etc/hosts ]; then
    echo "testcluster: /etc/hosts does not map nm0.tfyarn.test ... (needs root): the NodeManagers are named by their addresses (127.0.1.10 ...)"
    return 0
  fi
  (
    flock 9
    for want in "${missing[@]}"; do
      grep -qxF "$want" /etc/hosts || printf '%s\n' "$want" >> /etc/hosts
    done
  ) 9>"$(root_lock_dir)/hosts.lock"
}

# root_lock_dir: prints /run/tfyarn-testcluster, made root's alone (0700), for the locks root takes
# on behalf of every cluster on this machine: not in world-writable /tmp, where another user could
# take the lock first or plant a link in its place.
root_lock_dir() {
  local d=/run/tfyarn-testcluster
  [ -L "$d" ] && die "$d is a symbolic link; remove it (only root should make it)"
  install -d -o root -g root -m 0700 "$d" || die "could not make $d (root only)"
  echo "$d"
}

# Healthy = our JVM is alive, declared itself ready, its in-process health report is fresh and
# says ok (NameNode out of safe mode, every NodeManager RUNNING, the gpu label in place), and the
# RM and NameNode RPC ports accept connections.
healthy() {
  alive && [ -f "$TC_DIR/ready" ] && [ -f "$TC_DIR/health" ] || return 1
  local state stamp
  read -r state _ < "$TC_DIR/health" || return 1
  stamp=$(awk '{print $NF}' "$TC_DIR/health")
  [ "$state" = ok ] && [ $(( $(date +%s) - stamp )) -lt 15 ] || return 1
  port_taken "$(sed -n 's/^rm=.*://p' "$TC_DIR/ready")" && port_taken "$(sed -n 's|^fs.defaultFS=.*:||p' "$TC_DIR/ready")"
}

running_profile() { sed -n 's/^profile=//p' "$TC_DIR/ready" 2>/dev/null; }

write_env() {
  cat > "$TC_DIR/env.sh" <<ENV
# Written by 'make cluster-up': source it to point Hadoop clients (and tfyarn) at the test cluster.
export HADOOP_CONF_DIR="$TC_DIR/conf"
export HADOOP_VERSION="$TC_HADOOP_VERSION"
export TFYARN_TESTCLUSTER_PROFILE="$(running_profile)"
ENV
  if grep -qx 'executor=linux' "$TC_DIR/ready" && [ "$(running_profile)" != kerberos ]; then
    # LinuxContainerExecutor runs each container as its submitting user and refuses root: the
    # shell that sources this acts as the test user alice (a Unix user the cluster made).
    cat >> "$TC_DIR/env.sh" <<ENV
export HADOOP_USER_NAME=alice
ENV
  fi
  if [ "$(running_profile)" = kerberos ]; then
    cat >> "$TC_DIR/env.sh" <<ENV
export KRB5_CONFIG="$TC_DIR/krb5.conf"
export KRB5CCNAME="FILE:$TC_DIR/alice.ccache"
export TFYARN_TEST_PRINCIPAL="alice@EXAMPLE.COM"
export TFYARN_TEST_KEYTAB="$TC_DIR/alice.keytab"
ENV
  fi
  if [ -s "$TC_DIR/docker/test-image" ]; then
    cat >> "$TC_DIR/env.sh" <<ENV
export TFYARN_TEST_IMAGE="$(cat "$TC_DIR/docker/test-image")"
ENV
  fi
}

stop() {
  if alive; then
    local pid; pid=$(cat "$pidfile")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  # Containers run in sessions of their own (setsid), outside the launcher's process group;
  # every one of them has the cluster directory in its command line.
  pkill -TERM -f -- "$TC_DIR/data" 2>/dev/null || true
  sleep 0.5
  pkill -KILL -f -- "$TC_DIR/data" 2>/dev/null || true
  docker_down
  lce_remove_cgroups
  # The setuid helper lives no longer than the cluster that needs it (every start builds it anew).
  rm -f "$TC_DIR/bin/container-executor"
  # Nor what the cluster's Docker daemon mounted below it (its network namespace).
  # (awk alone: the last mounted first; the claims tests run this with a PATH of a few tools.)
  local mnt
  for mnt in $(awk -v d="$TC_DIR/" 'index($2, d) == 1 { m[n++] = $2 } END { for (i = n - 1; i >= 0; i--) print m[i] }' /proc/self/mounts 2>/dev/null); do
    umount -l "$mnt" 2>/dev/null || true
  done
  rm -f "$pidfile" "$TC_DIR/ready" "$TC_DIR/health" "$TC_DIR/env.sh"
}

# close_inherited_fds closes every descriptor above stderr this shell inherited, such as a caller's
# lock (`flock FILE make test`): the cluster's JVM would otherwise hold it for the cluster's life.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  return 0
}

up() {
  local profile=${1:-plain}
  case "$profile" in plain|privacy|kerberos) ;; *) die "unknown PROFILE '$profile'; use plain, privacy or kerberos" ;; esac
  if [ "$profile" = kerberos ]; then
    # Kerberos in the production shape unless asked otherwise: 3 NodeManagers, each a process on
    # a host of its own with its own service principal and keytab, containers as their users.
    TC_NM_HOSTS=${asked_nm_hosts:-1}
    TC_EXECUTOR=${asked_executor:-linux}
    TC_NODEMANAGERS=${asked_nodemanagers:-3}
  fi
  mkdir -p "$TC_DIR/logs"
  # A cluster whose process runs but whose health stamp is late (its JVM starved on a loaded
  # machine) is waited for, not restarted: a restart kills every job of the tests using it (seen:
  # three e2e lanes' applications ended "Container released on a *lost* node"). Only a cluster
  # still unhealthy after a minute, or whose process is gone, is started again.
  if ! healthy && alive && [ -f "$TC_DIR/ready" ]; then
    echo "testcluster: running but not reporting healthy; waiting up to 60 s before restarting it ($(head -c 200 "$TC_DIR/health" 2>/dev/null))" >&2
    local waited
    for waited in $(seq 1 60); do
      healthy && break
      sleep 1
    done
  fi
  if healthy; then
    local have_nms; have_nms=$(sed -n 's/^nodemanagers=//p' "$TC_DIR/ready")
    if [ -n "$asked_nodemanagers" ] && [ "$have_nms" != "$asked_nodemanagers" ]; then
      die "a cluster with ${have_nms:-?} NodeManagers is running and TC_NODEMANAGERS=$asked_nodemanagers; run 'make cluster-down' first"
    fi
    local have_hosts; have_hosts=$(sed -n 's/^nodemanager-hosts=//p' "$TC_DIR/ready")
    if [ "$TC_NM_HOSTS" = 1 ] && [ "$have_hosts" != true ]; then
      die "a cluster whose NodeManagers share its JVM is running and TC_NM_HOSTS=1; run 'make cluster-down' first"
    fi
    if [ "$(running_profile)" = "$profile" ]; then
      write_env
      echo "testcluster: already up (profile $profile, pid $(cat "$pidfile")); reusing it"
      return 0
    fi
    die "a cluster with profile $(running_profile) is running; run 'make cluster-down' first"
  fi
  stop
  local p ports=("$RM_PORT" "$SCHEDULER_PORT" "$TRACKER_PORT" "$ADMIN_PORT" "$RM_WEB_PORT" "$NN_PORT" "$NN_HTTP_PORT")
  [ "$profile" = kerberos ] && ports+=("$KDC_PORT")
  for p in "${ports[@]}"; do
    port_taken "$p" && die "port $p is already in use by another process; stop it (ss -ltnp | grep :$p) or choose other ports (RM_PORT, NN_PORT, ...)"
  done
  local i a
  [ "$TC_NM_HOSTS" = 1 ] && for i in $(seq 0 $((TC_NODEMANAGERS - 1))); do
    a=$(nm_address "$i")
    for p in "$NM_PORT" "$NM_LOCALIZER_PORT" "$NM_WEB_PORT"; do
      port_taken "$p" "$a" && die "port $a:$p (NodeManager $i) is already in use by another process; stop it (ss -ltnp | grep :$p) or choose other ports (NM_PORT, NM_LOCALIZER_PORT, NM_WEB_PORT)"
    done
  done
  "$TC_HOME/build.sh"
  local executor_args=(--executor "$TC_EXECUTOR") classpath
  classpath=$(tc_classpath "$TC_HOME/conf")
  case "$TC_EXECUTOR" in
    default) ;;
    linux) lce_install; executor_args+=(--container-executor "$LCE_EXE" --cgroups "$LCE_CGROUPS"); classpath=$LCE_CLASSPATH ;;
    *) die "unknown TC_EXECUTOR '$TC_EXECUTOR'; use default or linux" ;;
  esac
  [ "$TC_NM_HOSTS" = 1 ] && map_hosts
  case "$TC_DOCKER" in
    0) ;;
    1) docker_up ;;
    *) die "unknown TC_DOCKER '$TC_DOCKER'; use 0 or 1" ;;
  esac
  rm -rf "$TC_DIR/data" "$TC_DIR/conf" "$TC_DIR/control" "$TC_DIR/failed" "$TC_DIR"/*.keytab "$TC_DIR"/*.ccache "$TC_DIR/alice.password" "$TC_DIR/krb5.conf"
  mkdir -p "$TC_DIR/data"
  local log=$TC_DIR/logs/cluster.log
  local start=$SECONDS
  echo "testcluster: starting Hadoop $TC_HADOOP_VERSION (profile $profile); log: $log"
  # The NodeManagers' localizers build their HDFS client from the site files on the classpath
  # (ContainerLocalizer runs in this JVM with DefaultContainerExecutor), not from the cluster's
  # Configuration object: under kerberos they must know about SASL data transfer too.
  # The cluster's processes (and the containers they start) must not borrow the caller's Kerberos
  # ticket: a task proves it works with its delegation tokens alone.
  unset KRB5CCNAME
  # Nor act as the caller's HADOOP_USER_NAME (env.sh sets alice): the cluster's own user, the one
  # who starts it, is the HDFS superuser and runs the daemons.
  unset HADOOP_USER_NAME
  local servercp=""
  if [ "$profile" = kerberos ]; then
    mkdir -p "$TC_DIR/server-conf"
    cat > "$TC_DIR/server-conf/hdfs-site.xml" <<'XML'
<?xml version="1.0"?>
<configuration>
  <property><name>dfs.data.transfer.protection</name><value>authentication</value></property>
  <property><name>dfs.block.access.token.enable</name><value>true</value></property>
</configuration>
XML
    servercp="$TC_DIR/server-conf:"
  fi
  # MiniYARNCluster puts NodeManager dirs under ./target/test/data (test.build.data), the
  # TC_NM_HOSTS ones theirs under data/nm-I: run from the cluster's data dir so they, and every
  # container's command line, live below $TC_DIR/data.
  (cd "$TC_DIR/data" && close_inherited_fds && exec setsid java -Xmx2g -Dtest.build.data="$TC_DIR/data/yarn" -XX:+UseSerialGC "${TC_OPENS[@]}" -Djava.net.preferIPv4Stack=true \
    -Dlog4j.configuration=file:"$TC_HOME/conf/log4j.properties" \
    -cp "$servercp$classpath" dev.tfyarn.testcluster.TestCluster "${executor_args[@]}" \
    --dir "$TC_DIR" --profile "$profile" \
    --rm-port "$RM_PORT" --scheduler-port "$SCHEDULER_PORT" --tracker-port "$TRACKER_PORT" \
    --admin-port "$ADMIN_PORT" --rm-web-port "$RM_WEB_PORT" --nn-port "$NN_PORT" --nn-http-port "$NN_HTTP_PORT" \
    --nodemanagers "$TC_NODEMANAGERS" --nm-hosts "$([ "$TC_NM_HOSTS" = 1 ] && echo true || echo false)" --nm-port "$NM_PORT" --nm-localizer-port "$NM_LOCALIZER_PORT" --nm-web-port "$NM_WEB_PORT" \
    --nm-memory-mb "$TC_NM_MEMORY_MB" --nm-vcores "$TC_NM_VCORES" --nm-expiry-ms "$TC_NM_EXPIRY_MS" \
    --kdc-port "$KDC_PORT" --token-renew-ms "$TOKEN_RENEW_MS" --token-max-lifetime-ms "$TOKEN_MAX_LIFETIME_MS" \
    </dev/null >"$log" 2>&1) &
  echo $! > "$pidfile"
  while [ $((SECONDS - start)) -lt "$CLUSTER_TIMEOUT" ]; do
    if ! alive; then
      local why; why=$(cat "$TC_DIR/failed" 2>/dev/null || grep -m1 -E 'Exception|Error' "$log" || echo "see the log")
      rm -f "$pidfile"
      die "the cluster JVM exited during start: $why (log: $log)"
    fi
    if healthy; then
      write_env
      echo "testcluster: ready in $((SECONDS - start))s (Hadoop $TC_HADOOP_VERSION, profile $profile); source $TC_DIR/env.sh"
      return 0
    fi
    sleep 1
  done
  stop
  die "the cluster was not ready within ${CLUSTER_TIMEOUT}s; see $log"
}

# One request to the running cluster's JVM (testcluster Faults): a file it polls, its answer in
# another; prints the answer's detail, exit 0 on ok, 1 on error, 2 when no cluster answers.
control() {
  alive && [ -f "$TC_DIR/ready" ] || die "no running cluster in $TC_DIR"
  local id req done_
  id="$(date +%s%N)-$$"
  req="$TC_DIR/control/$id.req"
  done_="$TC_DIR/control/$id.done"
  mkdir -p "$TC_DIR/control"
  echo "$*" > "$req.tmp" && mv "$req.tmp" "$req"
  for _ in $(seq 1 900); do
    if [ -f "$done_" ]; then
      local answer; answer=$(cat "$done_"); rm -f "$done_"
      case "$answer" in
        ok\ *) echo "testcluster: ${answer#ok }"; return 0 ;;
        *) echo "testcluster: $* failed: ${answer#error }" >&2; return 1 ;;
      esac
    fi
    sleep 0.1
  done
  rm -f "$req"
  die "the cluster did not answer '$*' within 90s"
}

case "${1:-}" in
  up) up "${2:-plain}" ;;
  down) stop; echo "testcluster: down" ;;
  status)
    if healthy; then echo "testcluster: up (profile $(running_profile), pid $(cat "$pidfile"))"; cat "$TC_DIR/ready"; exit 0; fi
    if alive; then echo "testcluster: running but not healthy: $(cat "$TC_DIR/health" 2>/dev/null || echo starting)"; exit 1; fi
    echo "testcluster: not running"; exit 1 ;;
  nm)
    case "${2:-}" in stop|start|freeze|thaw) ;; *) die "usage: cluster.sh nm stop|start|freeze|thaw INDEX" ;; esac
    [[ "${3:-}" =~ ^[0-9]+$ ]] || die "usage: cluster.sh nm stop|start|freeze|thaw INDEX (a NodeManager index, 0 to N-1)"
    control "nm-$2" "$3" ;;
  preempt)
    [[ "${2:-}" =~ ^container_ ]] || die "usage: cluster.sh preempt CONTAINER_ID [WAIT_MS]"
    [[ -z "${3:-}" || "$3" =~ ^[0-9]+$ ]] || die "usage: cluster.sh preempt CONTAINER_ID [WAIT_MS] (WAIT_MS: milliseconds)"
    control preempt "$2" ${3:+"$3"} ;;
  *) echo "usage: cluster.sh up [plain|privacy|kerberos] | down | status | nm stop|start|freeze|thaw I | preempt CONTAINER_ID [WAIT_MS]" >&2; exit 2 ;;
esac

# Sourced by the test cluster scripts: the java command line shared by the cluster launcher and
# Hadoop's own CLIs, so both run on the same jars with the same JDK 17 module openings.
TC_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TC_ROOT=$(dirname "$TC_HOME")
# HADOOP_VERSION picks the Hadoop release (default: the pom's, 3.4.2). Another release is built
# into target/hadoop-X and runs as a cluster of its own, .testcluster-hadoop-X, on ports of its own
# (tc_version_ports), beside the default one.
TC_DEFAULT_HADOOP=3.4.2
TC_HADOOP_VERSION=${HADOOP_VERSION:-$TC_DEFAULT_HADOOP}
# The releases with ports of their own: VERSION:SHIFT (added to every default port).
TC_HADOOP_VERSIONS=(3.3.6:2000 3.5.0:14000 3.2.4:16000 3.1.4:18000)
tc_version_shift() {
  local v
  for v in "${TC_HADOOP_VERSIONS[@]}"; do
    [ "${v%%:*}" = "$1" ] && { echo "${v#*:}"; return 0; }
  done
  return 1
}
if [ "$TC_HADOOP_VERSION" = "$TC_DEFAULT_HADOOP" ]; then
  TC_TARGET=$TC_HOME/target
  TC_DIR=$(realpath -m "${TC_DIR:-$TC_ROOT/.testcluster}")
else
  if ! tc_version_shift "$TC_HADOOP_VERSION" >/dev/null; then
    echo "testcluster: HADOOP_VERSION=$TC_HADOOP_VERSION has no ports of its own; use $TC_DEFAULT_HADOOP (the default) or one of: ${TC_HADOOP_VERSIONS[*]%%:*}" >&2
    exit 2
  fi
  TC_TARGET=$TC_HOME/target/hadoop-$TC_HADOOP_VERSION
  TC_DIR=$(realpath -m "${TC_DIR:-$TC_ROOT/.testcluster-hadoop-$TC_HADOOP_VERSION}")
fi
# tc_version_ports exports the ports of HADOOP_VERSION's cluster (the defaults shifted by its
# SHIFT), each unless the environment names it already.
tc_version_ports() {
  [ "$TC_HADOOP_VERSION" = "$TC_DEFAULT_HADOOP" ] && return 0
  local shift k d
  shift=$(tc_version_shift "$TC_HADOOP_VERSION")
  for k in RM_PORT:8032 SCHEDULER_PORT:8030 TRACKER_PORT:8031 ADMIN_PORT:8033 RM_WEB_PORT:8088 NN_PORT:8020 NN_HTTP_PORT:9870 \
    NM_PORT:8041 NM_LOCALIZER_PORT:8040 NM_WEB_PORT:8042 KDC_PORT:8090; do
    d=${k#*:}; k=${k%%:*}
    [ -n "${!k:-}" ] || export "$k=$((d + shift))"
  done
}
TC_OPENS=(
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
  --add-opens=java.base/java.util.zip=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/sun.security.util=ALL-UNNAMED
  --add-opens=java.base/sun.security.x509=ALL-UNNAMED
  --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED
)
tc_classpath() {
  # $1: the configuration directory that must come first.
  local jars; jars=$(cat "$TC_TARGET/classpath.txt")
  # Another user than the one who built it (a container's user under LinuxContainerExecutor)
  # may not read the builder's ~/.m2: a linux-executor cluster keeps every jar in $TC_DIR/lib,
  # readable by every user as a real cluster's Hadoop install is. Those copies come first even
  # for the builder, whose classpath may end up in a container (a peer's yarn.application.classpath).
  local shared jar
  if [ -d "$TC_DIR/lib" ]; then
    shared=$(printf '%s' "$jars" | sed "s#[^:]*/\.m2/repository/#$TC_DIR/lib/#g")
    local IFS=:
    for jar in $shared; do [ -r "$jar" ] || { shared=; break; }; done
    [ -n "$shared" ] && jars=$shared
  fi
  printf '%s:%s:%s' "$1" "$TC_TARGET/classes" "$jars"
}

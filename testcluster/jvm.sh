# Sourced by the test cluster scripts: the java command line shared by the cluster launcher and
# Hadoop's own CLIs, so both run on the same jars with the same JDK 17 module openings.
TC_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TC_ROOT=$(dirname "$TC_HOME")
TC_DIR=$(realpath -m "${TC_DIR:-$TC_ROOT/.testcluster}")
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
  local jars; jars=$(cat "$TC_HOME/target/classpath.txt")
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
  printf '%s:%s:%s' "$1" "$TC_HOME/target/classes" "$jars"
}

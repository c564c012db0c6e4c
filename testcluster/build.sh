#!/usr/bin/env bash
# Compiles the test cluster launcher and writes its runtime classpath to target/classpath.txt.
# Fetches Hadoop's jars from Maven Central into ~/.m2 on first use. HADOOP_VERSION=X (jvm.sh):
# Hadoop X's jars, the launcher built against them into target/hadoop-X.
set -euo pipefail
cd "$(dirname "$0")"
. ./jvm.sh
command -v java >/dev/null || { echo "testcluster: no 'java' on PATH; install JDK 17 (apt-get install openjdk-17-jdk-headless)" >&2; exit 2; }
command -v mvn >/dev/null || { echo "testcluster: no 'mvn' on PATH; install Maven (apt-get install maven)" >&2; exit 2; }
stamp=$TC_TARGET/.built
if [ -f "$stamp" ] && [ -f "$TC_TARGET/classpath.txt" ] && [ -z "$(find pom.xml src -newer "$stamp" -print -quit)" ]; then
  exit 0
fi
logdir=$TC_DIR/logs
mkdir -p "$logdir"
log=$logdir/maven.log
if ! mvn -B compile dependency:build-classpath -Dhadoop.version="$TC_HADOOP_VERSION" -Dtc.build="$TC_TARGET" \
  -Dmdep.outputFile="$TC_TARGET/classpath.txt" >"$log" 2>&1; then
  first=$(grep -m1 -E '^\[ERROR\]' "$log" | cut -c1-300)
  echo "testcluster: Maven could not fetch Hadoop $TC_HADOOP_VERSION's jars from Maven Central or compile the launcher (${first:-no detail}); check network/proxy settings for Maven, see $log, then re-run 'make cluster-up'" >&2
  exit 2
fi
touch "$stamp"

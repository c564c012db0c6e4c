# Sourced by bench/peers: points skein, tf-yarn and DistributedShell at the test cluster.
#   - bench/work/peers/conf: the test cluster's client configuration plus
#     yarn.application.classpath = the test cluster's own Hadoop jars (the peers' Java
#     ApplicationMasters need Hadoop on their classpath; a real cluster has it installed);
#   - bench/work/peers/bin/yarn: answers `yarn classpath --glob`, which skein's client runs
#     to find Hadoop's jars for its Java driver; bin/hdfs is testcluster/hadoop.sh's `hdfs`.
# Needs `make cluster-up` (or any e2e test) and bench/peers/setup.sh first.
PEERS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$PEERS_ROOT/testcluster/jvm.sh"
PEERS_WORK=$PEERS_ROOT/bench/work/peers
mkdir -p "$PEERS_WORK/conf" "$PEERS_WORK/bin"
cp "$TC_DIR"/conf/*.xml "$PEERS_WORK/conf/"
PEERS_CP=$(tc_classpath "$PEERS_WORK/conf")
python3 - "$PEERS_WORK/conf/yarn-site.xml" "$PEERS_CP" <<'PY'
import sys
p, cp = sys.argv[1], sys.argv[2]
s = open(p).read()
prop = "<property><name>yarn.application.classpath</name><value>%s</value></property>\n" % cp.replace(":", ",")
s = s.replace("</configuration>", prop + "</configuration>")
open(p, "w").write(s)
PY
cat >"$PEERS_WORK/bin/yarn" <<SH
#!/bin/sh
# bench/peers/env.sh: skein asks for Hadoop's classpath this way.
[ "\$1" = classpath ] && { echo "$PEERS_CP"; exit 0; }
echo "yarn shim: only 'yarn classpath' is supported" >&2; exit 2
SH
cat >"$PEERS_WORK/bin/hdfs" <<SH
#!/bin/sh
exec "$PEERS_ROOT/testcluster/hadoop.sh" hdfs "\$@"
SH
chmod +x "$PEERS_WORK/bin/yarn" "$PEERS_WORK/bin/hdfs"
export HADOOP_CONF_DIR=$PEERS_WORK/conf
export PATH=$PEERS_WORK/bin:$PEERS_ROOT/bench/work/peers-venv/bin:$PATH
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

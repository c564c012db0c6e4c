#!/usr/bin/env bash
# Hadoop's own Java CLIs, from the test cluster's jars, against .testcluster/conf — for
# cross-checking tfyarn against the reference implementation. Usage:
#   testcluster/hadoop.sh yarn node -list -showDetails
#   testcluster/hadoop.sh yarn application -status APP_ID
#   testcluster/hadoop.sh hdfs dfs -ls /
#   testcluster/hadoop.sh hdfs fetchdt --renewer root FILE     (kerberos: HDFS delegation token)
# Kerberos profile: with KRB5_CONFIG set (env.sh does it) the JVM reads that krb5.conf; Hadoop's
# UGI logs in from the ticket cache named by KRB5CCNAME (FILE:path or path), or uses only the
# delegation tokens in HADOOP_TOKEN_FILE_LOCATION (inside a YARN container).
# A short-lived JVM: the serial collector and the first compiler tier only, which halves its CPU
# time (1.4 s to 0.7 s for `hdfs dfs -ls /`; the tests run about a hundred of these per make test).
set -euo pipefail
. "$(dirname "$0")/jvm.sh"
conf=${HADOOP_CONF_DIR:-$TC_DIR/conf}
[ -f "$conf/yarn-site.xml" ] || { echo "hadoop.sh: no client config in $conf; run 'make cluster-up' first" >&2; exit 2; }
"$TC_HOME/build.sh"
tool=${1:-}; sub=${2:-}
shift 2 || { echo "usage: hadoop.sh yarn|hdfs SUBCOMMAND [ARGS...]" >&2; exit 2; }
case "$tool $sub" in
  "yarn node") class=org.apache.hadoop.yarn.client.cli.NodeCLI ;;
  "yarn application"|"yarn app") class=org.apache.hadoop.yarn.client.cli.ApplicationCLI; set -- application "$@" ;;
  "yarn applicationattempt") class=org.apache.hadoop.yarn.client.cli.ApplicationCLI; set -- applicationattempt "$@" ;;
  "yarn container") class=org.apache.hadoop.yarn.client.cli.ApplicationCLI; set -- container "$@" ;;
  "yarn queue") class=org.apache.hadoop.yarn.client.cli.QueueCLI ;;
  "yarn cluster") class=org.apache.hadoop.yarn.client.cli.ClusterCLI ;;
  "yarn logs") class=org.apache.hadoop.yarn.client.cli.LogsCLI ;;
  "yarn rmadmin") class=org.apache.hadoop.yarn.client.cli.RMAdminCLI ;;
  "hdfs dfs") class=org.apache.hadoop.fs.FsShell ;;
  "hdfs fetchdt") class=org.apache.hadoop.hdfs.tools.DelegationTokenFetcher ;;
  *) echo "hadoop.sh: unsupported command '$tool $sub'" >&2; exit 2 ;;
esac
krb=()
[ -n "${KRB5_CONFIG:-}" ] && krb=(-Djava.security.krb5.conf="$KRB5_CONFIG")
exec java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${TC_OPENS[@]}" "${krb[@]}" -Dhadoop.root.logger=WARN,console -Dlog4j.configuration=file:"$TC_HOME/conf/cli-log4j.properties" \
  -cp "$(tc_classpath "$conf")" "$class" "$@"

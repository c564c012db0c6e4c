#!/usr/bin/env bash
# Installs the peers bench/peers compares tfyarn with, apart from CI's `make test` path
# (bench/run.sh calls this): skein and tf-yarn from PyPI in their own venv, and Hadoop's
# DistributedShell from Maven Central at the test cluster's Hadoop version.
#   bench/work/peers-venv/   skein 0.8.2, tf-yarn 0.7.0, pyarrow < 18 (numpy 1.x beside TF 2.15),
#                            pex (cluster-pack's own dependency, pinned)
#   bench/work/peers/        hadoop-yarn-applications-distributedshell-<version>.jar
#   bench/work/peers/tfyarn-env.pex   TensorFlow, tf-yarn, skein, cloudpickle from that venv:
#                            tf-yarn's pyenv_zip_path must be a .pex (bench/peers/tf_yarn_run.py)
# Idempotent: a stamp makes a complete install a no-op.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=bench/work/peers-venv
JARDIR=bench/work/peers
STAMP=$VENV/.peers-stamp
HADOOP_VERSION=$(sed -n 's:.*<hadoop.version>\(.*\)</hadoop.version>.*:\1:p' testcluster/pom.xml | head -1)
[ -n "$HADOOP_VERSION" ] || { echo "peers: no hadoop.version in testcluster/pom.xml" >&2; exit 2; }
REQS=("skein==0.8.2" "tf-yarn==0.7.0" "pyarrow<18" "tensorflow-cpu==2.15.1" "pex==2.105.2")
PEX_REQS=("tensorflow-cpu==2.15.1" "tf-yarn==0.7.0" "skein==0.8.2" "cloudpickle" "pyarrow<18")
PEX=$JARDIR/tfyarn-env.pex
want="$HADOOP_VERSION ${REQS[*]}"
pex_want="$want pex: ${PEX_REQS[*]}"
if [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ] && [ -f "$JARDIR/distributedshell.jar" ]; then
  [ "$(cat "$PEX.stamp" 2>/dev/null)" = "$pex_want" ] && [ -f "$PEX" ] && exit 0
  build_pex_only=1
fi

build_pex() {
  # --venv-repository: the PEX holds exactly the venv's resolved versions, no second download.
  rm -f "$PEX" "$PEX.stamp"
  "$VENV/bin/pex" --venv-repository "$VENV" "${PEX_REQS[@]}" -o "$PEX.tmp" </dev/null
  mv "$PEX.tmp" "$PEX"
  echo "$pex_want" >"$PEX.stamp"
}
if [ -n "${build_pex_only:-}" ]; then build_pex; exit 0; fi

python3 -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input --progress-bar off -q "${REQS[@]}" </dev/null
"$VENV/bin/python" -c 'import skein, tf_yarn, tensorflow' </dev/null

mkdir -p "$JARDIR"
mvn -q -B dependency:copy -Dartifact="org.apache.hadoop:hadoop-yarn-applications-distributedshell:$HADOOP_VERSION" \
  -DoutputDirectory="$JARDIR" </dev/null
mv "$JARDIR/hadoop-yarn-applications-distributedshell-$HADOOP_VERSION.jar" "$JARDIR/distributedshell.jar"
echo "$want" >"$STAMP"
build_pex

#!/usr/bin/env bash
# Why tfyarn's uploads reach ~76% of Hadoop's own client on the transfer alone: colinmarc/hdfs
# keeps at most 5 packets (5 × 64 KiB) unacknowledged on a block's DataNode pipeline, Hadoop's
# DFSOutputStream 80 (dfs.client.write.max-packets-in-flight). This builds bench/uploadwin twice —
# against colinmarc/hdfs v2 as released, and against a scratch copy of it (module cache → $WORK)
# with that one constant set to 80, through an alternate go.mod with a replace (-modfile; nothing
# in the repository changes) — and uploads the same file ROUNDS times with each and with
# `hdfs dfs -put`, interleaved. Each line: client, DataNode-measured seconds, wall seconds, MB/s.
# usage: bench/uploadwin.sh FILE [ROUNDS]    (after make cluster-up; writes bench/results/uploadwin.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:?usage: bench/uploadwin.sh FILE [ROUNDS]}; rounds=${2:-5}
. .testcluster/env.sh
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
mod=$(go list -m -f '{{.Dir}}' github.com/colinmarc/hdfs/v2)
cp -r "$mod" "$WORK/hdfs" && chmod -R u+w "$WORK/hdfs"
sed -i 's/maxPacketsInQueue  = 5$/maxPacketsInQueue  = 80/' "$WORK/hdfs/internal/transfer/block_write_stream.go"
grep -q 'maxPacketsInQueue  = 80' "$WORK/hdfs/internal/transfer/block_write_stream.go"
cp go.mod "$WORK/go.mod"; cp go.sum "$WORK/go.sum"
echo "replace github.com/colinmarc/hdfs/v2 => $WORK/hdfs" >>"$WORK/go.mod"
go build -o "$WORK/stock" ./bench/uploadwin
go build -modfile="$WORK/go.mod" -o "$WORK/window80" ./bench/uploadwin
out=bench/results/uploadwin.txt
{ echo "# bench/uploadwin.sh $file $rounds — $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
  echo "# client DataNode_s wall_s MB/s (DataNode-measured)"
  for r in $(seq 1 "$rounds"); do
    "$WORK/stock" -client go -file "$file" | sed 's/^go/go-window5/'
    "$WORK/window80" -client go -file "$file" | sed 's/^go/go-window80/'
    "$WORK/stock" -client java -file "$file"
  done
} | tee "$out"

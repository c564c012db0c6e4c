#!/usr/bin/env bash
# Runs the benchmarks against the test cluster (started if needed) and writes
# bench/results/. Uses bin/tfyarn as built by 'make build'.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/tfyarn ] || CGO_ENABLED=0 go build -trimpath -o bin/tfyarn ./cmd/tfyarn
# '^TestBench' runs every benchmark: status (status_bench_test.go → results/status.*),
# the ApplicationMaster's memory and start-up time (am_bench_test.go → results/am.*),
# packing + uploading a ~500 MB env vs hdfs dfs -put (pack_bench_test.go → results/pack.*), and
# status/list vs Hadoop's Java CLI on the Kerberized cluster (kerberos_bench_test.go → results/kerberos.*),
# the same trivial job through tfyarn, skein and DistributedShell with YARN's floor
# (peers_bench_test.go → results/peers.*, and a small real TensorFlow job → results/peers-tf.*; the peers come from bench/peers/setup.sh, never from
# `make test`), a new env's first and later applications (envcache_bench_test.go → results/envcache.*),
# which archive format the NodeManager localizes fastest (envformat_bench_test.go → results/envformat.*), a new
# env shipped in layers vs one archive, and after one small change (envlayers_bench_test.go → results/envlayers.*),
# 200 tasks on a cluster of its own (scale_bench_test.go → results/scale.*), the AM's state
# machine alone at up to 10,000 tasks (core_bench_test.go → results/core.*), and a 2x2 PyTorch job's
# start to every rank inside init_process_group beside plain torchrun (pytorch_bench_test.go →
# results/pytorch-init.*), and a one-task job with and without a Docker image on the docker
# profile's cluster (docker_bench_test.go → results/docker.*), and there a TensorFlow
# MultiWorkerMirroredStrategy job in the image and on the hosts (→ results/docker-mwms.*).
bash bench/peers/setup.sh
exec go test -tags bench -run '^TestBench' -count=1 -timeout 60m -v ./bench/ "$@"

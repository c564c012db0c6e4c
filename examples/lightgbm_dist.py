"""Distributed LightGBM on tfyarn: data-parallel training of one model by every worker (CPU).

    tfyarn run --framework lightgbm --worker 3x1c,1g --python .venv-xgboost/bin/python examples/lightgbm_dist.py

tfyarn gives each worker LIGHTGBM_MACHINES (every worker's host:port), LIGHTGBM_LOCAL_LISTEN_PORT,
LIGHTGBM_NUM_MACHINES and LIGHTGBM_RANK; network_params() turns them into LightGBM's parameters.
Each worker makes its own shard of synthetic data (seeded by its rank; a real job reads its
shard, see docs/frameworks.md) and prints "worker R of N: model checksum C": the same C on
every worker, since they hold one model. --fail-worker I makes worker:I exit 3 before training
(the others wait for it until tfyarn ends them).
"""
import argparse
import hashlib
import json
import os
import socket
import sys
import time
from typing import Dict, Union

import lightgbm as lgb
import numpy as np


def network_params() -> Dict[str, Union[str, int]]:
    """LightGBM's network parameters from the variables tfyarn sets. LightGBM wants IP
    addresses in machines, and finds its own entry among its interfaces' addresses: each host
    is resolved here, and a loopback address (this machine, such as the test cluster's
    127.0.1.x nodes, which no interface lists) becomes 127.0.0.1."""
    machines = []
    for address in os.environ["LIGHTGBM_MACHINES"].split(","):
        host, port = address.rsplit(":", 1)
        ip = socket.gethostbyname(host)
        if ip.startswith("127."):
            ip = "127.0.0.1"
        machines.append(f"{ip}:{port}")
    return {
        "machines": ",".join(machines),
        "local_listen_port": int(os.environ["LIGHTGBM_LOCAL_LISTEN_PORT"]),
        "num_machines": int(os.environ["LIGHTGBM_NUM_MACHINES"]),
    }


def shard(rank: int, rows: int) -> lgb.Dataset:
    """This worker's shard: rows of a synthetic regression problem, different on every rank."""
    rng = np.random.default_rng(rank)
    x = rng.normal(size=(rows, 10))
    y = x @ np.arange(1.0, 11.0) + rng.normal(scale=0.1, size=rows)
    return lgb.Dataset(x, label=y)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fail-worker", type=int, default=-1)
    args = parser.parse_args()
    rank, world = int(os.environ["LIGHTGBM_RANK"]), int(os.environ["LIGHTGBM_NUM_MACHINES"])
    if rank == args.fail_worker:
        print(f"worker:{rank}: failing on purpose (--fail-worker)", file=sys.stderr, flush=True)
        return 3
    params = {
        "objective": "regression",
        "tree_learner": "data",
        "pre_partition": True,
        "num_threads": 1,
        "verbose": -1,
        "time_out": 2,
        **network_params(),
    }
    data = shard(rank, args.rows)
    start = time.monotonic()
    booster = lgb.train(params, data, num_boost_round=args.rounds)
    trained = time.monotonic()
    # The trees alone: the model's text also holds this worker's own parameters (its port).
    trees = json.dumps(booster.dump_model()["tree_info"], sort_keys=True)
    checksum = hashlib.sha256(trees.encode()).hexdigest()[:16]
    print(f"worker {rank} of {world}: model checksum {checksum}", flush=True)
    print(f"worker {rank} of {world}: met the others and trained in {trained - start:.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Distributed XGBoost on tfyarn: every worker trains one model together (CPU, hist).

    tfyarn run --framework xgboost --worker 3x1c,1g --python .venv-xgboost/bin/python examples/xgboost_dist.py

tfyarn serves XGBoost's tracker and gives each worker DMLC_TRACKER_URI, DMLC_TRACKER_PORT,
DMLC_TASK_ID (its task and its token, which the tracker checks) and DMLC_NUM_WORKER;
tracker_args() turns them into xgboost.collective's arguments.
Each worker makes its own shard of synthetic data (seeded by its rank; a real job reads its
shard, see docs/frameworks.md) and prints "worker R of N: model checksum C": the same C on
every worker, since they hold one model. --fail-worker I makes worker:I exit 3 before it joins
the collective (the others wait for it until tfyarn ends them).
"""
import argparse
import hashlib
import os
import sys
import time
from typing import Dict, Union

import numpy as np
import xgboost as xgb
from xgboost import collective


def tracker_args() -> Dict[str, Union[str, int]]:
    """xgboost.collective's arguments from the variables tfyarn sets."""
    return {
        "dmlc_tracker_uri": os.environ["DMLC_TRACKER_URI"],
        "dmlc_tracker_port": int(os.environ["DMLC_TRACKER_PORT"]),
        "dmlc_task_id": os.environ["DMLC_TASK_ID"],
    }


def shard(rank: int, rows: int) -> xgb.DMatrix:
    """This worker's shard: rows of a synthetic regression problem, different on every rank."""
    rng = np.random.default_rng(rank)
    x = rng.normal(size=(rows, 10))
    y = x @ np.arange(1.0, 11.0) + rng.normal(scale=0.1, size=rows)
    return xgb.DMatrix(x, label=y)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fail-worker", type=int, default=-1)
    args = parser.parse_args()
    task = os.environ["TFYARN_TASK"]  # worker:N (DMLC_TASK_ID also carries the worker's token for the tracker)
    if task == f"worker:{args.fail_worker}":
        print(f"{task}: failing on purpose (--fail-worker)", file=sys.stderr, flush=True)
        return 3
    joining = time.monotonic()
    with collective.CommunicatorContext(**tracker_args()):
        joined = time.monotonic()
        rank, world = collective.get_rank(), collective.get_world_size()
        data = shard(rank, args.rows)  # inside the collective: XGBoost agrees on its shape
        training = time.monotonic()
        params = {"tree_method": "hist", "objective": "reg:squarederror", "max_depth": 6, "nthread": 1}
        booster = xgb.train(params, data, num_boost_round=args.rounds)
        trained = time.monotonic()
        checksum = hashlib.sha256(bytes(booster.save_raw("json"))).hexdigest()[:16]
        print(f"worker {rank} of {world}: model checksum {checksum}", flush=True)
        print(f"worker {rank} of {world}: joined the collective in {joined - joining:.2f} s, trained in {trained - training:.2f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

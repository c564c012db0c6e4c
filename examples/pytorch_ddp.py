"""Data-parallel training of a tiny model with DistributedDataParallel on gloo (CPU).

Written for torchrun, runs unchanged under tfyarn:

    tfyarn run --framework pytorch --worker 2x1c,1g --nproc-per-node 2 \\
        --python .venv-pytorch/bin/python examples/pytorch_ddp.py -- --steps 5

Every process prints "rank R of W"; at the end each prints the checksum of the trained weights,
all-reduced over the ranks, which is the same everywhere when DDP kept the replicas in step.
"""
import argparse
import gc
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    dist.init_process_group("gloo")  # MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    print(f"rank {rank} of {world} (local rank {os.environ['LOCAL_RANK']} of "
          f"{os.environ['LOCAL_WORLD_SIZE']}, node {os.environ['GROUP_RANK']})", flush=True)

    torch.manual_seed(0)  # the same initial model everywhere; DDP broadcasts rank 0's anyway
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1000 + rank)  # each rank its own shard of data
    for step in range(args.steps):
        x = torch.randn(16, 8, generator=gen)
        y = x.sum(dim=1, keepdim=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()  # gradients all-reduced across the ranks
        opt.step()

    # Replicas in step: the weights' sum is equal on every rank, so the all-reduced sum is
    # world times it, the same number on every rank.
    local = torch.tensor([sum(p.detach().sum().item() for p in model.parameters())], dtype=torch.float64)
    total = local.clone()
    dist.all_reduce(total)
    print(f"rank {rank} checksum {total.item():.6f} (local {local.item():.6f})", flush=True)
    # Tear down while the interpreter is whole: gloo's runloop thread holds tensors, and when it
    # lets go of one during the interpreter's finalization (Py_FinalizeEx's collection) CPython
    # exits that thread under C++ frames and the process aborts ("terminate called without an
    # active exception", SIGABRT; a core dump showed it), now and then, on a busy machine.
    dist.barrier()
    del model, opt
    dist.destroy_process_group()
    gc.collect()


if __name__ == "__main__":
    main()

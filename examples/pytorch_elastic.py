"""Elastic data-parallel training: the job goes on when a worker is lost.

    tfyarn run --framework pytorch --worker 3x1c,2g --min-workers 2 \\
        --python .venv-pytorch/bin/python examples/pytorch_elastic.py -- --steps 20

torchrun's agents meet on the rendezvous store the ApplicationMaster serves. When a worker's
container is lost, the collective of the others fails, their agents meet again without it (at
least --min-workers) and start their processes again: TORCHELASTIC_RESTART_COUNT is one higher
and WORLD_SIZE smaller. A real script resumes from its checkpoint here; this one keeps its step
in a file per worker task and goes on from there. Every process prints "rank R of W (restart K)"
when it starts and "rank R of W finished" at the end.
"""
import argparse
import gc
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--step-seconds", type=float, default=0.5)
    parser.add_argument("--progress-dir", default=".", help="where each worker task keeps its step")
    parser.add_argument("--stop-file", default="", help="every rank ends at the next step once this file exists")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    print(f"rank {rank} of {world} (restart {restart})", flush=True)

    task = os.environ.get("TFYARN_TASK", "local").replace(":", "-")
    progress = os.path.join(args.progress_dir, f"{task}.local{os.environ['LOCAL_RANK']}.step")
    step = 0
    if os.path.exists(progress):
        with open(progress) as f:
            step = int(f.read().split()[0])
    # Every rank starts a round at the same step: the furthest any has reached.
    start = torch.tensor([step])
    dist.all_reduce(start, op=dist.ReduceOp.MAX)
    step = int(start.item())

    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)
    while step < args.steps:
        if args.stop_file:
            # Every rank must end at the same step: the flag is all-reduced.
            stop = torch.tensor([1 if os.path.exists(args.stop_file) else 0])
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)
            if stop.item():
                break
        x = torch.randn(16, 8, generator=gen)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        with open(progress + ".tmp", "w") as f:
            f.write(f"{step} {os.getpid()} {os.getppid()}\n")
        os.replace(progress + ".tmp", progress)
        time.sleep(args.step_seconds)
    print(f"rank {rank} of {world} finished at step {step} (restart {restart})", flush=True)
    dist.destroy_process_group()
    gc.collect()  # gloo's threads let go of their tensors now, not in the interpreter's finalization (pytorch_ddp.py)


if __name__ == "__main__":
    main()

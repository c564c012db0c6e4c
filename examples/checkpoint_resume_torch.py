"""DistributedDataParallel training whose checkpoints tfyarn keeps on HDFS (run --checkpoint).

tfyarn.checkpoint.torch.Checkpointer saves the model with torch.distributed.checkpoint into
TFYARN_CHECKPOINT_DIR every --every steps and, once YARN warns any rank of a preemption, at the
step under way (all ranks together). tfyarn keeps the checkpoints on HDFS and restores the
latest before every start of the task: after a preemption, a lost node or container, a failure,
or in a new job of the same name. Then this prints `resumed at step S`; a rank that starts
afresh prints `starting afresh`.

    tfyarn run --checkpoint --name ddp --framework pytorch --worker 2x1c,2g --max-restarts 1 \\
        --python .venv-pytorch/bin/python examples/checkpoint_resume_torch.py -- --steps 200
"""
import argparse
import gc
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import tfyarn.checkpoint.torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--every", type=int, default=20)
    parser.add_argument("--step-seconds", type=float, default=0.05, help="extra time per step (stands for a bigger model)")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    ckpt = tfyarn.checkpoint.torch.Checkpointer()
    state = {"model": model.state_dict(), "step": 0}
    if ckpt.load(state):
        model.load_state_dict(state["model"])
        print(f"rank {rank}: resumed at step {state['step']}", flush=True)
    else:
        print(f"rank {rank}: starting afresh", flush=True)
    gen = torch.Generator().manual_seed(1000 + rank)
    saved_on_warning = False
    for step in range(state["step"], args.steps):
        x = torch.randn(16, 8, generator=gen)
        loss = torch.nn.functional.mse_loss(model(x), x.sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()
        time.sleep(args.step_seconds)
        done = step + 1
        if not saved_on_warning and ckpt.warned():
            saved_on_warning = True
            ckpt.save({"model": model.state_dict(), "step": done})
            print(f"rank {rank}: checkpointed step {done} on the warning", flush=True)
        elif not saved_on_warning and done % args.every == 0:
            ckpt.save({"model": model.state_dict(), "step": done})
            print(f"rank {rank}: checkpointed step {done}", flush=True)
    print(f"rank {rank}: done at step {args.steps}", flush=True)
    dist.barrier()
    del model, opt
    dist.destroy_process_group()
    gc.collect()


if __name__ == "__main__":
    main()

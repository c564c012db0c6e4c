"""Prints when this rank is inside init_process_group: bench/pytorch_bench_test.go's probe."""
import time

import torch.distributed as dist

dist.init_process_group("gloo")
print(f"tfyarn-bench init_done rank {dist.get_rank()} of {dist.get_world_size()} at {time.time():.3f}", flush=True)
dist.barrier()
dist.destroy_process_group()

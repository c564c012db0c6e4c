"""A small checkpointer over torch.distributed.checkpoint into the task's tfyarn-kept directory.

``Checkpointer()`` saves a state dict with ``torch.distributed.checkpoint`` into
``TFYARN_CHECKPOINT_DIR/torch`` and marks it complete, so tfyarn keeps it on HDFS;
``load(state_dict)`` loads the one tfyarn restored before the task started:
every task's files (the replicated tensors, DistributedDataParallel's, all
written by rank 0, wherever torchrun placed it; each rank's own shards). ``warned()`` all-reduces whether YARN warned any rank of a
preemption, so all ranks save together at the same step.

    ckpt = tfyarn.checkpoint.torch.Checkpointer()
    state = {"model": model.state_dict(), "step": 0}
    if ckpt.load(state):
        model.load_state_dict(state["model"])
    for step in range(state["step"], steps):
        ...
        if ckpt.warned() or step % 100 == 0:
            ckpt.save({"model": model.state_dict(), "step": step + 1})
"""

from __future__ import annotations

import importlib
import os
import shutil
from typing import Any, Optional

from tfyarn import checkpoint

SUBDIR = "torch"
METADATA = ".metadata"  # what torch.distributed.checkpoint writes last, on the coordinator


class Checkpointer:
    """Saves and loads state dicts in TFYARN_CHECKPOINT_DIR/torch (see the module's doc)."""

    def __init__(self) -> None:
        self._torch: Any = importlib.import_module("torch")
        self._dist: Any = importlib.import_module("torch.distributed")
        self._dcp: Any = importlib.import_module("torch.distributed.checkpoint")
        self.path = os.path.join(checkpoint.directory(), SUBDIR)
        self._watch = checkpoint.PreemptionWatch()
        self._warned = False

    def load(self, state_dict: dict[str, Any]) -> bool:
        """Loads the restored checkpoint into state_dict in place; False when there is none."""
        if not checkpoint.restored() or not os.path.exists(os.path.join(self.path, METADATA)):
            return False
        self._dcp.load(state_dict, checkpoint_id=self.path)
        return True

    def save(self, state_dict: dict[str, Any], step: Optional[int] = None) -> None:
        """Saves state_dict (every rank calls it) and, once all ranks wrote theirs, has each
        container's first rank mark the checkpoint complete, with step when given (the same
        on every rank): then every task restores the newest step all of them saved."""
        first_in_container = os.environ.get("LOCAL_RANK", "0") == "0"
        if first_in_container:
            # Only this save's files: a task's directory also holds the other tasks' files it
            # restored, which must not go back to HDFS as this task's own.
            shutil.rmtree(self.path, ignore_errors=True)
        self._barrier()
        planner = self._dcp.DefaultSavePlanner(dedup_save_to_lowest_rank=True)
        writer = self._dcp.FileSystemWriter(self.path)
        self._dcp.save(state_dict, storage_writer=writer, planner=planner)
        self._barrier()
        if first_in_container:
            checkpoint.mark_complete(step=step)
        self._barrier()

    def _barrier(self) -> None:
        if self._dist.is_initialized():
            self._dist.barrier()

    def warned(self) -> bool:
        """Whether YARN warned any rank of a preemption (all ranks call it at the same step)."""
        if self._warned:
            return True
        mine = self._torch.tensor([1.0 if self._watch.warned else 0.0])
        if self._dist.is_initialized():
            self._dist.all_reduce(mine, op=self._dist.ReduceOp.MAX)
        self._warned = bool(mine.item() > 0)
        return self._warned

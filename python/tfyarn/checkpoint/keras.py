"""Keras' BackupAndRestore into the task's tfyarn-kept checkpoint directory.

``backup_and_restore(strategy)`` is a ``tf.keras.callbacks.BackupAndRestore``
whose backups go to ``TFYARN_CHECKPOINT_DIR/keras``, so tfyarn keeps them on
HDFS and restores the latest before the task starts again. It backs up at
every epoch's end and, once YARN warned of a
preemption, at the end of the batch under way. Under
MultiWorkerMirroredStrategy a backup is collective: at every batch's end the
workers all-reduce whether any was warned, and back up together. Only the
chief's backup is the checkpoint, so only the chief marks it complete.

The backup is kept when training ends (``delete_checkpoint=False``): a new
job of the same name resumes from it.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional, Union

from tfyarn import checkpoint

SUBDIR = "keras"


def backup_and_restore(
    strategy: Optional[Any] = None, steps_per_epoch: Optional[int] = None, save_freq: Optional[Union[str, int]] = None
) -> Any:
    """The callback, for ``model.fit(..., callbacks=[...])``. strategy is the one the model was
    built under (default: the current one). With steps_per_epoch (fit's), a backup keeps the
    batch, so a restart resumes at the batch after it; without, Keras resumes a backup taken
    mid-epoch at the next epoch's start. save_freq is Keras' (default: every epoch's end)."""
    freq: Union[str, int] = save_freq if save_freq is not None else (steps_per_epoch or "epoch")
    tf: Any = importlib.import_module("tensorflow")
    strat: Any = strategy if strategy is not None else tf.distribute.get_strategy()
    watch = checkpoint.PreemptionWatch()
    chief = bool(strat.extended.should_checkpoint)
    backup_dir = os.path.join(checkpoint.directory(), SUBDIR)

    class TfyarnBackupAndRestore(tf.keras.callbacks.BackupAndRestore):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(backup_dir, save_freq=freq, delete_checkpoint=False)
            self.backed_up_on_warning = False

        def _backup(self, epoch: int, batch: int = 0) -> None:
            super()._backup(epoch=epoch, batch=batch)
            if chief:
                checkpoint.mark_complete()

        def on_train_batch_end(self, batch: int, logs: Optional[dict[str, Any]] = None) -> None:
            super().on_train_batch_end(batch, logs)
            if self.backed_up_on_warning:
                return
            mine = 1.0 if watch.warned else 0.0
            # Every worker learns at the same batch whether any was warned.
            anyone = strat.reduce(tf.distribute.ReduceOp.SUM, strat.run(lambda: tf.constant(mine)), axis=None)
            if float(anyone) > 0:
                self.backed_up_on_warning = True
                self._backup(epoch=self._current_epoch, batch=batch)
                print(f"tfyarn.checkpoint.keras: backed up at epoch {self._current_epoch + 1} batch {batch} on YARN's warning",
                      file=sys.stderr, flush=True)

    return TfyarnBackupAndRestore()

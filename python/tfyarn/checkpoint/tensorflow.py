"""TensorFlow's PreemptionCheckpointHandler on tfyarn's preemption warning.

``preemption_checkpoint_handler(strategy, checkpoint_or_manager)`` is
``tf.distribute.experimental.PreemptionCheckpointHandler`` saving into
``TFYARN_CHECKPOINT_DIR/tf``, with a ``TerminationConfig`` whose watcher is
tfyarn's warning (SIGWINCH or the warning file). After the handler saved, the
chief marks the checkpoint complete, so tfyarn keeps it on HDFS.

Where TensorFlow's rules and tfyarn's disagree, tfyarn's win. TensorFlow's
handler exits the program after saving, with a code its platform restarts.
On YARN a program's own exit is the program's failure, counted toward
--max-restarts; only YARN's kill of the preempted container restarts the task
without counting. So the handler's exit waits for that kill, until the
warning's deadline and then ``kill_wait`` seconds more; a container YARN
never kills exits with EXIT_NOT_KILLED, which counts.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from typing import Any, Callable

from tfyarn import checkpoint

SUBDIR = "tf"
EXIT_NOT_KILLED = 75  # EX_TEMPFAIL: YARN warned, but never killed the container


def is_chief() -> bool:
    """Whether this task writes the checkpoint: the chief, or worker 0 without one (TF_CONFIG)."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task = tf_config.get("task", {})
    cluster = tf_config.get("cluster", {})
    if "chief" in cluster:
        return bool(task.get("type") == "chief")
    return bool(task.get("type", "worker") == "worker" and int(task.get("index", 0)) == 0)


def exit_after_save(
    watch: checkpoint.PreemptionWatch,
    chief: bool,
    kill_wait: float = 60.0,
    exit: Callable[[int], None] = os._exit,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], float] = time.time,
) -> Callable[[], None]:
    """The TerminationConfig's exit_fn: the chief marks the saved checkpoint complete; then
    every task waits for YARN's kill (see the module's doc)."""

    def exit_fn() -> None:
        if chief:
            checkpoint.mark_complete()
        deadline_ms = watch.deadline_unix_ms()
        until = (deadline_ms / 1000.0 if deadline_ms else now()) + kill_wait
        while now() < until:
            sleep(0.1)
        exit(EXIT_NOT_KILLED)

    return exit_fn


def preemption_checkpoint_handler(strategy: Any, checkpoint_or_manager: Any, kill_wait: float = 60.0) -> Any:
    """TensorFlow's PreemptionCheckpointHandler for strategy's cluster, on tfyarn's warning."""
    tf: Any = importlib.import_module("tensorflow")
    watch = checkpoint.PreemptionWatch()
    config = tf.distribute.experimental.TerminationConfig(
        termination_watcher_fn=lambda: watch.warned,
        exit_fn=exit_after_save(watch, is_chief(), kill_wait),
        grace_period=0,
    )
    return tf.distribute.experimental.PreemptionCheckpointHandler(
        strategy.cluster_resolver,
        checkpoint_or_manager,
        checkpoint_dir=os.path.join(checkpoint.directory(), SUBDIR),
        termination_config=config,
    )

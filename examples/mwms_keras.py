"""Synchronous data-parallel training with Keras and MultiWorkerMirroredStrategy.

Every task (the chief and each worker) holds a full copy of the model; gradients are
all-reduced across tasks after every step. tfyarn gives each task its TF_CONFIG, e.g.

    {"cluster": {"chief": ["host1:2222"], "worker": ["host2:2222", "host3:2222"]},
     "task": {"type": "worker", "index": 0}}

and the strategy reads it: nothing in this script names a host.

Run it (see examples/README.md):

    tfyarn run --local --chief 1c,1g --worker 2x1c,1g -- \
        $PWD/.venv/bin/python examples/mwms_keras.py --model-dir /tmp/mwms-model

With TensorBoard as a task of the job, serving the chief's summaries:

    tfyarn run --chief 1c,1g --worker 2x1c,1g --tensorboard --logdir /shared/mwms-logs \
        --python $PWD/.venv/bin/python examples/mwms_keras.py -- --log-dir /shared/mwms-logs

Surviving a failure: with --backup-dir on storage every task reaches (HDFS-backed or
NFS on a real cluster; any local directory on a one-machine cluster), Keras'
BackupAndRestore keeps the training state at every epoch's end, and after tfyarn
restarts the job (--max-restarts) training resumes from the last finished epoch:

    tfyarn run --chief 1c,1g --worker 1x1c,1g --max-restarts 1 \
        --python $PWD/.venv/bin/python examples/mwms_keras.py -- \
        --epochs 3 --backup-dir /shared/mwms-backup --fail-once-after-epoch 2

(--fail-once-after-epoch makes worker 0 exit 1 after that epoch on the job's first run,
TFYARN_RESTART=0, to show it.)

The data is generated here (no download): MNIST-sized 28x28 "images" whose label is
what a fixed random linear "teacher" says, so the model has something real to learn.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", help="where the chief saves the trained model (default: a new temp dir)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32, help="per task; the global batch is this times the number of tasks")
    p.add_argument("--log-dir", help="where the chief writes TensorBoard summaries (tfyarn run --tensorboard --logdir the same)")
    p.add_argument("--backup-dir", help="storage every task reaches, where Keras BackupAndRestore keeps the training "
                   "state: after a restart (tfyarn run --max-restarts) training resumes from the last finished epoch")
    p.add_argument("--fail-once-after-epoch", type=int, help="worker 0 exits 1 after this epoch (from 1) on the job's "
                   "first run (TFYARN_RESTART=0): shows --max-restarts with --backup-dir")
    return p.parse_args()


def synthetic_dataset(batch_size, seed=42, n=4096):
    """MNIST-shaped examples labelled by a fixed random teacher; the same on every task."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    images = rng.random((n, 28, 28), dtype=np.float32)
    teacher = rng.normal(size=(28 * 28, 10)).astype(np.float32)
    labels = np.argmax(images.reshape(n, -1) @ teacher, axis=1).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(n, seed=seed).repeat().batch(batch_size)
    # Each task reads its own share of the (in-memory) data, not of files.
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.with_options(options)


def build_model():
    import tensorflow as tf

    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(
        optimizer=tf.keras.optimizers.Adam(learning_rate=0.001),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def epoch_log(task, args):
    """Says which epoch training starts from (after a restart, where the backup left
    off), and makes worker 0 fail once when asked to."""
    import tensorflow as tf

    name = f"{task['type']}:{task['index']}"
    restart = os.environ.get("TFYARN_RESTART", "0")

    class EpochLog(tf.keras.callbacks.Callback):
        first = True

        def on_epoch_begin(self, epoch, logs=None):
            if self.first:
                self.first = False
                print(f"{name}: training from epoch {epoch + 1} of {args.epochs} (restart {restart})", flush=True)

        def on_epoch_end(self, epoch, logs=None):
            if (args.fail_once_after_epoch == epoch + 1 and restart == "0"
                    and task["type"] == "worker" and task["index"] == 0):
                print(f"{name}: failing after epoch {epoch + 1} on purpose (--fail-once-after-epoch)",
                      file=sys.stderr, flush=True)
                # At once: the other tasks wait in an all-reduce that never comes,
                # and a normal interpreter exit could wait with them.
                os._exit(1)

    return EpochLog()


def is_chief(task):
    # With a chief in the cluster it saves the model; without one, worker 0 does.
    cluster = json.loads(os.environ.get("TF_CONFIG", "{}")).get("cluster", {})
    return task["type"] == "chief" or (task["type"] == "worker" and task["index"] == 0 and "chief" not in cluster)


def main():
    args = parse_args()
    # One line, before the slow TensorFlow import: what tfyarn handed this task.
    print("TF_CONFIG=" + os.environ.get("TF_CONFIG", ""), flush=True)
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {"type": "chief", "index": 0})

    import tensorflow as tf

    # Must be created before any other TensorFlow op: it starts this task's gRPC server
    # on the port tfyarn reserved and connects to the other tasks.
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    print(f"{task['type']}:{task['index']}: {strategy.num_replicas_in_sync} replicas in sync", flush=True)

    global_batch = args.batch_size * strategy.num_replicas_in_sync
    dataset = synthetic_dataset(global_batch)
    with strategy.scope():
        model = build_model()
    callbacks = []
    if args.backup_dir:
        # First: the state of an epoch is backed up before anything that may fail.
        callbacks.append(tf.keras.callbacks.BackupAndRestore(backup_dir=args.backup_dir))
    callbacks.append(epoch_log(task, args))
    if args.log_dir:
        # Every task runs the callback (its summaries are collective-free);
        # only the chief's land in --log-dir, the others' in a scratch dir.
        log_dir = args.log_dir if is_chief(task) else tempfile.mkdtemp(prefix=f"mwms-logs-{task['type']}-{task['index']}-")
        callbacks.append(tf.keras.callbacks.TensorBoard(log_dir=log_dir, update_freq="epoch"))
    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, verbose=2, callbacks=callbacks)
    print(f"{task['type']}:{task['index']}: final loss {history.history['loss'][-1]:.4f}, "
          f"accuracy {history.history['accuracy'][-1]:.3f}", flush=True)

    # Saving is a collective operation under this strategy: every task must call save.
    # Only the chief's copy is kept; the others write to a temp dir and delete it, so
    # tasks never write over each other.
    if is_chief(task):
        model_dir = args.model_dir or tempfile.mkdtemp(prefix="mwms-model-")
        model.save(model_dir)
        print(f"{task['type']}:{task['index']}: saved the model to {model_dir}", flush=True)
    else:
        scratch = tempfile.mkdtemp(prefix=f"mwms-{task['type']}-{task['index']}-")
        model.save(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

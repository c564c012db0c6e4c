"""Keras MultiWorkerMirroredStrategy training that tfyarn checkpoints on HDFS.

tfyarn.checkpoint.keras.backup_and_restore() is Keras' BackupAndRestore into
TFYARN_CHECKPOINT_DIR: it backs up at every epoch's end and, once YARN warns of
a preemption, at the end of the batch under way (all workers together). tfyarn
keeps the backups on HDFS and restores the latest before every start of the task:
after a preemption, a lost node, a failure, or in a new job of the same name.
Then this prints `resumed at epoch E batch B`; a task that starts afresh prints
`starting afresh`.

    tfyarn run --checkpoint --name mnist --worker 2x1c,1g --python $PWD/.venv/bin/python \
        examples/checkpoint_resume.py -- --epochs 3

The data is generated here (no download), as in mwms_keras.py.
"""

import argparse
import json
import os
import sys
import time

import tfyarn.checkpoint
import tfyarn.checkpoint.keras


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32, help="per task")
    p.add_argument("--step-seconds", type=float, default=0.0, help="extra time per batch (stands for a bigger model)")
    return p.parse_args()


def synthetic_dataset(tf, batch_size, seed=42, n=4096):
    """MNIST-shaped examples labelled by a fixed random teacher; the same on every task."""
    import numpy as np

    rng = np.random.default_rng(seed)
    images = rng.random((n, 28, 28), dtype=np.float32)
    teacher = rng.normal(size=(28 * 28, 10)).astype(np.float32)
    labels = np.argmax(images.reshape(n, -1) @ teacher, axis=1).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(n, seed=seed).repeat().batch(batch_size)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return ds.with_options(options)


def main():
    args = parse_args()
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {"type": "worker", "index": 0})
    name = f"{task['type']}:{task['index']}"
    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input(shape=(28, 28)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(10),
        ])
        model.compile(optimizer=tf.keras.optimizers.Adam(0.001),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    backup = tfyarn.checkpoint.keras.backup_and_restore(strategy, steps_per_epoch=args.steps_per_epoch)

    class Report(tf.keras.callbacks.Callback):
        first = True

        def on_train_batch_begin(self, batch, logs=None):
            if self.first:
                self.first = False
                if tfyarn.checkpoint.restored():
                    print(f"{name}: resumed at epoch {backup._current_epoch + 1} batch {batch}", flush=True)
                else:
                    print(f"{name}: starting afresh", flush=True)
            if args.step_seconds:
                time.sleep(args.step_seconds)

        def on_epoch_end(self, epoch, logs=None):
            print(f"{name}: epoch {epoch + 1} done", flush=True)

    dataset = synthetic_dataset(tf, args.batch_size * strategy.num_replicas_in_sync)
    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, verbose=0, callbacks=[backup, Report()])
    losses = history.history.get("loss") or [float("nan")]
    print(f"{name}: done, final loss {losses[-1]:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

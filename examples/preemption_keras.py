"""Keras training that backs up its state when YARN is about to preempt it.

Keras' BackupAndRestore restores the training state a restarted task finds in
--backup-dir. PreemptionBackup, below, is a BackupAndRestore that backs up at
the end of every epoch and, as soon as YARN's preemption warning arrives, at the
end of the batch under way: the task restarted after the preemption (not counted
toward --max-restarts) resumes at the next batch instead of the last epoch's end.

The warning: tfyarn sets TFYARN_PREEMPTION_FILE in every task's environment.
When YARN's scheduler announces that it will preempt the task's container (or
the container of a task whose end restarts the whole cluster), that file
appears, holding one JSON line with the deadline, and the program gets SIGWINCH
(default action: nothing). The callback notes the signal, and also looks for the
file, which a warning that came while TensorFlow was still being imported left
without a signal the program could see.

Under MultiWorkerMirroredStrategy a backup is collective: every worker must take
it at the same batch. So the workers agree first: at each batch's end they
all-reduce whether any of them was warned (one scalar per batch), and all back
up together.

Run it (--backup-dir on storage every node reaches: HDFS-backed or NFS on a real
cluster; any local directory on the one-machine test cluster):

    tfyarn run --worker 2x1c,1g --python $PWD/.venv/bin/python \
        examples/preemption_keras.py -- --backup-dir /shared/keras-backup

The data is generated here (no download), as in mwms_keras.py.
"""

import argparse
import json
import os
import signal
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backup-dir", required=True, help="storage every task reaches, where BackupAndRestore keeps the training state")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32, help="per task")
    p.add_argument("--step-seconds", type=float, default=0.0, help="extra time per batch (stands for a bigger model)")
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


def preemption_backup(tf, strategy, name, args):
    """The BackupAndRestore callback that also backs up on YARN's warning."""
    warning_file = os.environ.get("TFYARN_PREEMPTION_FILE", "")
    warned = []

    # Installed as early as the callback is made; the handler only notes it.
    signal.signal(signal.SIGWINCH, lambda signum, frame: warned.append(signum))

    class PreemptionBackup(tf.keras.callbacks.BackupAndRestore):
        def __init__(self):
            # An integer save_freq keeps the batch in every backup, so a restart resumes at
            # the next batch; once per epoch's worth of batches is every epoch's end.
            super().__init__(args.backup_dir, save_freq=args.steps_per_epoch)
            self.backed_up = False
            self.first = True

        def on_train_batch_end(self, batch, logs=None):
            super().on_train_batch_end(batch, logs)
            if self.first:
                # Where this run started (after a restart: where the backup left off).
                self.first = False
                print(f"{name}: trained from epoch {self._current_epoch + 1} batch {batch} "
                      f"(restart {os.environ.get('TFYARN_RESTART', '0')})", flush=True)
            if args.step_seconds:
                time.sleep(args.step_seconds)
            if self.backed_up:
                return
            mine = bool(warned) or bool(warning_file) and os.path.exists(warning_file)
            # Every worker learns whether any was warned, at the same batch.
            anyone = strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(float(mine))), axis=None)
            if float(anyone) > 0:
                self.backed_up = True
                # BackupAndRestore's own backup, as its save_freq takes it (Keras 2.15).
                self._backup(epoch=self._current_epoch, batch=batch)
                why = ""
                if mine and os.path.exists(warning_file):
                    with open(warning_file) as f:
                        why = " (YARN preempts from " + json.load(f)["deadline"] + ")"
                print(f"{name}: backed up at epoch {self._current_epoch + 1} batch {batch}{why}", flush=True)

    return PreemptionBackup()


def main():
    args = parse_args()
    print("TF_CONFIG=" + os.environ.get("TF_CONFIG", ""), flush=True)
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {"type": "worker", "index": 0})
    name = f"{task['type']}:{task['index']}"

    import tensorflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    dataset = synthetic_dataset(args.batch_size * strategy.num_replicas_in_sync)
    with strategy.scope():
        model = build_model()
    backup = preemption_backup(tf, strategy, name, args)
    history = model.fit(dataset, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, verbose=0, callbacks=[backup])
    print(f"{name}: done, final loss {history.history['loss'][-1]:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Keras training that reports its progress to YARN through tfyarn.

tfyarn sets TFYARN_PROGRESS_FILE in every task's environment. A program writes
its progress there, replacing the file's content, as "step/total" (120/1000) or
a fraction (0.12). The task's launcher reads the file every second and sends
what changed to the ApplicationMaster, which reports the job's progress (the
chief's, else worker:0's) to YARN as the application's progress (`yarn
application -status`, the ResourceManager's UI) and shows it with a rate in
steps/s and an ETA in `tfyarn status` and the job's web page.

TfyarnProgress, below, is a Keras callback that writes the batch reached out of
epochs * steps_per_epoch at the end of every batch (at most every
min_interval seconds, and always at the end of an epoch). It writes aside and
renames, so the launcher never reads half a line. Outside tfyarn (no
TFYARN_PROGRESS_FILE) it does nothing.

Run it:

    tfyarn run --worker 1c,1g --python $PWD/.venv/bin/python \
        examples/tfyarn_progress.py -- --epochs 3 --steps-per-epoch 50
"""

import argparse
import os
import time

import tensorflow as tf


class TfyarnProgress(tf.keras.callbacks.Callback):
    """Writes step/total to TFYARN_PROGRESS_FILE as model.fit goes."""

    def __init__(self, min_interval=0.5):
        super().__init__()
        self.path = os.environ.get("TFYARN_PROGRESS_FILE")
        self.min_interval = min_interval
        self.epoch = 0
        self.last_write = 0.0

    def _steps(self):
        steps = self.params.get("steps") or 0
        return steps, steps * (self.params.get("epochs") or 1)

    def _write(self, step, total):
        if not self.path or total <= 0:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d/%d\n" % (min(step, total), total))
        os.replace(tmp, self.path)
        self.last_write = time.monotonic()

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if time.monotonic() - self.last_write >= self.min_interval:
            steps, total = self._steps()
            self._write(self.epoch * steps + batch + 1, total)

    def on_epoch_end(self, epoch, logs=None):
        steps, total = self._steps()
        self._write((epoch + 1) * steps, total)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=50)
    args = p.parse_args()

    import numpy as np

    rng = np.random.default_rng(42)
    x = rng.random((1024, 16), dtype=np.float32)
    y = (x.sum(axis=1) > 8).astype(np.int64)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(ds, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, callbacks=[TfyarnProgress()], verbose=2)
    print("trained %d steps" % (args.epochs * args.steps_per_epoch))


if __name__ == "__main__":
    main()

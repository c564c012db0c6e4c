"""Asynchronous training with ParameterServerStrategy: chief + workers + ps + evaluator.

The roles, as TensorFlow's parameter server training guide describes them:

  * ps tasks hold the model's variables;
  * workers run the training steps the chief sends them (they run no Python code of
    ours: they start a TensorFlow server and wait);
  * the chief is the coordinator: it builds the model, dispatches steps to the
    workers with model.fit, and writes checkpoints to --model-dir;
  * the evaluator is a side-car: it evaluates every new checkpoint in --model-dir
    until tfyarn stops it.

The chief's exit decides the job: once it is done, tfyarn stops the ps, the workers
and the evaluator (SIGTERM), which never end by themselves.

Run it (see examples/README.md):

    tfyarn run --local --chief 1c,1g --worker 2x1c,1g --ps 1c,1g --evaluator 1c,1g -- \
        $PWD/.venv/bin/python examples/ps_strategy.py --model-dir /tmp/pss-model

The chief and the evaluator must share --model-dir: by default it is a directory
named after the job (TFYARN_APP_ID) in the temp dir, which works when they run on
the same machine (--local). On a cluster give a shared filesystem path (hdfs://...).

Needs TensorFlow <= 2.15 (Keras 2): Keras 3 dropped ParameterServerStrategy support
in model.fit.

The process ends with os._exit, not by returning through Python's interpreter teardown:
see end_process.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model-dir", help="checkpoints, shared by the chief and the evaluator")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64, help="per worker")
    p.add_argument("--fail-worker-once", action="store_true",
                   help="worker 1 exits 1 once the chief has written its first checkpoint, on its first attempt "
                   "(TFYARN_TASK_ATTEMPT=0): with tfyarn run --max-restarts it is replaced in place, at its address, "
                   "while training goes on")
    return p.parse_args()


def default_model_dir():
    job = os.environ.get("TFYARN_APP_ID", "job")
    return os.path.join(tempfile.gettempdir(), f"pss-{job}")


def synthetic_data(n=4096, seed=7):
    """A small regression problem: y = x . w + 0.5 + noise, for one fixed random w.

    seed picks the examples; w is the same for every seed, so other seeds give
    held-out data from the same problem.
    """
    import numpy as np

    w = np.random.default_rng(0).normal(size=(16, 1)).astype(np.float32)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 16)).astype(np.float32)
    y = x @ w + 0.5 + 0.1 * rng.normal(size=(n, 1)).astype(np.float32)
    return x, y


def build_model():
    import tensorflow as tf

    model = tf.keras.Sequential([
        tf.keras.Input(shape=(16,)),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    return model


def fail_once_later(model_dir, name):
    """Exits 1 once the chief's first checkpoint is in model_dir (--fail-worker-once)."""
    import threading

    def watch():
        while not any(f.startswith("ckpt-1") for f in os.listdir(model_dir)):
            time.sleep(0.2)
        print(f"{name}: failing on purpose after the first checkpoint (--fail-worker-once)", file=sys.stderr, flush=True)
        os._exit(1)

    os.makedirs(model_dir, exist_ok=True)
    threading.Thread(target=watch, daemon=True).start()


def run_server(resolver, task_type, task_index):
    """ps and workers: serve the chief's requests until tfyarn stops this task."""
    import tensorflow as tf

    # If a worker loses touch with a ps, report it to the chief instead of hanging.
    os.environ["GRPC_FAIL_FAST"] = "use_caller"
    server = tf.distribute.Server(
        resolver.cluster_spec(),
        job_name=task_type,
        task_index=task_index,
        protocol=resolver.rpc_layer or "grpc",
        start=True,
    )
    print(f"{task_type}:{task_index}: serving at {server.target}", flush=True)
    # Blocks forever. SIGTERM (tfyarn's stop order) ends the process: Python keeps the
    # default action for SIGTERM, so nothing here needs to handle it.
    server.join()


def run_chief(resolver, args, model_dir):
    """The coordinator: model.fit dispatches each step to a free worker."""
    import tensorflow as tf

    strategy = tf.distribute.ParameterServerStrategy(resolver)
    x, y = synthetic_data()

    def dataset_fn(input_context):
        # Called on each worker; the input pipeline runs there, not on the chief.
        batch = input_context.get_per_replica_batch_size(args.batch_size * strategy.num_replicas_in_sync)
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x)).repeat().batch(batch)
        return ds.prefetch(2)

    with strategy.scope():
        model = build_model()
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse", steps_per_execution=5)

    os.makedirs(model_dir, exist_ok=True)
    checkpoint = tf.keras.callbacks.ModelCheckpoint(
        filepath=os.path.join(model_dir, "ckpt-{epoch}"), save_weights_only=True)

    class EpochLog(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(f"chief: epoch {epoch + 1} done, loss {logs['loss']:.4f}", flush=True)

    history = model.fit(
        tf.keras.utils.experimental.DatasetCreator(dataset_fn),
        epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch,
        callbacks=[checkpoint, EpochLog()],
        verbose=2,
    )
    print(f"chief: trained {args.epochs} epochs, final loss {history.history['loss'][-1]:.4f}; "
          f"checkpoints in {model_dir}", flush=True)


def run_evaluator(model_dir):
    """Side-car evaluation: evaluate each new checkpoint as the chief writes it.

    SidecarEvaluator waits for checkpoints forever; the job ends it (SIGTERM) once the
    chief is done.
    """
    import tensorflow as tf

    x, y = synthetic_data(n=1024, seed=8)  # held-out data
    model = build_model()
    model.compile(loss="mse")
    os.makedirs(model_dir, exist_ok=True)
    print(f"evaluator: watching {model_dir} for checkpoints", flush=True)

    class Report(tf.keras.callbacks.Callback):
        def on_test_end(self, logs=None):
            print(f"evaluator: checkpoint evaluated, loss {logs['loss']:.4f}", flush=True)

    tf.keras.utils.SidecarEvaluator(
        model=model,
        data=tf.data.Dataset.from_tensor_slices((x, y)).batch(256),
        checkpoint_dir=model_dir,
        steps=4,
        max_evaluations=None,  # until stopped
        callbacks=[Report()],
    ).start()


def main():
    args = parse_args()
    tf_config = os.environ.get("TF_CONFIG", "")
    # One line, before the slow TensorFlow import: what tfyarn handed this task.
    print("TF_CONFIG=" + tf_config, flush=True)
    task = json.loads(tf_config)["task"]
    model_dir = args.model_dir or default_model_dir()

    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if task["type"] in ("ps", "worker"):
        if (args.fail_worker_once and task["type"] == "worker" and task["index"] == 1
                and os.environ.get("TFYARN_TASK_ATTEMPT", "0") == "0"):
            fail_once_later(model_dir, "worker:1")
        run_server(resolver, task["type"], task["index"])
    elif task["type"] == "evaluator":
        run_evaluator(model_dir)
    else:
        start = time.time()
        run_chief(resolver, args, model_dir)
        print(f"chief: done in {time.time() - start:.1f}s", flush=True)
    return 0


def end_process(code):
    """Flushes our output and ends the process at once, skipping the interpreter's teardown.

    The chief's ClusterCoordinator keeps daemon threads (WorkerPreemptionHandler, one
    WorkerClosureProcessingLoop per worker) that call into TensorFlow's C++ runtime with
    the GIL released. When a worker fails late in training, model.fit can return while
    those threads are still reconnecting to its replacement (update_server_def, the
    worker's dataset rebuilt on it). If such a call returns while the interpreter is
    finalizing, Python before 3.14 ends the thread with pthread_exit (cpython gh-87135), whose
    forced unwind through TensorFlow's C++ frames aborts the process: "terminate called
    after throwing an instance of ''", "FATAL: exception not rethrown", SIGABRT, and a
    job that trained to its last epoch fails. Nothing here needs the teardown: the
    checkpoints are written before model.fit returns.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except SystemExit as e:  # argparse: --help, bad arguments
        code = 0 if e.code is None else e.code if isinstance(e.code, int) else 1
    except BaseException:  # what Python would print, with its exit code
        traceback.print_exc()
    end_process(code)

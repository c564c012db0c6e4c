"""TF1-style between-graph replication: the TFMesos / TensorFlow-on-Marathon way.

Older TensorFlow 1.x scripts take the cluster on their command line instead of
TF_CONFIG. tfyarn fills in the placeholders {ps_hosts} {worker_hosts} {job_name}
{task_index} in each task's arguments:

    tfyarn run --local --worker 2x1c,1g --ps 1c,1g -- \
        $PWD/.venv/bin/python examples/tf1_between_graph.py \
        --ps_hosts {ps_hosts} --worker_hosts {worker_hosts} \
        --job_name {job_name} --task_index {task_index}

(quote the braces if your shell expands them). Each worker builds its own copy of the
graph ("between-graph"), with the variables placed on the ps tasks by
replica_device_setter, and trains asynchronously. Worker 0 is the chief: it
initializes the variables and its exit decides the job. The ps tasks serve until
tfyarn stops them once worker 0 is done.

The model is a tiny linear regression, y = 3x + 2, on data generated here.
"""

import argparse
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ps_hosts", required=True, help="comma-separated host:port of the ps tasks")
    p.add_argument("--worker_hosts", required=True, help="comma-separated host:port of the workers")
    p.add_argument("--job_name", required=True, choices=["ps", "worker"])
    p.add_argument("--task_index", type=int, required=True)
    p.add_argument("--steps", type=int, default=200, help="global steps, summed over all workers")
    return p.parse_args()


def wait_for_chief(tf, target, config, timeout=300):
    """Block until the chief has initialized the variables on the ps.

    MonitoredTrainingSession makes non-chief workers poll for this every 30 s, which
    is longer than this whole example; poll every half second first instead.
    """
    deadline = time.time() + timeout
    uninitialized = tf.report_uninitialized_variables()
    with tf.Session(target, config=config) as sess:
        while len(sess.run(uninitialized)) > 0:
            if time.time() > deadline:
                raise TimeoutError("the chief (worker 0) did not initialize the variables in time")
            time.sleep(0.5)


def main():
    args = parse_args()
    # What tfyarn handed this task: the same cluster, as TF_CONFIG, for TF2 scripts.
    print("TF_CONFIG=" + os.environ.get("TF_CONFIG", ""), flush=True)

    import numpy as np
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()  # TF1 graphs and sessions
    cluster = tf.train.ClusterSpec({
        "ps": args.ps_hosts.split(","),
        "worker": args.worker_hosts.split(","),
    })
    server = tf.distribute.Server(cluster, job_name=args.job_name, task_index=args.task_index)
    name = f"{args.job_name}:{args.task_index}"

    if args.job_name == "ps":
        print(f"{name}: serving variables at {server.target}", flush=True)
        # Blocks forever; tfyarn's SIGTERM ends the process (Python's default action).
        server.join()
        return 0

    is_chief = args.task_index == 0
    # Place the variables on the ps tasks, the computation on this worker.
    with tf.device(tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{args.task_index}", cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, shape=[None, 1])
        y = tf.placeholder(tf.float32, shape=[None, 1])
        w = tf.get_variable("w", shape=[1, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", shape=[1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

    # Talk only to the ps tasks and to itself: by default a session waits for every
    # task of the cluster, so one slow worker would hold up all the others.
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{args.task_index}"])
    if not is_chief:
        wait_for_chief(tf, server.target, config)

    rng = np.random.default_rng(args.task_index)
    hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
    # A worker that starts late may find the training already over: no step at all.
    local_steps, step, l = 0, None, float("nan")
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, config=config, hooks=hooks,
            log_step_count_steps=0) as sess:
        while not sess.should_stop():
            xs = rng.uniform(-1, 1, size=(32, 1)).astype(np.float32)
            ys = 3 * xs + 2 + rng.normal(0, 0.05, size=(32, 1)).astype(np.float32)
            _, step, l = sess.run([train_op, global_step, loss], feed_dict={x: xs, y: ys})
            local_steps += 1
            if local_steps % 50 == 0:
                print(f"{name}: global step {step}, loss {l:.4f}", flush=True)
    print(f"{name}: done at global step {step} after {local_steps} local steps, loss {l:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Runs one tf-yarn 0.7.0 application (bench/peers): a tiny Estimator experiment, the
Estimator form of TestBenchPeersTF's Keras job (a Dense(16, relu) + Dense(1) regression of
x.sum(1) over 256 random rows of 8 features, batches of 32, 2 epochs = 16 steps, Adam, MSE),
on the tasks TOPOLOGY names, '+'-separated (chief, chief+ps, chief+worker), each of 1 vcore and
2 GiB. Prints 'APP_ID FINAL_STATUS' on stdout;
exit 0 iff SUCCEEDED.
usage: tf_yarn_run.py TOPOLOGY PEX_URI
PEX_URI is the PEX bench/peers/setup.sh builds (TensorFlow, tf-yarn, skein, cloudpickle), put
on HDFS beforehand (a full hdfs:// URI ending in .pex): given as pyenv_zip_path, tf-yarn ships
it as is instead of building and uploading one through cluster-pack (which needs libhdfs)."""
import logging
import sys

import skein
from tf_yarn.tensorflow import Experiment, TaskSpec, run_on_yarn

logging.basicConfig(level="INFO")


def experiment_fn() -> Experiment:
    # Imported inside: cloudpickle ships this function by value to the containers.
    import numpy as np
    import tensorflow as tf

    def input_fn():
        x = np.random.rand(256, 8).astype("float32")
        y = x.sum(1, keepdims=True)
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(32).repeat(2)

    def model_fn(features, labels, mode):
        h = tf.keras.layers.Dense(16, activation="relu")(features)
        pred = tf.keras.layers.Dense(1)(h)
        loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
        train_op = tf.compat.v1.train.AdamOptimizer().minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op, predictions=pred)

    estimator = tf.estimator.Estimator(model_fn=model_fn)
    return Experiment(estimator,
                      tf.estimator.TrainSpec(input_fn, max_steps=16),
                      tf.estimator.EvalSpec(input_fn, steps=1))


topology, pex = sys.argv[1], sys.argv[2]
specs = {t: TaskSpec(memory="2 GiB", vcores=1) for t in topology.split("+")}
# run_on_yarn returns metrics, neither the application nor its final status (it returns
# normally on KILLED too), and closes the client: note both from the calls it makes.
submitted, final = [], ["UNKNOWN"]


class NotingClient(skein.Client):
    def submit_and_connect(self, spec):
        app = super().submit_and_connect(spec)
        submitted.append(app.id)
        return app

    def application_report(self, app_id):
        r = super().application_report(app_id)
        final[0] = str(r.final_status).upper()
        return r


client = NotingClient()
try:
    run_on_yarn(experiment_fn, specs, pyenv_zip_path=pex, skein_client=client,
                name="bench-peers-tf-yarn")
except Exception:  # RunFailed (the job failed), or the client's own failure
    logging.exception("tf-yarn run failed")
finally:
    client.close()
print(submitted[0] if submitted else "no-application", final[0])
sys.exit(0 if final[0] == "SUCCEEDED" else 1)

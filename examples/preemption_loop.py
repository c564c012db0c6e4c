"""A plain training loop that checkpoints when YARN is about to preempt it.

tfyarn sets TFYARN_PREEMPTION_FILE in every task's environment. When YARN's
scheduler announces that it will preempt the task's container (or the container
of a task whose end restarts the whole cluster), the file appears, holding one
JSON line:

    {"deadline":"2026-11-25T20:31:07.412Z","deadline_unix_ms":1795638667412,"reason":"...","task":"worker:0","container":"container_..."}

and the program's process group gets SIGWINCH, whose default action is to do
nothing. This loop notes the signal and, at the end of the step under way,
writes its checkpoint (the step reached and its state) to --checkpoint-dir, then
trains on until YARN ends the container. tfyarn starts the task again, without
counting it toward --max-restarts, and the new run resumes from the checkpoint.

It also looks for the file at every step: a warning that came while the program
was still starting, before its handler was installed, left the file but no
signal it could see.

Run it (--checkpoint-dir on storage every node reaches: HDFS-backed or NFS on a
real cluster; any local directory on the one-machine test cluster):

    tfyarn run --worker 1c,256m -- python3 $PWD/examples/preemption_loop.py \
        --checkpoint-dir /shared/loop-checkpoints --steps 400
"""

import argparse
import json
import os
import signal
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint-dir", required=True, help="where each task keeps its checkpoint, on storage every node reaches")
    p.add_argument("--steps", type=int, default=400, help="training steps in all")
    p.add_argument("--step-seconds", type=float, default=0.05, help="how long one step takes (stands for real work)")
    return p.parse_args()


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"step": 0, "total": 0}


def save(path, state):
    # Aside, then renamed: a kill in the middle leaves the previous checkpoint whole.
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    args = parse_args()
    task = os.environ.get("TFYARN_TASK", "worker:0")
    warning_file = os.environ.get("TFYARN_PREEMPTION_FILE", "")
    warned = False

    def on_warning(signum, frame):
        nonlocal warned
        warned = True  # act at the end of the step: the handler only notes it

    signal.signal(signal.SIGWINCH, on_warning)

    os.makedirs(args.checkpoint_dir, exist_ok=True)
    path = os.path.join(args.checkpoint_dir, task.replace(":", "-") + ".json")
    state = load(path)
    print(f"{task}: starting at step {state['step']} of {args.steps} (restart {os.environ.get('TFYARN_RESTART', '0')})", flush=True)
    checkpointed = False
    while state["step"] < args.steps:
        time.sleep(args.step_seconds)  # one training step
        state["step"] += 1
        state["total"] += state["step"]
        if not checkpointed and (warned or (warning_file and os.path.exists(warning_file))):
            save(path, state)
            checkpointed = True
            deadline = "soon"  # a SIGWINCH from elsewhere comes without the file
            if warning_file and os.path.exists(warning_file):
                with open(warning_file) as f:
                    deadline = json.load(f)["deadline"]
            print(f"{task}: YARN preempts this container from {deadline}: checkpointed step {state['step']}", flush=True)
    print(f"{task}: done at step {state['step']} (total {state['total']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

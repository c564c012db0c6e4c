"""A plain training loop whose checkpoints tfyarn keeps on HDFS (run --checkpoint).

Every task writes its state into TFYARN_CHECKPOINT_DIR, a local directory, and
marks it complete (tfyarn.checkpoint.mark_complete) every --every steps and at
the end of the step under way once YARN warns of a preemption. tfyarn's launcher
uploads each marked checkpoint to HDFS and, at every start of the task (after a
preemption, a lost node, a failure, or in a new job of the same name), restores
the latest before the program starts. The loop then prints `resumed at step N`.

    tfyarn run --checkpoint --name loop --worker 1c,256m -- python3 examples/checkpoint_loop.py --steps 400
"""

import argparse
import json
import os
import time

from tfyarn import checkpoint


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=400, help="training steps in all")
    p.add_argument("--every", type=int, default=50, help="checkpoint every this many steps")
    p.add_argument("--step-seconds", type=float, default=0.05, help="how long one step takes (stands for real work)")
    args = p.parse_args()
    task = os.environ.get("TFYARN_TASK", "worker:0")
    watch = checkpoint.PreemptionWatch()
    state_file = os.path.join(checkpoint.directory(), "state.json")
    state = {"step": 0, "total": 0}
    if checkpoint.restored():
        with open(state_file) as f:
            state = json.load(f)
        print(f"{task}: resumed at step {state['step']} (checkpoint {checkpoint.restored()})", flush=True)
    else:
        print(f"{task}: starting afresh", flush=True)

    def save() -> None:
        with open(state_file + ".tmp", "w") as f:
            json.dump(state, f)
        os.replace(state_file + ".tmp", state_file)
        checkpoint.mark_complete()

    told = False
    while state["step"] < args.steps:
        time.sleep(args.step_seconds)  # one training step
        state["step"] += 1
        state["total"] += state["step"]
        if watch.warned and not told:
            save()
            told = True
            print(f"{task}: checkpointed step {state['step']} on the warning", flush=True)
        elif not told and state["step"] % args.every == 0:
            save()
    save()
    print(f"{task}: done at step {state['step']} (total {state['total']})", flush=True)


if __name__ == "__main__":
    main()

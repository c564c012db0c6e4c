#!/usr/bin/env python3
"""A stand-in for the tfyarn binary in the SDK's unit tests: speaks the events contract
(docs/events.md) and runs a job's tasks as local processes, as run --local does. The real binary is
exercised by the notebooks' end-to-end tests."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

LOG = os.environ.get("STUB_LOG", "")


def emit(kind, **fields):
    fields.update({"v": 1, "type": kind, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    print(json.dumps(fields), flush=True)


def record(argv):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(argv) + "\n")


def parse(args):
    flags, rest = [], []
    i = 0
    while i < len(args) and args[i].startswith("--") and args[i] != "--":
        flags.append(args[i])
        i += 1
    rest = args[i:]
    return flags, rest


def tasks_of(flags):
    out = []
    for f in flags:
        for kind in ("chief", "worker", "ps", "evaluator"):
            if f.startswith("--%s=" % kind):
                spec = f.split("=", 1)[1]
                n = int(spec.split("x")[0]) if "x" in spec else 1
                out += ["%s:%d" % (kind, i) for i in range(n)]
    return out


def run(args, app_id):
    flags, rest = parse(args)
    bad = [f for f in flags if f.startswith("--bogus")]
    if bad:
        msg = "tfyarn: flag provided but not defined: -%s" % bad[0][2:].split("=")[0]
        print(msg, file=sys.stderr)
        emit("error", message=msg, exit_code=2)
        return 2
    work = tempfile.mkdtemp(prefix="stub-run-")
    for f in flags:
        if f.startswith("--files="):
            path, _, name = f.split("=", 1)[1].partition("#")
            shutil.copy(path, os.path.join(work, name or os.path.basename(path)))
    if rest[0] == "--":
        command = rest[1:]
    else:
        command = [sys.executable, rest[0]] + rest[2:]
    emit("submitted", app_id=app_id, name="tfyarn", queue="default", user="u", tracking_url="")
    emit("state", app_id=app_id, state="RUNNING", final_status="UNDEFINED", diagnostics="", tracking_url="")
    tasks, files = [], {}
    # As the binary: run --local's result files in a directory of their own under TMPDIR.
    results = tempfile.mkdtemp(prefix="tfyarn-local-results-") if "--local" in flags else work
    for name in tasks_of(flags):
        rf = os.path.join(results, name.replace(":", "-") + ".result")
        env = dict(os.environ, TFYARN_TASK=name, TFYARN_RESULT_FILE=rf)
        ranks = dict(kv.split("=") for kv in os.environ.get("STUB_RANKS", "").split(",") if kv)
        if name in ranks:  # as torchrun: this container's first process has global rank RANK
            env.update(RANK=ranks[name], LOCAL_RANK="0")
        emit("task", task=name, change="launched", state="RUNNING")
        out = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        for line in out.stdout.splitlines():
            emit("log", task=name, stream="stdout", line=line)
        sys.stderr.write(out.stderr)
        emit("task", task=name, change="ended", state="FINISHED", exit_code=out.returncode)
        tasks.append({"task": name, "type": name.split(":")[0], "index": int(name.split(":")[1]),
                      "state": "FINISHED", "exit_code": out.returncode})
        if os.path.exists(rf):
            files[name] = rf
    ok = all(t["exit_code"] == 0 for t in tasks)
    final = "SUCCEEDED" if ok else "FAILED"
    emit("result", app_id=app_id, succeeded=ok, exit_code=0 if ok else 1, state="FINISHED", final_status=final,
         diagnostics="" if ok else "a task failed", tasks=tasks, result_files=files)
    return 0 if ok else 1


def main():
    args = sys.argv[1:]
    record(args)
    cmd = args[0]
    if cmd == "version":
        print(json.dumps({"version": os.environ.get("STUB_VERSION", "devel")}))
        return 0
    if cmd == "run":
        assert args[1:3] == ["--output", "events"], args
        return run(args[3:], "local" if "--local" in args else "application_1_0001")
    if cmd == "submit":
        print(json.dumps({"app_id": "application_1_0002"}))
        return 0
    if cmd == "wait":
        if os.environ.get("STUB_WAIT_SLEEP"):
            emit("state", app_id=args[1], state="RUNNING", final_status="UNDEFINED", diagnostics="", tracking_url="")
            time.sleep(float(os.environ["STUB_WAIT_SLEEP"]))
        emit("result", app_id=args[1], succeeded=True, exit_code=0, state="FINISHED", final_status="SUCCEEDED",
             diagnostics="", tasks=[{"task": "worker:0", "exit_code": 0}])
        return 0
    if cmd == "status":
        print(json.dumps({"id": args[-1], "state": "RUNNING"}))
        return 0
    if cmd == "list":
        print(json.dumps({"applications": [{"id": "application_1_0001"}]}))
        return 0
    if cmd == "logs":
        print("[worker:0] line 1\n[worker:0] line 2")
        return 0
    if cmd == "cluster":
        print(json.dumps({"nodes": 2}))
        return 0
    if cmd == "kill":
        return 0
    print("tfyarn: unknown command %s" % cmd, file=sys.stderr)
    return 2


sys.exit(main())

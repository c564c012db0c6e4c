"""The Python SDK's cost (bench/results/sdk.md): the SDK's time over the CLI for the same job, and a
function job's wall against the same work as a script. Run from the repository's root:

    .venv-notebook/bin/python bench/sdk_bench.py [--yarn] [--rounds N] > bench/results/sdk.md

with TFYARN_BINARY (default bin/tfyarn) and, for --yarn, HADOOP_CONF_DIR (source .testcluster/env.sh).
Without --yarn the jobs run with --local (no cluster)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("TFYARN_BINARY", os.path.join(ROOT, "bin", "tfyarn"))

import tfyarn  # noqa: E402


def work(n: int) -> int:
    return sum(i * i for i in range(n))


def timed(fns: Dict[str, Callable[[], object]], rounds: int) -> Dict[str, List[float]]:
    """Each function rounds times, interleaved: the machine's load falls on all alike."""
    out: Dict[str, List[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            start = time.perf_counter()
            fn()
            out[k].append(time.perf_counter() - start)
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--yarn", action="store_true", help="on the cluster of HADOOP_CONF_DIR instead of --local")
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    backend = "yarn" if a.yarn else "local"
    flags = [] if a.yarn else ["--local"]
    py = sys.executable
    binary = os.environ["TFYARN_BINARY"]
    n = 2_000_000
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "work.py")
        with open(script, "w") as f:
            f.write("print(sum(i * i for i in range(%d)))\n" % n)
        cli = [binary, "run", "--output", "json", "--worker", "1c,512m", "--python", py] + flags
        quiet: Dict[str, object] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": True}
        tfyarn.run(["true"], worker="1c,512m", backend=backend, live=False)  # warm: version check, caches
        rows = timed({
            "CLI: `tfyarn run -- true`": lambda: subprocess.run(cli + ["--", "true"], **quiet),  # type: ignore[call-overload]
            "SDK: `tfyarn.run([\"true\"])`": lambda: tfyarn.run(
                ["true"], worker="1c,512m", python=py, backend=backend, live=False),
            "CLI: the work as a script": lambda: subprocess.run(cli + [script], **quiet),  # type: ignore[call-overload]
            "SDK: the work as a function": lambda: tfyarn.run(
                work, args=(n,), worker="1c,512m", python=py, backend=backend, live=False),
        }, a.rounds)  # fmt: skip
    med = {k: statistics.median(v) for k, v in rows.items()}
    names = list(rows)
    print("# The Python SDK's cost\n")
    print("Made by `%s` (%s backend, %d rounds each, median wall seconds; %s)." % (
        " ".join(["bench/sdk_bench.py"] + sys.argv[1:]), backend, a.rounds, time.strftime("%Y-%m-%d")))
    print("\n| job | median s | min s | max s |\n|---|---|---|---|")
    for k, v in rows.items():
        print("| %s | %.3f | %.3f | %.3f |" % (k, med[k], min(v), max(v)))
    print("\n- The SDK's time over the CLI for the same command job: **%+.3f s** (goal: at most 0.1 s)."
          % (med[names[1]] - med[names[0]]))
    print("- A function job's wall against the same work as a script: **%+.3f s** (pickling, the shipped "
          "zip, reading the result file)." % (med[names[3]] - med[names[2]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

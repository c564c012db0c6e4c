"""tfyarn: distributed training on Hadoop YARN from one static binary, from Python.

    import tfyarn
    res = tfyarn.run(train, args=(3,), worker="2x1c,2g", env="./venv")
    res.value   # worker:0's return value (chief:0's with a chief, rank 0's with PyTorch)

The SDK drives the tfyarn binary (its --output events stream, docs/events.md); its core needs only
the standard library, and cloudpickle to ship a function. See docs/python.md.
"""

from __future__ import annotations

import os
import sysconfig
from typing import Any, Dict, List, Optional, Sequence

from ._errors import BinaryError, Error, JobFailed, NoRestart, TaskError, UsageError
from ._job import Job, Result, Target, call_json, logs, start, status
from ._warnings import TaskWarning, WarningWatch, warnings

try:  # written by the release (internal/release) and by the binary when it extracts the package
    from tfyarn._version import __binary_version__, __version__
except ImportError:  # a checkout's python/ on PYTHONPATH: no release wrote the version
    __version__ = "devel"
    __binary_version__ = "devel"

__all__ = [
    "BinaryError", "Error", "Job", "JobFailed", "NoRestart", "Result", "TaskError", "TaskWarning", "UsageError",
    "WarningWatch", "binary_path", "cluster", "list", "logs", "run", "status", "submit", "warnings",
    "__binary_version__", "__version__",
]  # fmt: skip


def binary_path() -> str:
    """Returns the path of the tfyarn binary this package installed."""
    return os.path.join(sysconfig.get_path("scripts"), "tfyarn")


def _options(flags: Dict[str, Any], **named: Any) -> Dict[str, Any]:
    merged = {k: v for k, v in named.items() if v is not None}
    merged.update(flags)
    return merged


def run(
    target: Target,
    *,
    args: Sequence[Any] = (),
    kwargs: Optional[Dict[str, Any]] = None,
    backend: str = "yarn",
    return_all: bool = False,
    live: Optional[bool] = None,
    framework: Optional[str] = None,
    chief: Optional[str] = None,
    worker: Optional[str] = None,
    ps: Optional[str] = None,
    evaluator: Optional[str] = None,
    env: Optional[str] = None,
    python: Optional[str] = None,
    queue: Optional[str] = None,
    **flags: Any,
) -> Result:
    """Runs target (a function, a "script.py" or a command list) as `tfyarn run` does and waits.

    Every other keyword is the run flag of its name (nproc_per_node=2 is --nproc-per-node 2; True
    a bare flag, a list the flag repeated). backend="local" runs it as local processes (--local).
    return_all=True fills .values with every task's return value. Raises UsageError (exit 2),
    JobFailed, or TaskError when a task's function raised."""
    options = _options(flags, framework=framework, chief=chief, worker=worker, ps=ps, evaluator=evaluator,
                       env=env, python=python, queue=queue)  # fmt: skip
    return start("run", target, args, kwargs, backend, options, return_all, live).wait()


def submit(
    target: Target,
    *,
    args: Sequence[Any] = (),
    kwargs: Optional[Dict[str, Any]] = None,
    backend: str = "yarn",
    return_all: bool = False,
    live: Optional[bool] = None,
    **flags: Any,
) -> Job:
    """Submits target as `tfyarn submit` does and returns a Job at once (with backend="local", the
    local run goes on in the background and job.wait() follows it)."""
    return start("submit", target, args, kwargs, backend, dict(flags), return_all, live)


def list(states: Sequence[str] = (), all_users: bool = False) -> List[Dict[str, Any]]:  # noqa: A001
    """`tfyarn list --output json`: your active applications (or those in states)."""
    args = ["list"] + ["--state=%s" % s for s in states] + (["--all-users"] if all_users else [])
    return [dict(a) for a in call_json(args).get("applications") or []]


def cluster() -> Dict[str, Any]:
    """`tfyarn cluster --output json`."""
    return dict(call_json(["cluster"]))

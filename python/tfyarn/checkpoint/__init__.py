"""Checkpoints that tfyarn keeps on HDFS for a task (``tfyarn run --checkpoint``).

The task writes its checkpoint into a local directory, :func:`directory`
(``TFYARN_CHECKPOINT_DIR``). Before the program starts, tfyarn's launcher
restores the latest checkpoint there: the chief's (or worker 0's), then the
task's own over it. :func:`restored` names it, ``None`` when the task starts
afresh.

When a checkpoint there is whole, the program calls :func:`mark_complete`. It
creates the file ``.tfyarn-complete``; the launcher copies the directory
aside, removes the mark, and uploads the copy to HDFS under a temporary name
renamed once whole. So the program writes nothing more into the directory
until the mark is gone, which :func:`mark_complete` waits for. Once the
checkpoint is on HDFS the launcher writes ``.tfyarn-saved``
(:func:`last_saved`).

On YARN's preemption warning the launcher looks for the mark every 20 ms
instead of every 500 ms. :class:`PreemptionWatch` tells the program of the warning.

The framework adapters build on this module: ``tfyarn.checkpoint.keras``,
``tfyarn.checkpoint.tensorflow`` and ``tfyarn.checkpoint.torch``.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any, Optional

ENV_DIR = "TFYARN_CHECKPOINT_DIR"
ENV_RESTORED = "TFYARN_CHECKPOINT_RESTORED"
ENV_PREEMPTION_FILE = "TFYARN_PREEMPTION_FILE"
COMPLETE_MARK = ".tfyarn-complete"
SAVED_FILE = ".tfyarn-saved"


class CheckpointError(RuntimeError):
    """A checkpoint could not be handed to tfyarn; its message is one line."""


def directory() -> str:
    """The task's local checkpoint directory (TFYARN_CHECKPOINT_DIR)."""
    d = os.environ.get(ENV_DIR, "")
    if not d:
        raise CheckpointError(f"{ENV_DIR} is not set: run the job with tfyarn run --checkpoint")
    return d


def enabled() -> bool:
    """Whether tfyarn keeps this task's checkpoints (run --checkpoint)."""
    return bool(os.environ.get(ENV_DIR))


def restored() -> Optional[str]:
    """The ID of the checkpoint tfyarn restored before the program started, None for none."""
    return os.environ.get(ENV_RESTORED) or None


def mark_complete(timeout: float = 60.0, poll: float = 0.005, step: Optional[int] = None) -> None:
    """Tells tfyarn that the checkpoint in directory() is whole, and waits until the
    launcher has taken its copy (the mark is gone): only then may the program write
    there again. Raises CheckpointError when the launcher takes none within timeout.

    With step (a number from 0 up, the same in every task for one checkpoint), the
    launcher keeps it with the checkpoint; when every task's newest names one, each
    task restores the newest step all of them have."""
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        raise CheckpointError(f"mark_complete: step must be a number from 0 up, not {step!r}")
    mark = os.path.join(directory(), COMPLETE_MARK)
    with open(mark, "w") as f:
        if step is not None:
            f.write(f"{step}\n")
    deadline = time.monotonic() + timeout
    while os.path.exists(mark):
        if time.monotonic() > deadline:
            raise CheckpointError(f"tfyarn's launcher took no copy of {directory()} within {timeout:g} s")
        time.sleep(poll)


def last_saved() -> Optional[dict[str, Any]]:
    """What the launcher last saved to HDFS ({"id", "path", "bytes", "files"}), None before any."""
    try:
        with open(os.path.join(directory(), SAVED_FILE)) as f:
            record: dict[str, Any] = json.load(f)
            return record
    except FileNotFoundError:
        return None


def wait_saved(after: Optional[str], timeout: float = 60.0, poll: float = 0.01) -> dict[str, Any]:
    """Waits until the launcher has saved a checkpoint other than the one named after
    (an ID, or None) and returns its record."""
    deadline = time.monotonic() + timeout
    while True:
        record = last_saved()
        if record is not None and record.get("id") != after:
            return record
        if time.monotonic() > deadline:
            raise CheckpointError(f"tfyarn's launcher saved no checkpoint within {timeout:g} s")
        time.sleep(poll)


class PreemptionWatch:
    """YARN's preemption warning as tfyarn passes it on: SIGWINCH, and the file
    TFYARN_PREEMPTION_FILE. Install it once, early; then ``warned`` says whether the
    task was warned (also of a warning that came before the handler was installed)."""

    def __init__(self) -> None:
        self._signalled = False
        self._file = os.environ.get(ENV_PREEMPTION_FILE, "")
        self._previous = signal.signal(signal.SIGWINCH, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._signalled = True  # the handler only notes it: act at a step's end

    @property
    def warned(self) -> bool:
        if not self._signalled and self._file and os.path.exists(self._file):
            self._signalled = True
        return self._signalled

    def deadline_unix_ms(self) -> Optional[int]:
        """The warning's deadline (the earliest YARN may kill the container), None before one."""
        try:
            with open(self._file) as f:
                value: int = json.load(f)["deadline_unix_ms"]
                return value
        except (OSError, ValueError, KeyError):
            return None

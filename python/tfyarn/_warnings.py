"""The ApplicationMaster's warnings as a task's program reads them: the JSON Lines file
TFYARN_WARNINGS_FILE, one line per warning, appended by the task's launcher (docs/failures.md,
Warnings file). A line is there once its newline is; kinds are "preemption" (YARN will take the
container back by deadline_unix_ms; TFYARN_PREEMPTION_FILE and SIGWINCH come with it) and
"gpu-idle" (the job's GPUs are idle; it fails at ends_at_unix_ms unless they work, None when it
does not). A program that polls :class:`WarningWatch` at its step boundaries sees each once."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

ENV_WARNINGS_FILE = "TFYARN_WARNINGS_FILE"
KINDS = ("preemption", "gpu-idle")
MAX_READ_BYTES = 1 << 20  # per call: the launcher writes at most 256 lines of about 1 KiB


@dataclass(frozen=True)
class TaskWarning:
    """One warning: its kind, when the launcher wrote it, what happens and why (reason), for which
    task and container, and the preemption's deadline or the idle job's end, in ms since the epoch."""

    kind: str
    time_unix_ms: int
    reason: str
    task: str
    container: str
    deadline_unix_ms: Optional[int] = None
    ends_at_unix_ms: Optional[int] = None


def _parse(line: bytes) -> Optional[TaskWarning]:
    try:
        fields: Dict[str, Any] = json.loads(line)
    except ValueError:
        return None
    if not isinstance(fields, dict) or fields.get("kind") not in KINDS:
        return None  # not tfyarn's line, or a kind this SDK does not know: skipped

    def ms(key: str) -> Optional[int]:
        value = fields.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    return TaskWarning(
        kind=str(fields["kind"]),
        time_unix_ms=ms("time_unix_ms") or 0,
        reason=str(fields.get("reason", "")),
        task=str(fields.get("task", "")),
        container=str(fields.get("container", "")),
        deadline_unix_ms=ms("deadline_unix_ms"),
        ends_at_unix_ms=ms("ends_at_unix_ms"),
    )


class WarningWatch:
    """Reads the warnings file as it grows: each call to :meth:`new` returns the warnings appended
    since the last one (the first call, all so far). path defaults to TFYARN_WARNINGS_FILE; without
    it (not a tfyarn task) there are never any."""

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = os.environ.get(ENV_WARNINGS_FILE, "") if path is None else path
        self._offset = 0

    def new(self) -> List[TaskWarning]:
        """The warnings appended since the last call, oldest first; lines not whole yet wait for
        the next call, and lines that are not a known warning are skipped."""
        if not self.path:
            return []
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self._offset:
                    self._offset = 0  # a new file in its place
                f.seek(self._offset)
                data = f.read(MAX_READ_BYTES)
        except FileNotFoundError:
            return []
        whole = data[: data.rfind(b"\n") + 1]
        self._offset += len(whole)
        found = (_parse(line) for line in whole.splitlines())
        return [w for w in found if w is not None]


def warnings(path: Optional[str] = None) -> List[TaskWarning]:
    """Every warning this task got so far (TFYARN_WARNINGS_FILE), oldest first."""
    return WarningWatch(path).new()

"""The task side of a function job: `python tfyarn_function.py PAYLOAD` (the script the SDK ships)
calls main(), which checks that the payload was pickled by this Python's minor version, loads the
function and arguments, calls it and leaves the outcome in TFYARN_RESULT_FILE: the pickled value,
or the exception's type, message, traceback and pickle. Exits 1 when the function raised, 2 (one
line on stderr, which the job's diagnostics quote) when the payload is not for this task. Neither
a refused payload nor a raised tfyarn.NoRestart restarts the job (TFYARN_NO_RESTART_FILE). Under
torchrun (--framework pytorch) every process runs it; each container keeps LOCAL_RANK 0's value
with its global RANK (the client looks for rank 0's: torchrun need not give worker:0 the first
ranks), or any process's exception."""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
import time
import traceback
from typing import Any, BinaryIO, Dict, List, Optional, Tuple

from . import _result, _ship
from ._errors import NoRestart

_VERSION_LINE = re.compile(rb"[0-9]{1,3}\.[0-9]{1,3}\n")


class PayloadRefused(Exception):
    """A payload this task must not unpickle; the message is the task's one line on stderr."""


def pickled_by(f: BinaryIO) -> Optional[str]:
    """The major.minor of the Python that pickled the payload in f, leaving f at the pickle. None
    for a payload with no header (an SDK before it), which loads as it always did: such a client
    shipped its own runner too, so only a hand-made job pairs the two."""
    if f.read(len(_ship.PAYLOAD_MAGIC)) != _ship.PAYLOAD_MAGIC:
        f.seek(0)
        return None
    line = f.readline(16)
    if not _VERSION_LINE.fullmatch(line):
        raise PayloadRefused("tfyarn: the function's payload has a malformed header: run the function again with tfyarn.run")
    return line[:-1].decode("ascii")


def _interpreter(executable: str, cwd: str) -> str:
    """executable as the line shows it: relative to the container's directory when in it (a packed
    env's python), so that the line stays within what the diagnostics keep of it."""
    if not executable:
        return "an unknown interpreter"
    inside = cwd.rstrip(os.sep) + os.sep
    if cwd and executable.startswith(inside):
        return executable[len(inside):]
    return executable


def python_mismatch(pickled: Optional[str], running: str, executable: str, cwd: str) -> str:
    """The one-line error when the payload's Python (None: not named) is not this task's, else ""."""
    if pickled is None or pickled == running:
        return ""
    return (
        "tfyarn: the function was pickled by Python %s but this task runs Python %s (%s): run the job "
        "with a Python %s interpreter (python=...) or an environment that has one (env=...)"
        % (pickled, running, _interpreter(executable, cwd), pickled)
    )


def _load(path: str) -> Tuple[Any, Any, Any]:
    """The function, its args and kwargs; PayloadRefused before unpickling one of another Python."""
    with open(path, "rb") as f:
        refusal = python_mismatch(pickled_by(f), _ship.python_version(), sys.executable, os.getcwd())
        if refusal:
            raise PayloadRefused(refusal)
        fn, fargs, fkwargs = pickle.load(f)
    return fn, fargs, fkwargs


def _tell_torchrun(line: str) -> None:
    """Under torchrun, leaves line in the process's error file: torchrun's failure summary, the
    last lines of the container's stderr and so what the diagnostics quote, then shows it."""
    path = os.environ.get("TORCHELASTIC_ERROR_FILE", "")
    if not path:
        return
    try:
        with open(path, "w") as f:
            json.dump({"message": line, "timestamp": str(int(time.time()))}, f)
    except OSError:
        pass  # the line is on stderr still


def _tell_no_restart(line: str) -> None:
    """Leaves line in the task's no-restart file (TFYARN_NO_RESTART_FILE): the ApplicationMaster
    does not restart the job for this failure, which a restart would only repeat."""
    path = os.environ.get("TFYARN_NO_RESTART_FILE", "")
    if not path:
        return
    try:
        _replace_file(path, (line + "\n").encode("utf-8"))  # torchrun's ranks may all write it
    except OSError:
        pass  # the job restarts as for any failure; the line is on stderr still


def _replace_file(path: str, data: bytes) -> None:
    """Writes data to path whole: a reader never sees half of it, whoever else writes it too."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _no_restart_line(exc: NoRestart) -> str:
    """The reason as the diagnostics show it: the exception's type and its message's first line."""
    lines = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__qualname__, lines[0]) if lines else type(exc).__qualname__


def _write(fields: Dict[str, Any], replace: bool) -> None:
    path = os.environ.get("TFYARN_RESULT_FILE", "")
    if not path:
        return
    if not replace and os.path.exists(path):
        return
    _replace_file(path, _result.encode(fields))


def _exception_fields(exc: BaseException) -> Dict[str, Any]:
    fields: Dict[str, Any] = {
        "ok": False,
        "type": type(exc).__qualname__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        "exception": None,
    }
    try:
        import cloudpickle

        data = cloudpickle.dumps(exc)
        pickle.loads(data)  # one that does not load back would fail the client instead
        fields["exception"] = data
    except Exception:
        pass
    return fields


def _writes_value() -> bool:
    return os.environ.get("LOCAL_RANK", "0") == "0"


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tfyarn._task PAYLOAD (the file tfyarn.run shipped)", file=sys.stderr)
        return 2
    try:
        fn, fargs, fkwargs = _load(args[0])
    except PayloadRefused as refused:
        print(refused, file=sys.stderr)
        _tell_torchrun(str(refused))
        _tell_no_restart(str(refused))
        return 2
    import cloudpickle

    try:
        value = fn(*fargs, **fkwargs)
    except BaseException as exc:  # the caller re-raises it, SystemExit and KeyboardInterrupt too
        _write(_exception_fields(exc), replace=True)
        if isinstance(exc, NoRestart):
            _tell_no_restart(_no_restart_line(exc))
        traceback.print_exc()
        return 1
    if _writes_value():
        try:
            data = cloudpickle.dumps(value)
        except Exception as exc:
            _write(_exception_fields(exc), replace=True)
            traceback.print_exc()
            return 1
        rank = os.environ.get("RANK", "")
        _write({"ok": True, "value": data, "rank": int(rank) if rank.isdigit() else None}, replace=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The task side of a function job: `python tfyarn_function.py PAYLOAD` (the script the SDK ships)
calls main(), which loads the pickled function and arguments, calls it and leaves the outcome in
TFYARN_RESULT_FILE: the pickled value, or the exception's type, message, traceback and pickle.
Exits 1 when the function raised. Under torchrun (--framework pytorch) every process runs it; each
container keeps LOCAL_RANK 0's value with its global RANK (the client looks for rank 0's: torchrun
need not give worker:0 the first ranks), or any process's exception."""

from __future__ import annotations

import os
import pickle
import sys
import traceback
from typing import Any, Dict, List, Optional

from . import _result


def _write(fields: Dict[str, Any], replace: bool) -> None:
    path = os.environ.get("TFYARN_RESULT_FILE", "")
    if not path:
        return
    if not replace and os.path.exists(path):
        return
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(_result.encode(fields))
    os.replace(tmp, path)  # whole files only: a reader never sees half of one


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
    import cloudpickle

    with open(args[0], "rb") as f:
        fn, fargs, fkwargs = pickle.load(f)
    try:
        value = fn(*fargs, **fkwargs)
    except BaseException as exc:  # the caller re-raises it, SystemExit and KeyboardInterrupt too
        _write(_exception_fields(exc), replace=True)
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

"""The bytes a function task leaves in TFYARN_RESULT_FILE: a header line, then a pickled dict of
plain types (ok, and value, or the exception's type, message, traceback and pickle), so that the
client reads the outcome even when the value or the exception does not unpickle there."""

from __future__ import annotations

import pickle
from typing import Any, Dict, Optional

MAGIC = b"TFYARN-RESULT 1\n"


class Outcome:
    """What one task's function did."""

    def __init__(self, fields: Dict[str, Any]) -> None:
        self.ok: bool = bool(fields.get("ok"))
        self.value_pickle: bytes = fields.get("value") or b""
        self.type_name: str = str(fields.get("type", ""))
        self.message: str = str(fields.get("message", ""))
        self.traceback: str = str(fields.get("traceback", ""))
        self.exception_pickle: Optional[bytes] = fields.get("exception")
        # torchrun's global RANK of the process that wrote the value (None outside torchrun).
        self.rank: Optional[int] = fields.get("rank")

    def value(self) -> Any:
        """The function's return value (cloudpickle's output loads with pickle where cloudpickle imports)."""
        try:
            import cloudpickle  # noqa: F401  (registers what its pickles need)
        except ImportError:
            pass
        return pickle.loads(self.value_pickle)

    def exception(self) -> Optional[BaseException]:
        """The task's exception when it unpickles here, else None."""
        if not self.exception_pickle:
            return None
        try:
            exc = pickle.loads(self.exception_pickle)
        except Exception:  # any class the client lacks or that refuses to unpickle
            return None
        return exc if isinstance(exc, BaseException) else None


def encode(fields: Dict[str, Any]) -> bytes:
    return MAGIC + pickle.dumps(fields, protocol=4)


def decode(data: bytes) -> Optional[Outcome]:
    """The outcome in data, or None when it is not one (a task that wrote something else)."""
    if not data.startswith(MAGIC):
        return None
    try:
        fields = pickle.loads(data[len(MAGIC):])
    except Exception:
        return None
    return Outcome(fields) if isinstance(fields, dict) else None

"""Keyword arguments to CLI flags: every keyword is the flag of the same name."""

from __future__ import annotations

import os
from typing import Any, List, Mapping


def flag_name(key: str) -> str:
    """mlflow -> --mlflow, nproc_per_node -> --nproc-per-node."""
    return "--" + key.replace("_", "-")


def _text(value: Any) -> str:
    if isinstance(value, os.PathLike):
        return str(os.fspath(value))
    return str(value)


def to_flags(options: Mapping[str, Any]) -> List[str]:
    """Maps keywords to flags in their order: None and False give nothing, True a bare flag,
    a list or tuple the flag once per item, a dict KEY=VALUE items (setenv={"A": "1"}), anything
    else --flag=value (the = keeps a value that starts with a dash a value)."""
    out: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        name = flag_name(key)
        if value is True:
            out.append(name)
        elif isinstance(value, Mapping):
            out.extend("%s=%s=%s" % (name, k, _text(v)) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            out.extend("%s=%s" % (name, _text(v)) for v in value)
        else:
            out.append("%s=%s" % (name, _text(value)))
    return out

"""Executes notebooks headless (nbclient) and checks their outputs: every code cell's
metadata.tfyarn_expect lists texts its outputs must contain (stream, results, displays and the
traceback of a cell tagged raises-exception). Exit 0 when all hold, 1 naming the first that does not.

    .venv-notebook/bin/python examples/notebooks/run.py examples/notebooks/local.ipynb

The kernel is this interpreter's (ipykernel of .venv-notebook); the caller gives the environment
(PYTHONPATH with python/, TFYARN_BINARY, HADOOP_CONF_DIR, TFYARN_NOTEBOOK_PYTHON)."""

from __future__ import annotations

import re
import sys
import time
from typing import Any, List

import nbformat
from nbclient import NotebookClient

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def outputs_text(cell: Any) -> str:
    parts: List[str] = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts.append("%s: %s" % (out.get("ename"), out.get("evalue")))
            parts.extend(out.get("traceback", []))
        else:
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return _ANSI.sub("", "\n".join(parts))


def check(path: str, timeout: int) -> List[str]:
    nb = nbformat.read(path, as_version=4)
    start = time.monotonic()
    NotebookClient(nb, timeout=timeout, kernel_name="python3").execute()
    problems = []
    for i, cell in enumerate(nb.cells):
        text = outputs_text(cell) if cell.cell_type == "code" else ""
        for want in cell.metadata.get("tfyarn_expect", []):
            if want not in text:
                problems.append("%s cell %d: no %r in its output:\n%s" % (path, i, want, text))
    print("notebook %s: %s in %.1f s" % (path, "failed" if problems else "ok", time.monotonic() - start), flush=True)
    return problems


def main(argv: List[str]) -> int:
    if not argv:
        print("usage: run.py NOTEBOOK.ipynb...", file=sys.stderr)
        return 2
    problems: List[str] = []
    for path in argv:
        problems += check(path, timeout=900)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

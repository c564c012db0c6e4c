"""What a function job ships: the pickled function and arguments after a header naming the
client's Python, a zip of the client's cloudpickle and of this package (first on the task's
sys.path, so the task needs neither), and the script every task runs."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import zipfile
from typing import Any, Callable, Dict, List, Sequence, Tuple

PAYLOAD = "tfyarn_payload.pkl"
DEPS = "tfyarn_deps.zip"
SCRIPT = "tfyarn_function.py"

# The script tfyarn runs in every task (with --framework pytorch, torchrun in every process). The
# deps zip goes first on sys.path: the cloudpickle that made the payload must be the one to load it.
_SCRIPT_TEXT = '''"""tfyarn.run's function task: runs the shipped function (tfyarn._task)."""
import os
import sys

sys.path.insert(0, os.path.abspath("%s"))
from tfyarn._task import main

sys.exit(main())
''' % DEPS

_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

# The payload's first line: cloudpickle's pickles of functions load only on the Python minor
# version that made them, so the task checks this before it unpickles (tfyarn._task).
PAYLOAD_MAGIC = b"TFYARN-PAYLOAD 1 python="


def python_version() -> str:
    """This interpreter's major.minor, as the payload's header names it."""
    return "%d.%d" % sys.version_info[:2]


def payload_header(version: str) -> bytes:
    return PAYLOAD_MAGIC + version.encode("ascii") + b"\n"


def _package_files(module_file: str, prefix: str) -> List[Tuple[str, str]]:
    root = os.path.dirname(os.path.abspath(module_file))
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".typed")):
                full = os.path.join(dirpath, name)
                out.append((full, prefix + "/" + os.path.relpath(full, root).replace(os.sep, "/")))
    return out


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "tfyarn", "sdk")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def deps_zip() -> str:
    """The zip of cloudpickle and tfyarn, byte for byte the same for the same sources (so the job's
    content-addressed cache uploads it once), kept in ~/.cache/tfyarn/sdk/."""
    import cloudpickle

    files = _package_files(cloudpickle.__file__, "cloudpickle") + _package_files(__file__, "tfyarn")
    digest = hashlib.sha256()
    contents = []
    for full, arc in files:
        with open(full, "rb") as f:
            data = f.read()
        digest.update(arc.encode() + b"\0" + hashlib.sha256(data).digest())
        contents.append((arc, data))
    path = os.path.join(_cache_dir(), "deps-%s.zip" % digest.hexdigest()[:16])
    if os.path.exists(path):
        return path
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in contents:
            info = zipfile.ZipInfo(arc, _ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, path)
    return path


def write_function(
    workdir: str, fn: Callable[..., Any], args: Sequence[Any], kwargs: Dict[str, Any]
) -> Tuple[str, str, str]:
    """Writes the payload and the script into workdir: (script, payload, deps zip) paths."""
    import cloudpickle

    payload = os.path.join(workdir, PAYLOAD)
    with open(payload, "wb") as f:
        f.write(payload_header(python_version()))
        cloudpickle.dump((fn, tuple(args), dict(kwargs)), f)
    script = os.path.join(workdir, SCRIPT)
    with open(script, "w") as f:
        f.write(_SCRIPT_TEXT)
    return script, payload, deps_zip()

"""Which tfyarn binary the SDK drives, and the check that it is the one this package goes with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
from typing import Dict, Tuple

from ._errors import BinaryError

# The release's version pattern (internal/release).
_RELEASE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(alpha|beta|rc)\.?([0-9]+))?$")

_checked: Dict[Tuple[str, float], str] = {}


def bundled_path() -> str:
    """Where the release wheel's pip install put the binary: the environment's scripts directory."""
    return os.path.join(sysconfig.get_path("scripts"), "tfyarn")


def find_binary() -> str:
    """TFYARN_BINARY when set, else the wheel's bundled binary, else tfyarn on PATH."""
    given = os.environ.get("TFYARN_BINARY", "")
    if given:
        if not (os.path.isfile(given) and os.access(given, os.X_OK)):
            raise BinaryError("TFYARN_BINARY=%s is not an executable file: point it at the tfyarn binary" % given)
        return given
    bundled = bundled_path()
    if os.path.isfile(bundled) and os.access(bundled, os.X_OK):
        return bundled
    found = shutil.which("tfyarn")
    if found:
        return found
    raise BinaryError("no tfyarn binary: pip install the tfyarn wheel, put tfyarn on PATH or set TFYARN_BINARY")


def is_release(version: str) -> bool:
    return bool(_RELEASE.match(version[1:] if version.startswith("v") else version))


def compatible(expected: str, binary_version: str) -> bool:
    """A released package (expected: the binary version its release wrote, __binary_version__)
    needs exactly that binary; a checkout's package (devel) or one extracted from a development
    build (a version that is no release) goes with any binary."""
    if not is_release(expected):
        return True
    return binary_version == expected


def checked_binary(expected: str) -> str:
    """find_binary(), once per binary file checked with `tfyarn version --output json`."""
    path = find_binary()
    try:
        key = (path, os.stat(path).st_mtime)
    except OSError as e:
        raise BinaryError("cannot read the tfyarn binary %s: %s" % (path, e.strerror)) from None
    if key in _checked:
        return path
    try:
        out = subprocess.run(
            [path, "version", "--output", "json"], capture_output=True, text=True, timeout=30, check=False
        )
        version = str(json.loads(out.stdout)["version"])
    except (OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired) as e:
        raise BinaryError("%s is not a working tfyarn binary (tfyarn version --output json: %s)" % (path, e)) from None
    if not compatible(expected, version):
        raise BinaryError(
            "the tfyarn binary %s is version %s but this Python package goes with %s: install the matching "
            "wheel or set TFYARN_BINARY to the binary of version %s" % (path, version, expected, expected)
        )
    _checked[key] = version
    return path

"""tfyarn: distributed training on Hadoop YARN from one static binary."""

import os
import sysconfig

try:
    from tfyarn._version import __version__
except ImportError:  # a checkout's python/ on PYTHONPATH: no release wrote the version
    __version__ = "devel"


def binary_path() -> str:
    """Returns the path of the tfyarn binary this package installed."""
    return os.path.join(sysconfig.get_path("scripts"), "tfyarn")

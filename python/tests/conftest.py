import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/: the package as the binary embeds it


@pytest.fixture
def stub(tmp_path, monkeypatch):
    """The stub binary as TFYARN_BINARY; returns the file its calls are logged to (one JSON argv a line)."""
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TFYARN_BINARY", os.path.join(HERE, "stub_tfyarn.py"))
    monkeypatch.setenv("STUB_LOG", str(log))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    import tfyarn._binary

    tfyarn._binary._checked.clear()
    return log

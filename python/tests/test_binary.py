import os

import pytest

import tfyarn
from tfyarn import _binary


@pytest.mark.parametrize(
    "package, binary, ok",
    [
        ("1.2.0", "1.2.0", True),
        ("v1.2.0-rc.1", "v1.2.0-rc.1", True),
        ("1.2.0", "1.3.0", False),
        ("1.2.0", "devel", False),
        ("devel", "1.3.0", True),
        ("v0.0.0-20261129101010-abcdefabcdef", "1.3.0", True),
    ],
)
def test_compatible(package, binary, ok):
    assert _binary.compatible(package, binary) is ok


def test_version_mismatch_is_one_line(stub, monkeypatch):
    monkeypatch.setenv("STUB_VERSION", "9.9.9")
    with pytest.raises(tfyarn.BinaryError) as e:
        _binary.checked_binary("1.0.0")
    assert "9.9.9" in str(e.value) and "1.0.0" in str(e.value) and "\n" not in str(e.value)


def test_missing_binary(monkeypatch, tmp_path):
    monkeypatch.setenv("TFYARN_BINARY", str(tmp_path / "nope"))
    with pytest.raises(tfyarn.BinaryError, match="not an executable file"):
        _binary.find_binary()


def test_path_fallback(monkeypatch, tmp_path):
    monkeypatch.delenv("TFYARN_BINARY", raising=False)
    monkeypatch.setattr(_binary, "bundled_path", lambda: str(tmp_path / "none"))
    fake = tmp_path / "tfyarn"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert _binary.find_binary() == str(fake)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(tfyarn.BinaryError, match="no tfyarn binary"):
        _binary.find_binary()


def test_binary_path_kept():
    assert tfyarn.binary_path().endswith(os.sep + "tfyarn")

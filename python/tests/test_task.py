"""The task side (tfyarn._task) as torchrun's processes run it: LOCAL_RANK 0 leaves the value, any
process's exception replaces it."""

import pickle

import cloudpickle
import pytest

from tfyarn import _result, _task


def payload(tmp_path, fn, *args):
    path = tmp_path / "payload.pkl"
    path.write_bytes(cloudpickle.dumps((fn, args, {})))
    return str(path)


def outcome(path):
    return _result.decode(path.read_bytes())


@pytest.mark.parametrize("local_rank, saved", [("0", True), ("1", False)])
def test_value_from_local_rank_zero(tmp_path, monkeypatch, local_rank, saved):
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))
    monkeypatch.setenv("LOCAL_RANK", local_rank)
    assert _task.main([payload(tmp_path, lambda x: x + 1, 41)]) == 0
    assert result.exists() is saved
    if saved:
        assert outcome(result).ok and outcome(result).value() == 42


def test_exception_of_any_rank_replaces_the_value(tmp_path, monkeypatch):
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert _task.main([payload(tmp_path, lambda: 1)]) == 0
    monkeypatch.setenv("LOCAL_RANK", "1")

    def fails():
        raise KeyError("shard 3")

    assert _task.main([payload(tmp_path, fails)]) == 1
    got = outcome(result)
    assert not got.ok and got.type_name == "KeyError" and "shard 3" in got.message
    assert isinstance(got.exception(), KeyError) and "raise KeyError" in got.traceback


def test_unpicklable_value_is_an_error(tmp_path, monkeypatch):
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert _task.main([payload(tmp_path, lambda: __import__("threading").Lock())]) == 1
    assert not outcome(result).ok


def test_not_a_result():
    assert _result.decode(b"hello") is None
    assert _result.decode(_result.MAGIC + b"junk") is None
    assert _result.decode(_result.MAGIC + pickle.dumps([1])) is None


def test_usage(capsys):
    assert _task.main([]) == 2
    assert "usage" in capsys.readouterr().err

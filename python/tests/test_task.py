"""The task side (tfyarn._task) as torchrun's processes run it: LOCAL_RANK 0 leaves the value, any
process's exception replaces it."""

import json
import os
import pickle
import shutil
import subprocess
import sys

import cloudpickle
import pytest

import tfyarn
from tfyarn import _result, _ship, _task


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


# ---- the payload's Python: checked before unpickling --------------------------------------------

OTHER = "3.%d" % (sys.version_info[1] + 1)  # a minor version this interpreter is not


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """The deps zip _ship.write_function makes goes to the test's own cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def shipped(tmp_path, fn, version=None):
    """The payload as tfyarn.run writes it (_ship.write_function), its header then naming version."""
    _ship.write_function(str(tmp_path), fn, (), {})
    path = tmp_path / _ship.PAYLOAD
    if version is not None:
        body = path.read_bytes().split(b"\n", 1)[1]
        path.write_bytes(_ship.payload_header(version) + body)
    return path


def test_payload_names_the_clients_python(tmp_path):
    path = shipped(tmp_path, lambda: 1)
    with open(path, "rb") as f:
        assert _task.pickled_by(f) == "%d.%d" % sys.version_info[:2]
        assert pickle.load(f)[0]() == 1  # the pickle follows the header


def test_matching_python_runs(tmp_path, monkeypatch):
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert _task.main([str(shipped(tmp_path, lambda: 42))]) == 0
    assert outcome(result).value() == 42


def test_payload_without_header_loads_as_before(tmp_path):
    # An SDK before the header wrote the bare pickle: no version to check, it loads.
    with open(payload(tmp_path, lambda: 7), "rb") as f:
        assert _task.pickled_by(f) is None
        assert pickle.load(f)[0]() == 7
    assert _task.python_mismatch(None, "3.10", "/usr/bin/python3", "/c") == ""


def test_mismatch_is_one_line_naming_both():
    line = _task.python_mismatch("3.11", "3.10", "/usr/bin/python3", "/c")
    assert line == (
        "tfyarn: the function was pickled by Python 3.11 but this task runs Python 3.10 (/usr/bin/python3): "
        "run the job with a Python 3.11 interpreter (python=...) or an environment that has one (env=...)"
    )
    assert _task.python_mismatch("3.11", "3.11", "/usr/bin/python3", "/c") == ""
    # A packed env's interpreter shows relative to the container's directory: the diagnostics keep
    # 240 characters of a stderr line (internal/appmaster/core; test_docs reads the bound), and the
    # advice is at the end.
    c = "/yarn/local/usercache/alice/appcache/application_1700000000000_0001/container_e01_1700000000000_0001_01_000002"
    line = _task.python_mismatch("3.11", "3.10", c + "/env/bin/python", c)
    assert "(env/bin/python)" in line and len(line) < 240


def test_malformed_header_is_refused(tmp_path):
    path = tmp_path / "p.pkl"
    path.write_bytes(_ship.PAYLOAD_MAGIC + b"3.x\n" + b"\x80junk")
    with open(path, "rb") as f, pytest.raises(_task.PayloadRefused, match="^tfyarn: .*malformed header"):
        _task.pickled_by(f)


def test_mismatch_never_unpickles(tmp_path, monkeypatch, capsys):
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))
    path = shipped(tmp_path, lambda: 1, OTHER)
    path.write_bytes(path.read_bytes().split(b"\n", 1)[0] + b"\n" + b"not a pickle")
    assert _task.main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfyarn: the function was pickled by Python %s " % OTHER) and err.count("\n") == 1
    assert not result.exists()


def test_refusal_asks_not_to_be_restarted(tmp_path, monkeypatch, capsys):
    # A restart would unpickle with the same interpreter: the launcher reads the line from
    # TFYARN_NO_RESTART_FILE and the AM does not restart (executor's and core's tests).
    no_restart = tmp_path / "tfyarn-no-restart-worker-0"
    monkeypatch.setenv("TFYARN_NO_RESTART_FILE", str(no_restart))
    assert _task.main([str(shipped(tmp_path, lambda: 1, OTHER))]) == 2
    line = capsys.readouterr().err
    assert no_restart.read_text() == line and line.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("tfyarn-no-restart")) == [no_restart.name]


def test_failing_function_may_restart(tmp_path, monkeypatch):
    no_restart = tmp_path / "tfyarn-no-restart-worker-0"
    monkeypatch.setenv("TFYARN_NO_RESTART_FILE", str(no_restart))

    def fails() -> None:
        raise RuntimeError("flaky")

    assert _task.main([str(shipped(tmp_path, fails, _ship.python_version()))]) == 1
    assert not no_restart.exists()


class BadShard(tfyarn.NoRestart):
    pass


@pytest.mark.parametrize(
    "exc, line",
    [
        (tfyarn.NoRestart("shard 7 is corrupt\nsecond line"), "NoRestart: shard 7 is corrupt\n"),
        (BadShard(), "BadShard\n"),
    ],
)
def test_no_restart_raised_asks_not_to_be_restarted(tmp_path, monkeypatch, exc, line):
    no_restart = tmp_path / "tfyarn-no-restart-worker-0"
    result = tmp_path / "result"
    monkeypatch.setenv("TFYARN_NO_RESTART_FILE", str(no_restart))
    monkeypatch.setenv("TFYARN_RESULT_FILE", str(result))

    def refuses() -> None:
        raise exc

    assert _task.main([str(shipped(tmp_path, refuses, _ship.python_version()))]) == 1
    assert no_restart.read_text() == line
    assert result.exists(), "the exception goes to the client as any other"


def test_runner_refuses_another_minor_version(tmp_path):
    """The script tfyarn.run ships, run as a task runs it: `python tfyarn_function.py PAYLOAD` in
    the container's directory with the deps zip beside it."""
    script, _, deps = _ship.write_function(str(tmp_path), lambda: 1, (), {})
    shipped(tmp_path, lambda: 1, OTHER)
    shutil.copy(deps, tmp_path / _ship.DEPS)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TFYARN_RESULT_FILE"] = str(tmp_path / "result")
    out = subprocess.run(
        [sys.executable, script, _ship.PAYLOAD], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    running = "%d.%d" % sys.version_info[:2]
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "tfyarn: the function was pickled by Python %s but this task runs Python %s (%s): run the job with a "
        "Python %s interpreter (python=...) or an environment that has one (env=...)" % (OTHER, running, os.path.abspath(sys.executable), OTHER)
    ]
    assert not (tmp_path / "result").exists()


def test_runner_parses_on_older_pythons():
    # The line needs the task's Python to import the runner (the package's modules; cloudpickle
    # loads after the check): they keep to Python 3.8's syntax, so a 3.8 task says so too.
    import ast

    pkg = os.path.dirname(os.path.abspath(_task.__file__))
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name)) as f:
                ast.parse(f.read(), name, feature_version=(3, 8))


def test_refusal_under_torchrun_goes_to_its_error_file(tmp_path, monkeypatch, capsys):
    # torchrun shows a failed process's error file as its summary's "traceback :" line, the last
    # lines of the container's stderr (TestE2ENotebooks runs it with the real torchrun).
    errors = tmp_path / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(errors))
    assert _task.main([str(shipped(tmp_path, lambda: 1, OTHER))]) == 2
    line = capsys.readouterr().err.strip()
    got = json.loads(errors.read_text())
    assert got["message"] == line and got["timestamp"].isdigit()

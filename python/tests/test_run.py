import json
import os

import pytest

import tfyarn

SCALE = 7


def calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_function_value_and_closure(stub):
    offset = 100

    def train(x, y=1):
        return (os.environ["TFYARN_TASK"], x * SCALE + y + offset)

    res = tfyarn.run(train, args=(2,), kwargs={"y": 3}, worker="2x1c", return_all=True)
    assert res.value == ("worker:0", 117)
    assert res.values == {"worker:0": ("worker:0", 117), "worker:1": ("worker:1", 117)}
    assert res.app_id == "application_1_0001" and res.final_status == "SUCCEEDED"
    run = [c for c in calls(stub) if c[0] == "run"][0]
    assert "--worker=2x1c" in run and run[-2:] == ["--", "tfyarn_payload.pkl"]


def test_chief_decides(stub):
    res = tfyarn.run(lambda: os.environ["TFYARN_TASK"], chief="1c", worker="1x1c")
    assert res.value == "chief:0"


def test_task_exception_is_raised_with_traceback(stub):
    class Boom(Exception):  # defined here, it ships by value as a notebook's would
        pass

    def train():
        raise Boom("loss is nan")

    with pytest.raises(tfyarn.TaskError) as e:
        tfyarn.run(train, worker="1c")
    err = e.value
    assert err.task == "worker:0" and err.type_name == "Boom"
    assert "worker:0 raised Boom: loss is nan" in str(err)
    assert 'raise Boom("loss is nan")' in err.remote_traceback
    assert isinstance(err.__cause__, Boom) and isinstance(err, tfyarn.JobFailed)


def test_unpicklable_exception_still_reported(stub):
    def train():
        class Local(Exception):
            def __reduce__(self):
                raise TypeError("no")

        raise Local("odd")

    with pytest.raises(tfyarn.TaskError) as e:
        tfyarn.run(train, worker="1c")
    assert e.value.type_name.endswith("Local") and e.value.original is None


def test_command_failure_is_job_failed(stub):
    with pytest.raises(tfyarn.JobFailed) as e:
        tfyarn.run(["sh", "-c", "exit 3"], worker="1c")
    assert not isinstance(e.value, tfyarn.TaskError)
    assert e.value.app_id == "application_1_0001" and e.value.task == "worker:0"
    assert "task worker:0 failed" in str(e.value)


def test_script_and_args(stub, tmp_path, capsys):
    script = tmp_path / "hello.py"
    script.write_text("import sys; print('hello', *sys.argv[1:])\n")
    res = tfyarn.run(str(script), args=["--epochs", 3], worker="1c")
    assert res.value is None and res.succeeded
    assert "[worker:0] hello --epochs 3" in capsys.readouterr().out


def test_usage_error_is_the_cli_line(stub):
    with pytest.raises(tfyarn.UsageError) as e:
        tfyarn.run(["true"], worker="1c", bogus_flag=1)
    assert str(e.value) == "tfyarn: flag provided but not defined: -bogus-flag"


def test_bad_targets(stub):
    with pytest.raises(tfyarn.UsageError, match="no .py script"):
        tfyarn.run("train.sh", worker="1c")
    with pytest.raises(tfyarn.UsageError, match="backend"):
        tfyarn.run(["true"], worker="1c", backend="k8s")
    with pytest.raises(tfyarn.UsageError, match="kwargs"):
        tfyarn.run(["true"], kwargs={"a": 1}, worker="1c")


def test_local_backend_flag(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    res = tfyarn.run(lambda: 42, worker="1c", backend="local")
    assert res.value == 42 and res.app_id == "local"
    assert "--local" in [c for c in calls(stub) if c[0] == "run"][0]
    assert not list(tmp_path.glob("tfyarn-local-results-*")), "the SDK removes the run's result files once read"
    with pytest.raises(tfyarn.TaskError):
        tfyarn.run(lambda: 1 / 0, worker="1c", backend="local")
    assert not list(tmp_path.glob("tfyarn-local-results-*")), "a failed task's too"


def test_submit_wait_status(stub):
    job = tfyarn.submit(["true"], worker="1c")
    assert job.app_id == "application_1_0002"
    assert job.status()["state"] == "RUNNING"
    assert job.wait().final_status == "SUCCEEDED"
    assert [c[0] for c in calls(stub)] == ["version", "submit", "status", "wait"]


def test_wait_timeout(stub, monkeypatch):
    monkeypatch.setenv("STUB_WAIT_SLEEP", "30")
    job = tfyarn.Job("application_1_0003")
    with pytest.raises(tfyarn.Error, match="did not end within 0.5 s"):
        job.wait(timeout=0.5)


def test_list(stub):
    assert tfyarn.list()[0]["id"] == "application_1_0001"


def test_deps_zip_is_reproducible(stub):
    from tfyarn import _ship

    a = _ship.deps_zip()
    os.remove(a)
    b = _ship.deps_zip()
    assert a == b and open(b, "rb").read()[:2] == b"PK"


def test_logs_and_cluster(stub):
    assert tfyarn.logs("application_1_0001") == "[worker:0] line 1\n[worker:0] line 2\n"
    assert list(tfyarn.Job("application_1_0001").logs(follow=True)) == ["[worker:0] line 1", "[worker:0] line 2"]
    assert tfyarn.cluster() == {"nodes": 2}
    assert ["logs", "application_1_0001", "--follow"] in calls(stub)


def test_rank_zero_value_wherever_torchrun_put_it(stub, monkeypatch):
    monkeypatch.setenv("STUB_RANKS", "worker:0=2,worker:1=0")
    res = tfyarn.run(lambda: os.environ["RANK"], worker="2x1c", framework="pytorch")
    assert res.value == "0" and res.values == {"worker:1": "0"}
    res = tfyarn.run(lambda: os.environ["RANK"], worker="2x1c", framework="pytorch", return_all=True)
    assert res.value == "0" and res.values == {"worker:0": "2", "worker:1": "0"}

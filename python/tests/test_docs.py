"""docs/python.md's claims, and README.md's Python part, held by the unit tests (against the stub binary)."""

import ast
import json
import os
import re
import sys
import zipfile

import pytest

import tfyarn
from tfyarn import _binary
from tfyarn import _view
from tfyarn._flags import to_flags

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "python.md")


def doc():
    with open(DOC) as f:
        return f.read()


def test_error_table_matches_the_classes():
    rows = dict(re.findall(r"^\| `tfyarn\.(\w+)` \| (.*) \|$", doc(), re.M))
    assert set(rows) == {"UsageError", "JobFailed", "TaskError", "BinaryError"}
    for name in rows:
        assert issubclass(getattr(tfyarn, name), tfyarn.Error)
    assert "a `JobFailed` too" in rows["TaskError"] and issubclass(tfyarn.TaskError, tfyarn.JobFailed)


def test_flag_mapping_sentence():
    text = " ".join(doc().split())
    assert "(`nproc_per_node=2` is `--nproc-per-node=2`)" in text
    assert to_flags({"nproc_per_node": 2}) == ["--nproc-per-node=2"]
    assert '(`setenv={"A": "1"}`)' in text and to_flags({"setenv": {"A": "1"}}) == ["--setenv=A=1"]


def test_live_false_is_plain():
    assert "(or with `live=False`)" in " ".join(doc().split())
    assert isinstance(_view.make_view(live=False), _view.PlainView)


def test_binary_order_sentence():
    text = " ".join(doc().split())
    assert "the binary `TFYARN_BINARY` names, the one its wheel installed, or `tfyarn` on `PATH`" in text


# ---- every other behavioural sentence of docs/python.md and README.md's Python part ----------

README = os.path.join(os.path.dirname(DOC), os.pardir, "README.md")
ROOT = os.path.dirname(os.path.dirname(DOC))


def flat(text):
    return " ".join(text.split())


def section(heading):
    """The text under heading (a whole line, e.g. "## Run a function") up to the next heading."""
    text = doc()
    start = text.index("\n" + heading + "\n") + len(heading) + 2
    end = text.find("\n## ", start)
    return flat(text[start : end if end >= 0 else len(text)])


def said(text, *sentences):
    for s in sentences:
        assert flat(s) in text, "the docs no longer say: " + s


def run_argv(log):
    return [c for c in calls(log) if c[0] == "run"]


def calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_intro_event_stream_and_standard_library(stub):
    said(
        flat(doc()),
        "The `tfyarn` Python package runs a function, a script or a command on YARN as `tfyarn run` does, and gives the function's return value back.",
        "It drives the tfyarn binary through its event stream ([events.md](events.md)); its core needs only Python's standard library.",
        "Every exception is a `tfyarn.Error`",
    )
    tfyarn.run(["true"], worker="1c")
    assert run_argv(stub)[0][:3] == ["run", "--output", "events"]
    # The core's modules import, at their top, nothing but the standard library and their own;
    # cloudpickle only inside the functions that ship a function or read its value.
    pkg = os.path.join(ROOT, "python", "tfyarn")
    for name in os.listdir(pkg):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(pkg, name)) as f:
            tree = ast.parse(f.read())
        for node in tree.body:
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                mods = [node.module or ""]
            for m in mods:
                assert m.split(".")[0] in sys.stdlib_module_names, "%s imports %s at its top" % (name, m)


def test_readme_python_part(stub, tmp_path, monkeypatch):
    with open(README) as f:
        readme = flat(f.read())
    said(readme, "From Python or a notebook, the wheel's `tfyarn` package runs a function and returns worker:0's return value")
    said(readme, 'res.value # backend="local" runs it as local processes')
    assert tfyarn.run(lambda: os.environ["TFYARN_TASK"], worker="2x1c").value == "worker:0"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert tfyarn.run(lambda: 5, worker="1c", backend="local").value == 5
    assert "--local" in run_argv(stub)[-1]


def test_released_package_refuses_another_binary(stub, monkeypatch):
    said(
        section("## Installing the Python package"),
        "A released package refuses a binary of another version, in one line naming both (`tfyarn.BinaryError`); a development build goes with any.",
    )
    monkeypatch.setenv("STUB_VERSION", "2.0.0")
    with pytest.raises(tfyarn.BinaryError) as e:
        _binary.checked_binary("1.0.0")
    assert "2.0.0" in str(e.value) and "1.0.0" in str(e.value) and "\n" not in str(e.value)
    assert _binary.compatible("devel", "2.0.0")


def test_run_a_function_bullets(stub, tmp_path):
    text = section("## Run a function")
    said(text, "The function is shipped by value with cloudpickle: closures and the notebook's own definitions travel with it.")
    offset = 3

    class Local:  # defined here, as in a notebook
        n = 4

    assert tfyarn.run(lambda: Local.n + offset, worker="1c").value == 7

    said(
        text,
        "`res.value` is worker:0's return value, chief:0's when the job has a chief, and rank 0's with "
        '`framework="pytorch"`. `return_all=True` fills `res.values` with every task\'s, by task name.',
    )
    res = tfyarn.run(lambda: os.environ["TFYARN_TASK"], worker="2x1c", return_all=True)
    assert res.value == "worker:0" and res.values == {"worker:0": "worker:0", "worker:1": "worker:1"}
    assert tfyarn.run(lambda: os.environ["TFYARN_TASK"], chief="1c", worker="1x1c").value == "chief:0"

    said(text, "A script or a command runs the same way", "`res.value` is then None.")
    script = tmp_path / "s.py"
    script.write_text("print('hi')\n")
    assert tfyarn.run(str(script), worker="1c").value is None
    assert tfyarn.run(["sh", "-c", "echo $TFYARN_TASK"], worker="2x1c").value is None

    said(text, "`True` is a bare flag, a list repeats the flag and a dict gives `KEY=VALUE` items")
    assert to_flags({"mlflow": True, "files": ["a", "b"], "setenv": {"A": "1"}}) == ["--mlflow", "--files=a", "--files=b", "--setenv=A=1"]
    said(text, "A flag added to the CLI works with no change to the package.")
    assert to_flags({"some_future_flag": "x"}) == ["--some-future-flag=x"]


def test_task_exception_is_chained(stub):
    said(flat(doc()), "The task's exception is chained (`raise ... from`) when it unpickles on the client.")

    def train():
        raise KeyError("k")

    with pytest.raises(tfyarn.TaskError) as e:
        tfyarn.run(train, worker="1c")
    assert isinstance(e.value.__cause__, KeyError)


def test_submit_and_come_back(stub, monkeypatch):
    text = section("## Submit and come back")
    said(text, "# returns once YARN accepted it", "# tfyarn status APP --output json, as a dict")
    job = tfyarn.submit(["true"], worker="1c")
    assert job.app_id == "application_1_0002" and calls(stub)[-1][0] == "submit"
    assert isinstance(job.status(), dict) and calls(stub)[-1][0] == "status" and calls(stub)[-1][-1] == job.app_id
    assert "--output" in calls(stub)[-1] and "json" in calls(stub)[-1]
    said(text, "# tfyarn logs APP; job.logs(follow=True) yields lines until it ends")
    assert job.logs() == "[worker:0] line 1\n[worker:0] line 2\n"
    assert list(job.logs(follow=True)) == ["[worker:0] line 1", "[worker:0] line 2"]
    said(text, "job.kill()", "tfyarn.list(), tfyarn.status(app_id), tfyarn.logs(app_id), tfyarn.cluster()")
    job.kill()
    assert calls(stub)[-1] == ["kill", job.app_id]
    assert tfyarn.list() and tfyarn.status(job.app_id)["id"] == job.app_id and tfyarn.cluster() == {"nodes": 2}
    said(text, "# a Result, or the errors of run; tfyarn.Error once timeout passed")
    assert job.wait().final_status == "SUCCEEDED"
    said(text, "`tfyarn.Job(app_id).wait()` follows a job submitted elsewhere.")
    monkeypatch.setenv("STUB_WAIT_SLEEP", "30")
    with pytest.raises(tfyarn.Error, match="did not end within"):
        tfyarn.Job("application_1_0009").wait(timeout=0.5)
    assert ["wait", "application_1_0009", "--output", "events"] == calls(stub)[-1][:4]


def test_local_backend(stub, tmp_path, monkeypatch):
    said(section("## The local backend"), '`backend="local"` runs the same call as local processes (`tfyarn run --local`), with no cluster.')
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert tfyarn.run(lambda: 1, worker="1c", backend="local").app_id == "local"
    assert "--local" in run_argv(stub)[-1]


def test_plain_view_streams(stub, tmp_path, capsys):
    said(
        section("## The Jupyter view"),
        "the progress lines go to stderr and the tasks' output lines to stdout.",
        "Interrupting the cell kills the application, waits for it to end and says so, then raises `KeyboardInterrupt`.",
    )
    # The binary's own stderr (its progress lines; the stub passes a task's stderr there) goes to
    # stderr, the tasks' output lines to stdout.
    script = tmp_path / "s.py"
    script.write_text("import sys\nprint('out line')\nprint('a progress line', file=sys.stderr)\n")
    tfyarn.run(str(script), worker="1c", live=False)
    out, err = capsys.readouterr()
    assert "[worker:0] out line" in out and "out line" not in err
    assert "a progress line" in err and "a progress line" not in out


def test_what_the_tasks_need(stub):
    text = section("## What the tasks need")
    said(text, "cloudpickle and the task side of the package travel with the job (a zip put first on the task's `sys.path`)")
    from tfyarn import _ship

    with zipfile.ZipFile(_ship.deps_zip()) as z:
        names = z.namelist()
    assert "cloudpickle/__init__.py" in names and "tfyarn/_task.py" in names
    assert "sys.path.insert(0, " in _ship._SCRIPT_TEXT
    said(text, "Tested with Python 3.11 (client and tasks).")


def test_tasks_python_is_checked(tmp_path, monkeypatch, capsys):
    text = section("## What the tasks need")
    said(
        text,
        "The payload names the client's; a task on another refuses it before unpickling: its process exits 2 with one line, "
        "which the job's diagnostics quote (with `framework=\"pytorch\"` too, from torchrun's failure summary) and "
        "`tfyarn.JobFailed` carries:",
        "A payload from an SDK before this check names no version and loads as before.",
    )
    from tfyarn import _ship, _task

    example = re.search(r"`(tfyarn: the function was pickled by [^`]*)`", text)
    assert example and example.group(1) == _task.python_mismatch("3.11", "3.10", "/usr/bin/python3", "/c")
    # The diagnostics keep a stderr line's first diagStderrLineLen characters (internal/appmaster/core):
    # the whole line fits. python/notebooks_e2e_test.go sees it in JobFailed with the real binary
    # and, with framework="pytorch", the real torchrun (test_task: the error file it reads).
    with open(os.path.join(ROOT, "internal", "appmaster", "core", "stderr.go")) as f:
        keep = int(re.search(r"diagStderrLineLen\s*=\s*(\d+)", f.read()).group(1))
    assert len(example.group(1)) <= keep
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _, payload, _ = _ship.write_function(str(tmp_path), lambda: 1, (), {})
    with open(payload, "rb") as f:
        assert _task.pickled_by(f) == "%d.%d" % sys.version_info[:2]
    bad = tmp_path / "other.pkl"  # another minor version's header, then no pickle at all
    bad.write_bytes(_ship.payload_header("3.%d" % (sys.version_info[1] + 1)) + b"not a pickle")
    assert _task.main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith("tfyarn: the function was pickled by Python 3.")
    assert sys.version_info[:2] == (3, 11), "make check's .venv-notebook is the Python the page names"


def test_the_sdk_tests_section():
    text = section("## The Python SDK's tests")
    said(text, "`make test` makes `.venv-notebook` (`bash scripts/tfenv.sh notebook`, pinned)")
    with open(os.path.join(ROOT, "scripts", "test.sh")) as f:
        assert "\nbash scripts/tfenv.sh notebook\n" in f.read()
    said(text, "type-checks the package (`mypy --strict`) and runs its unit tests (`python/tests/`) in it")
    with open(os.path.join(ROOT, "scripts", "check.sh")) as f:
        check = f.read()
    assert "python -m mypy" in check and "python -m pytest -q -p no:cacheprovider python/tests" in check
    with open(os.path.join(ROOT, "python", "mypy.ini")) as f:
        assert "\nstrict = True\nfiles = tfyarn\n" in f.read()


def test_pytorch_function(stub, monkeypatch):
    said(
        section("## Run a function"),
        'With `framework="pytorch"` the function runs under torchrun in every process (`nproc_per_node=2` gives two per container)',
    )
    # The SDK's part: the flags (the binary's torchrun launch is internal/framework/pytorch's, the
    # processes' DDP make test-notebooks' pytorch_ddp.ipynb) and rank 0's value wherever it ran.
    monkeypatch.setenv("STUB_RANKS", "worker:0=2,worker:1=0")
    res = tfyarn.run(lambda: os.environ["RANK"], worker="2x1c", framework="pytorch", nproc_per_node=2)
    assert res.value == "0"
    argv = run_argv(stub)[-1]
    assert "--framework=pytorch" in argv and "--nproc-per-node=2" in argv


def test_pytorch_function_calls_init_process_group_itself():
    said(section("## Run a function"), "it calls `dist.init_process_group` itself.")
    # make test-notebooks runs this notebook's function on the test cluster (TestNotebooksAll).
    with open(os.path.join(ROOT, "examples", "notebooks", "pytorch_ddp.ipynb")) as f:
        cells = json.load(f)["cells"]
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "dist.init_process_group(" in code and 'framework="pytorch"' in code and "nproc_per_node=2" in code

import _thread
import json
import os
import sys
import threading
import time
import types

import pytest

import tfyarn
from tfyarn import _view


class FakeHandle:
    def __init__(self, shown):
        self.shown = shown

    def update(self, data, raw):
        self.shown.append(data)


def test_jupyter_view_updates_in_place(monkeypatch):
    shown = []

    def display(data, raw, display_id):
        assert raw and display_id
        shown.append(data)
        return FakeHandle(shown)

    ipython = types.ModuleType("IPython")
    shell_class = type("ZMQInteractiveShell", (), {})
    ipython.get_ipython = lambda: shell_class()
    display_module = types.ModuleType("IPython.display")
    display_module.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)
    view = _view.make_view()
    assert isinstance(view, _view.JupyterView)
    view.event({"type": "submitted", "app_id": "application_1_0001"})
    view.event({"type": "task", "task": "worker:0", "state": "RUNNING", "host": "n1"})
    view.event({"type": "progress", "task": "worker:0", "step": 3, "loss": 0.5})
    view.event({"type": "log", "task": "worker:0", "line": "epoch 1 <done>"})
    view.event({"type": "result", "app_id": "application_1_0001", "state": "FINISHED", "final_status": "SUCCEEDED"})
    view.close()
    last = shown[-1]
    assert len(shown) >= 2  # the first display, then updates of the same handle
    assert "application_1_0001: FINISHED (SUCCEEDED)" in last["text/plain"]
    assert "worker:0" in last["text/plain"] and "loss=0.5, step=3" in last["text/plain"]
    assert "epoch 1 &lt;done&gt;" in last["text/html"]
    with open(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "python.md")) as f:
        page = " ".join(f.read().split())
    assert (
        "Inside a Jupyter kernel the job shows as one view updated in place: its state, the tasks, their progress and the deciding task's last lines."
        in page
    )


def test_plain_outside_jupyter(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert isinstance(_view.make_view(), _view.PlainView)


def test_interrupt_kills_and_reraises(stub, monkeypatch, capsys):
    monkeypatch.setenv("STUB_WAIT_SLEEP", "3")  # the stub's wait ends 3 s in, as a killed job would

    def interrupt_once_waiting():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and '"wait"' not in (stub.read_text() if stub.exists() else ""):
            time.sleep(0.05)
        time.sleep(0.5)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_waiting, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        tfyarn.Job("application_1_0004").wait()
    calls = [json.loads(line) for line in stub.read_text().splitlines()]
    assert ["kill", "application_1_0004"] in calls
    assert "tfyarn: interrupted: killed application application_1_0004" in capsys.readouterr().err

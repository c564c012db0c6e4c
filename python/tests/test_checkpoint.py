"""tfyarn.checkpoint against a stand-in for the launcher's side of the protocol."""

import json
import os
import signal
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # python/

from tfyarn import checkpoint  # noqa: E402


@pytest.fixture
def ckdir(tmp_path, monkeypatch):
    d = tmp_path / "checkpoint"
    d.mkdir()
    monkeypatch.setenv(checkpoint.ENV_DIR, str(d))
    monkeypatch.delenv(checkpoint.ENV_RESTORED, raising=False)
    return d


def launcher_takes_mark(d, record):
    """What the launcher does: waits for the mark, removes it, writes the saved record."""
    mark = d / checkpoint.COMPLETE_MARK
    deadline = time.monotonic() + 5
    while not mark.exists():
        assert time.monotonic() < deadline, "no mark within 5 s"
        time.sleep(0.001)
    mark.unlink()
    (d / checkpoint.SAVED_FILE).write_text(json.dumps(record) + "\n")


def test_mark_complete_waits_for_the_launcher(ckdir):
    record = {"id": "001795638667412-application_1_0001", "path": "/x", "bytes": 3, "files": 1}
    t = threading.Thread(target=launcher_takes_mark, args=(ckdir, record))
    t.start()
    checkpoint.mark_complete(timeout=5)
    t.join()
    assert not (ckdir / checkpoint.COMPLETE_MARK).exists()
    assert checkpoint.wait_saved(None, timeout=1) == record
    assert checkpoint.last_saved() == record


def test_mark_complete_writes_the_step(ckdir):
    marks = []

    def launcher():
        mark = ckdir / checkpoint.COMPLETE_MARK
        deadline = time.monotonic() + 5
        while not mark.exists() or not mark.read_text():
            assert time.monotonic() < deadline, "no mark with a step within 5 s"
            time.sleep(0.001)
        marks.append(mark.read_text())
        mark.unlink()

    t = threading.Thread(target=launcher)
    t.start()
    checkpoint.mark_complete(timeout=5, step=1200)
    t.join()
    assert marks == ["1200\n"]
    for bad in (-1, 1.5, True, "7"):
        with pytest.raises(checkpoint.CheckpointError, match="step must be a number from 0 up"):
            checkpoint.mark_complete(timeout=0.05, step=bad)  # type: ignore[arg-type]
    assert not (ckdir / checkpoint.COMPLETE_MARK).exists()


def test_mark_complete_says_when_no_launcher_takes_it(ckdir):
    with pytest.raises(checkpoint.CheckpointError, match="took no copy"):
        checkpoint.mark_complete(timeout=0.05)


def test_without_checkpoint_the_error_names_the_flag(monkeypatch):
    monkeypatch.delenv(checkpoint.ENV_DIR, raising=False)
    assert not checkpoint.enabled()
    with pytest.raises(checkpoint.CheckpointError, match="tfyarn run --checkpoint"):
        checkpoint.directory()


def test_restored(ckdir, monkeypatch):
    assert checkpoint.restored() is None
    monkeypatch.setenv(checkpoint.ENV_RESTORED, "001795638667412-application_1_0001")
    assert checkpoint.restored() == "001795638667412-application_1_0001"


def test_preemption_watch_sees_the_signal_and_the_file(tmp_path, monkeypatch):
    warning = tmp_path / "warning.json"
    monkeypatch.setenv(checkpoint.ENV_PREEMPTION_FILE, str(warning))
    previous = signal.getsignal(signal.SIGWINCH)
    try:
        watch = checkpoint.PreemptionWatch()
        assert not watch.warned
        os.kill(os.getpid(), signal.SIGWINCH)
        assert watch.warned
        early = checkpoint.PreemptionWatch()  # a warning that came before the handler: the file
        assert not early.warned
        warning.write_text('{"deadline_unix_ms": 1795638667412}\n')
        assert early.warned
        assert early.deadline_unix_ms() == 1795638667412
    finally:
        signal.signal(signal.SIGWINCH, previous)


def test_tensorflow_exit_waits_for_the_kill(ckdir, tmp_path, monkeypatch):
    from tfyarn.checkpoint import tensorflow as tfck

    warning = tmp_path / "warning.json"
    warning.write_text('{"deadline_unix_ms": 10000}\n')  # 10 s after the epoch
    monkeypatch.setenv(checkpoint.ENV_PREEMPTION_FILE, str(warning))
    previous = signal.getsignal(signal.SIGWINCH)
    clock = [0.0]
    exits = []
    try:
        watch = checkpoint.PreemptionWatch()
        exit_fn = tfck.exit_after_save(
            watch, chief=False, kill_wait=5, exit=exits.append,
            sleep=lambda s: clock.__setitem__(0, clock[0] + s), now=lambda: clock[0])
        exit_fn()
    finally:
        signal.signal(signal.SIGWINCH, previous)
    assert exits == [tfck.EXIT_NOT_KILLED]
    assert clock[0] >= 15  # the deadline, then kill_wait more


def test_tensorflow_chief(monkeypatch):
    from tfyarn.checkpoint import tensorflow as tfck

    for tf_config, chief in [
        ('{"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "chief", "index": 0}}', True),
        ('{"cluster": {"chief": ["a:1"], "worker": ["b:1"]}, "task": {"type": "worker", "index": 0}}', False),
        ('{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}}', True),
        ('{"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}', False),
    ]:
        monkeypatch.setenv("TF_CONFIG", tf_config)
        assert tfck.is_chief() is chief


def test_torch_save_marks_the_step(ckdir, monkeypatch):
    """Checkpointer.save(state, step=N) marks with the step (torch stood in for: a single process)."""
    import types

    from tfyarn.checkpoint import torch as torchck

    saved = []
    fake = types.SimpleNamespace(
        is_initialized=lambda: False,
        DefaultSavePlanner=lambda **kw: None,
        FileSystemWriter=lambda path: path,
        save=lambda state, storage_writer, planner: saved.append((dict(state), storage_writer)),
    )
    monkeypatch.setattr(torchck.importlib, "import_module", lambda name: fake)
    marks = []
    monkeypatch.setattr(checkpoint, "mark_complete", lambda step=None: marks.append(step))
    previous = signal.getsignal(signal.SIGWINCH)
    try:
        ck = torchck.Checkpointer()
        ck.save({"step": 300}, step=300)
        ck.save({"step": 400})
    finally:
        signal.signal(signal.SIGWINCH, previous)
    assert marks == [300, None]
    assert saved == [({"step": 300}, str(ckdir / "torch")), ({"step": 400}, str(ckdir / "torch"))]

"""tfyarn.warnings() and tfyarn.WarningWatch against the file as the launcher writes it
(internal/contract/warnings.go, internal/executor/warnings.go)."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # python/

import tfyarn  # noqa: E402
from tfyarn import _warnings  # noqa: E402

GPU_IDLE = {
    "kind": "gpu-idle", "time": "2026-11-25T20:31:07.412Z", "time_unix_ms": 1795638667412,
    "reason": "GPUs idle for 15m0s (0 % utilisation): the job fails at --gpu-idle-timeout 30m0s unless they work",
    "ends_at": "2026-11-25T20:46:07.412Z", "ends_at_unix_ms": 1795639567412,
    "task": "worker:0", "container": "container_1_0001_01_000002",
}  # fmt: skip
PREEMPTION = {
    "kind": "preemption", "time": "2026-11-25T20:32:00.000Z", "time_unix_ms": 1795638720000,
    "reason": "YARN's scheduler will preempt container container_1_0001_01_000002 (strict contract)",
    "deadline": "2026-11-25T20:32:15.000Z", "deadline_unix_ms": 1795638735000,
    "task": "worker:0", "container": "container_1_0001_01_000002",
}  # fmt: skip


def line(fields):
    return (json.dumps(fields, separators=(",", ":")) + "\n").encode()


def test_without_the_variable_or_the_file_there_are_none(tmp_path, monkeypatch):
    monkeypatch.delenv(_warnings.ENV_WARNINGS_FILE, raising=False)
    assert tfyarn.warnings() == []
    monkeypatch.setenv(_warnings.ENV_WARNINGS_FILE, str(tmp_path / "absent.jsonl"))
    assert tfyarn.warnings() == []


def test_watch_returns_each_warning_once_whole_lines_only(tmp_path, monkeypatch):
    path = tmp_path / "tfyarn-warnings-worker-0.jsonl"
    monkeypatch.setenv(_warnings.ENV_WARNINGS_FILE, str(path))
    watch = tfyarn.WarningWatch()
    assert watch.new() == []
    path.write_bytes(line(GPU_IDLE))
    (idle,) = watch.new()
    assert idle == tfyarn.TaskWarning(
        kind="gpu-idle", time_unix_ms=1795638667412, reason=GPU_IDLE["reason"], task="worker:0",
        container="container_1_0001_01_000002", deadline_unix_ms=None, ends_at_unix_ms=1795639567412,
    )  # fmt: skip
    assert watch.new() == []
    # A line the launcher has not finished (no newline yet) waits for the next call.
    whole = line(PREEMPTION)
    with open(path, "ab") as f:
        f.write(whole[:20])
    assert watch.new() == []
    with open(path, "ab") as f:
        f.write(whole[20:])
    (pre,) = watch.new()
    assert pre.kind == "preemption" and pre.deadline_unix_ms == 1795638735000 and pre.ends_at_unix_ms is None
    assert [w.kind for w in tfyarn.warnings()] == ["gpu-idle", "preemption"]


def test_lines_that_are_no_known_warning_are_skipped(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_bytes(b"not json\n[1]\n" + line(dict(GPU_IDLE, kind="fire")) + line(dict(GPU_IDLE, ends_at_unix_ms=True)))
    (w,) = tfyarn.warnings(str(path))
    assert w.kind == "gpu-idle" and w.ends_at_unix_ms is None


def test_a_new_file_in_its_place_is_read_from_its_start(tmp_path):
    path = tmp_path / "w.jsonl"
    path.write_bytes(line(GPU_IDLE) + line(GPU_IDLE))
    watch = tfyarn.WarningWatch(str(path))
    assert len(watch.new()) == 2
    path.write_bytes(line(PREEMPTION))
    assert [w.kind for w in watch.new()] == ["preemption"]


def test_the_docs_example_line_is_read():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "failures.md")) as f:
        example = next(x for x in f.read().splitlines() if x.startswith('{"kind":"gpu-idle"'))
    w = _warnings._parse(example.encode())
    assert w is not None and w.kind == "gpu-idle" and w.ends_at_unix_ms == 1795639567412 and w.deadline_unix_ms is None
    with open(os.path.join(root, "docs", "python.md")) as f:
        text = " ".join(f.read().split())
    assert "A `tfyarn.WarningWatch()` polled at step boundaries returns each warning once" in text
    assert "outside a task there are none" in text

"""run, submit and Job: the SDK drives the tfyarn binary and reads its events (docs/events.md)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _binary, _flags, _result, _ship, _view
from ._errors import Error, JobFailed, TaskError, UsageError

Target = Union[Callable[..., Any], str, Sequence[str]]

_KILL_WAIT = 60.0  # seconds an interrupted job may take to end once killed


class Result:
    """A finished job: .value (the deciding task's return value, function jobs), .values
    {task: value}, .app_id, .final_status, .state, .tasks (run's JSON tasks), .tracking_url."""

    def __init__(self, event: Dict[str, Any], value: Any = None, values: Optional[Dict[str, Any]] = None) -> None:
        self.app_id: str = str(event.get("app_id", ""))
        self.succeeded: bool = bool(event.get("succeeded"))
        self.state: str = str(event.get("state", ""))
        self.final_status: str = str(event.get("final_status", ""))
        self.diagnostics: str = str(event.get("diagnostics", ""))
        self.tracking_url: str = str(event.get("tracking_url", ""))
        self.tasks: List[Dict[str, Any]] = list(event.get("tasks") or [])
        self.value: Any = value
        self.values: Dict[str, Any] = values or {}

    def __repr__(self) -> str:
        return "Result(app_id=%r, final_status=%r, value=%r)" % (self.app_id, self.final_status, self.value)


def _cli(package_version: str) -> str:
    return _binary.checked_binary(package_version)


def _version() -> str:
    from . import __binary_version__ as version

    return str(version)


def _one_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def call_json(args: List[str], timeout: float = 120) -> Any:
    """Runs `tfyarn ARGS --output json` and returns its parsed JSON; exit 2 is a UsageError."""
    argv = [_cli(_version()), args[0], "--output", "json"] + args[1:]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise Error("tfyarn %s did not answer within %d s" % (args[0], timeout)) from None
    if out.returncode != 0:
        cls = UsageError if out.returncode == 2 else Error
        raise cls(_one_line(out.stderr) or "tfyarn %s exited %d" % (args[0], out.returncode))
    try:
        return json.loads(out.stdout)
    except ValueError:
        raise Error("tfyarn %s printed no JSON: %s" % (args[0], _one_line(out.stdout))) from None


class _Stream:
    """One tfyarn process whose stdout is JSON Lines events: read by threads into a queue so that
    the caller's loop wakes for KeyboardInterrupt and deadlines."""

    def __init__(self, argv: List[str], cwd: Optional[str] = None) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1, cwd=cwd, start_new_session=True,
        )  # fmt: skip
        self.items: "queue.Queue[Tuple[str, Any]]" = queue.Queue()
        self.open = 2
        for name, pipe in (("out", self.proc.stdout), ("err", self.proc.stderr)):
            threading.Thread(target=self._read, args=(name, pipe), daemon=True).start()

    def _read(self, name: str, pipe: Any) -> None:
        for line in pipe:
            line = line.rstrip("\n")
            if name == "out":
                try:
                    ev = json.loads(line)
                except ValueError:
                    ev = None
                if isinstance(ev, dict) and "type" in ev:
                    self.items.put(("event", ev))
                    continue
            self.items.put((name, line))
        self.items.put(("eof", name))

    def next(self, timeout: float) -> Optional[Tuple[str, Any]]:
        """The next item, None at the end of both streams; raises queue.Empty after timeout."""
        if self.open == 0:
            return None
        item = self.items.get(timeout=timeout)
        if item[0] == "eof":
            self.open -= 1
            return self.next(timeout) if self.open else None
        return item

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass


class Job:
    """A submitted application (or, with backend="local", the local run in progress)."""

    def __init__(self, app_id: str, follow: Optional[_Stream] = None, function: bool = False,
                 return_all: bool = False, live: Optional[bool] = None, cleanup: Optional[str] = None) -> None:
        self.app_id = app_id
        self._stream = follow
        self._function = function
        self._return_all = return_all
        self._live = live
        self._cleanup = cleanup
        self._last: Dict[str, Any] = {}
        self._result: Optional[Result] = None

    def __repr__(self) -> str:
        return "Job(app_id=%r)" % self.app_id

    def status(self) -> Dict[str, Any]:
        """`tfyarn status APP --output json` (a local job: its last state event)."""
        if self.app_id == "local" or self._stream is not None and not self.app_id.startswith("application_"):
            return dict(self._last)
        return status(self.app_id)

    def logs(self, follow: bool = False) -> Union[str, Iterator[str]]:
        """The task logs as `tfyarn logs` prints them; follow=True: an iterator of lines until the end."""
        return logs(self.app_id, follow=follow)

    def kill(self) -> None:
        """Kills the application (a local job: stops its processes)."""
        if self._stream is not None and self.app_id in ("", "local"):
            self._stream.stop(signal.SIGINT)
            return
        _kill(self.app_id)

    def wait(self, timeout: Optional[float] = None) -> Result:
        """Follows the job to its end and returns its Result; raises JobFailed or TaskError when it
        failed, Error when timeout (seconds) passed first (the job goes on)."""
        if self._result is not None:
            return self._result
        if self._stream is None:
            argv = [_cli(_version()), "wait", self.app_id, "--output", "events"]
            self._stream = _Stream(argv)
        try:
            ev = _follow(self, self._stream, _view.make_view(self._live), timeout)
            self._result = _finish(ev, self._function, self._return_all)
        finally:
            if self._cleanup and self._stream.proc.poll() is not None:
                shutil.rmtree(self._cleanup, ignore_errors=True)
        return self._result


def _kill(app_id: str) -> None:
    argv = [_cli(_version()), "kill", app_id]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if out.returncode == 2:
        raise UsageError(_one_line(out.stderr) or "tfyarn kill %s exited 2" % app_id)


def _follow(job: Job, stream: _Stream, view: Any, timeout: Optional[float]) -> Dict[str, Any]:
    """Reads the stream to its last event (result or error), showing it on view; a KeyboardInterrupt
    kills the job, waits for it to end (bounded) and is raised again."""
    deadline = None if timeout is None else time.monotonic() + timeout
    last: Dict[str, Any] = {}
    errors: List[str] = []
    try:
        while True:
            if deadline is not None and time.monotonic() > deadline:
                stream.stop()
                raise Error("tfyarn: %s did not end within %g s (it goes on; wait again or kill it)" % (job.app_id, timeout or 0))
            try:
                item = stream.next(0.25)
            except queue.Empty:
                continue
            if item is None:
                break
            kind, data = item
            if kind == "event":
                last = data
                if data.get("app_id") and data.get("type") in ("submitted", "state", "result"):
                    job.app_id = str(data["app_id"])
                if data.get("type") == "state":
                    job._last = data
                view.event(data)
            elif kind == "err":
                errors.append(data)
                view.stderr(data)
            else:
                print(data, flush=True)
    except KeyboardInterrupt:
        _interrupted(job, stream)
        raise
    finally:
        view.close()
    rc = _reap(stream)
    return _ending(last, errors, rc)


def _reap(stream: _Stream) -> int:
    try:
        return stream.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        stream.stop(signal.SIGKILL)
        return stream.proc.wait(timeout=30)


def _interrupted(job: Job, stream: _Stream) -> None:
    app = job.app_id
    try:
        if app.startswith("application_"):
            _kill(app)
        else:
            stream.stop(signal.SIGINT)
        stream.proc.wait(timeout=_KILL_WAIT)
        said = "killed application %s" % app if app.startswith("application_") else "stopped the local job"
    except (Error, OSError, subprocess.TimeoutExpired) as e:
        stream.stop(signal.SIGKILL)
        said = "tried to kill %s (%s)" % (app or "the job", e)
    print("tfyarn: interrupted: %s" % said, file=sys.stderr, flush=True)


def _ending(last: Dict[str, Any], errors: List[str], rc: int) -> Dict[str, Any]:
    if last.get("type") == "error" or rc == 2:
        message = str(last.get("message", "")) if last.get("type") == "error" else ""
        raise UsageError(message or _one_line("\n".join(errors)) or "tfyarn exited 2")
    if last.get("type") != "result":
        raise Error("tfyarn ended (exit %d) without a result: %s" % (rc, _one_line("\n".join(errors)) or "no output"))
    return last


def _outcome(ev: Dict[str, Any], task: str) -> Optional[_result.Outcome]:
    """The task's result file, from the local run directory or `tfyarn result`."""
    local = (ev.get("result_files") or {}).get(task)
    if local:
        try:
            with open(local, "rb") as f:
                return _result.decode(f.read())
        except OSError:
            return None
    argv = [_cli(_version()), "result", str(ev.get("app_id")), "--task", task]
    try:
        out = subprocess.run(argv, capture_output=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        return None
    return _result.decode(out.stdout) if out.returncode == 0 else None


def _deciding_task(tasks: List[Dict[str, Any]]) -> str:
    names = [str(t.get("task")) for t in tasks]
    return "chief:0" if "chief:0" in names else "worker:0"


def _failed_tasks(tasks: List[Dict[str, Any]]) -> List[str]:
    return [str(t.get("task")) for t in tasks if t.get("exit_code") not in (None, 0)]


def _values(ev: Dict[str, Any], return_all: bool) -> Tuple[Any, Dict[str, Any]]:
    """The deciding task's value and {task: value}: worker:0's (chief:0's), or under torchrun the
    value of the task whose container held rank 0."""
    tasks = [str(t.get("task")) for t in ev.get("tasks") or []]
    first = _deciding_task(ev.get("tasks") or [])
    order = [first] + [t for t in tasks if t != first]
    values: Dict[str, Any] = {}
    decider = ""
    for name in order:
        if decider and not return_all:
            break
        got = _outcome(ev, name)
        if got is None or not got.ok:
            continue
        values[name] = got.value()
        if not decider and got.rank in (None, 0):
            decider = name
    if not decider:
        return None, values if return_all else {}
    return values[decider], values if return_all else {decider: values[decider]}


def _finish(ev: Dict[str, Any], function: bool, return_all: bool) -> Result:
    try:
        return _decide(ev, function, return_all)
    finally:
        _remove_local_results(ev)


def _remove_local_results(ev: Dict[str, Any]) -> None:
    """run --local leaves its result files to the caller (docs/running-jobs.md): read, they go,
    with their directory (only the binary's own, tfyarn-local-results-*)."""
    for path in (ev.get("result_files") or {}).values():
        d = os.path.dirname(str(path))
        if os.path.basename(d).startswith("tfyarn-local-results-"):
            shutil.rmtree(d, ignore_errors=True)


def _decide(ev: Dict[str, Any], function: bool, return_all: bool) -> Result:
    tasks = list(ev.get("tasks") or [])
    if ev.get("succeeded"):
        if not function:
            return Result(ev)
        value, values = _values(ev, return_all)
        return Result(ev, value, values)
    failed = _failed_tasks(tasks)
    if function:
        for name in failed[:4]:
            got = _outcome(ev, name)
            if got is not None and not got.ok:
                err = TaskError(str(ev.get("app_id")), name, got.type_name, got.message, got.traceback, got.exception())
                raise err from got.exception()
    reason = str(ev.get("diagnostics") or "").strip().splitlines()
    raise JobFailed(
        "application %s %s: %s%s" % (
            ev.get("app_id"), (ev.get("final_status") or ev.get("state") or "FAILED").lower(),
            "task %s failed, " % failed[0] if failed else "", reason[0] if reason else "no diagnostics",
        ),
        app_id=str(ev.get("app_id")), task=failed[0] if failed else "", reason=reason[0] if reason else "",
    )  # fmt: skip


def _command(target: Target, args: Sequence[Any], kwargs: Optional[Dict[str, Any]], flags: Dict[str, Any],
             workdir: str) -> Tuple[List[str], bool]:
    """The CLI arguments after the subcommand for target, and whether it is a function job."""
    if callable(target):
        try:
            script, payload, deps = _ship.write_function(workdir, target, args, kwargs or {})
        except ImportError:
            raise UsageError("shipping a function needs cloudpickle: pip install cloudpickle") from None
        files = flags.pop("files", None) or []
        files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
        flags["files"] = files + [payload, "%s#%s" % (deps, _ship.DEPS)]
        return _flags.to_flags(flags) + [script, "--", _ship.PAYLOAD], True
    if kwargs:
        raise UsageError("kwargs= is for a function target; give a script's or command's arguments in args=")
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        if not path.endswith(".py"):
            raise UsageError("target %r is no .py script: give a function, a script.py or a command list" % path)
        return _flags.to_flags(flags) + [path, "--"] + [str(a) for a in args], False
    command = [str(a) for a in target]
    if not command:
        raise UsageError("the command list is empty: give the program and its arguments")
    return _flags.to_flags(flags) + ["--"] + command + [str(a) for a in args], False


def start(sub: str, target: Target, args: Sequence[Any], kwargs: Optional[Dict[str, Any]], backend: str,
          flags: Dict[str, Any], return_all: bool, live: Optional[bool]) -> Job:
    """Starts `tfyarn run|submit --output events` for target; a Job that follows it."""
    if backend not in ("yarn", "local"):
        raise UsageError("backend %r is unknown: give yarn or local" % backend)
    if backend == "local":
        flags["local"] = True
        sub = "run"
    binary = _cli(_version())
    workdir = tempfile.mkdtemp(prefix="tfyarn-sdk-")
    try:
        rest, function = _command(target, args, kwargs, flags, workdir)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    if sub == "submit":
        try:
            out = call_json(["submit"] + rest)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return Job(str(out.get("app_id", "")), function=function, return_all=return_all, live=live)
    stream = _Stream([binary, "run", "--output", "events"] + rest)
    return Job("local" if backend == "local" else "", stream, function, return_all, live, cleanup=workdir)


def status(app_id: str) -> Dict[str, Any]:
    return dict(call_json(["status", app_id]))


def logs(app_id: str, follow: bool = False) -> Union[str, Iterator[str]]:
    argv = [_cli(_version()), "logs", app_id]
    if not follow:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        if out.returncode != 0:
            cls = UsageError if out.returncode == 2 else Error
            raise cls(_one_line(out.stderr) or "tfyarn logs exited %d" % out.returncode)
        return out.stdout
    return _follow_logs(argv + ["--follow"])


def _follow_logs(argv: List[str]) -> Iterator[str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            yield line.rstrip("\n")
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)

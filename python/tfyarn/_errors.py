"""The SDK's exceptions: every one is a tfyarn.Error with a one-line message."""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """Anything the SDK raises on purpose."""


class UsageError(Error):
    """The CLI refused the call (its exit code 2): bad input or a cluster that cannot take the job."""


class BinaryError(Error):
    """No tfyarn binary was found, or it is not the version this package was built with."""


class JobFailed(Error):
    """The application ended without succeeding (its exit code 1)."""

    def __init__(self, message: str, app_id: str = "", task: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.app_id = app_id
        self.task = task
        self.reason = reason


class NoRestart(Exception):
    """Raise it (or a subclass) from a task's function when a restart cannot help: malformed input,
    a configuration the function refuses. The job is not restarted for that failure, whatever
    max_restarts says; the client raises TaskError as for any exception, with this one as its
    original. Wrap another exception with `raise tfyarn.NoRestart(str(e)) from e`."""


class TaskError(JobFailed):
    """A task's function raised: its name, the exception's type and message and the remote traceback."""

    def __init__(
        self,
        app_id: str,
        task: str,
        type_name: str,
        message: str,
        remote_traceback: str,
        original: Optional[BaseException] = None,
    ) -> None:
        first = message.splitlines()[0] if message else ""
        super().__init__(
            "%s raised %s: %s (application %s)\n\nRemote traceback (%s):\n%s"
            % (task, type_name, first, app_id, task, remote_traceback.rstrip()),
            app_id=app_id,
            task=task,
            reason="%s: %s" % (type_name, first),
        )
        self.type_name = type_name
        self.remote_message = message
        self.remote_traceback = remote_traceback
        self.original = original

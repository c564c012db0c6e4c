"""How a followed job shows while it runs: in Jupyter a view updated in place (IPython's display
handles; IPython is imported only when it is already running), elsewhere plain lines on stderr."""

from __future__ import annotations

import html
import sys
import time
from collections import deque
from typing import Any, Deque, Dict, List, Optional

_LOG_LINES = 12
_UPDATE_EVERY = 0.5  # seconds: a chatty job does not flood the notebook's frontend


class PlainView:
    """Progress and errors as the CLI prints them (stderr); the tasks' output on stdout."""

    def event(self, ev: Dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind == "log":
            stream = sys.stderr if ev.get("stream") == "stderr" else sys.stdout
            print("[%s] %s" % (ev.get("task", ""), ev.get("line", "")), file=stream, flush=True)
        elif kind == "warning":
            print("tfyarn: warning: %s" % ev.get("text", ""), file=sys.stderr, flush=True)

    def stderr(self, line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class JupyterView:
    """State, tasks, progress and the decider's last lines in one output area, updated in place."""

    def __init__(self, display: Any) -> None:
        self._display = display
        self.app_id = ""
        self.state = "SUBMITTING"
        self.final_status = ""
        self.tracking_url = ""
        self.tasks: Dict[str, Dict[str, Any]] = {}
        self.progress: Dict[str, str] = {}
        self.lines: Deque[str] = deque(maxlen=_LOG_LINES)
        self.notes: List[str] = []
        self._handle: Optional[Any] = None
        self._last = 0.0

    def event(self, ev: Dict[str, Any]) -> None:
        kind = ev.get("type")
        if kind in ("submitted", "state", "result"):
            self.app_id = ev.get("app_id") or self.app_id
            self.state = ev.get("state") or self.state
            self.final_status = ev.get("final_status") or self.final_status
            self.tracking_url = ev.get("tracking_url") or self.tracking_url
            for t in ev.get("tasks") or []:
                self.tasks[str(t.get("task"))] = dict(t)
        elif kind == "task":
            self.tasks.setdefault(str(ev.get("task")), {}).update(
                {k: ev[k] for k in ("state", "host", "exit_code", "attempt") if k in ev}
            )
        elif kind == "progress":
            fields = {k: v for k, v in ev.items() if k not in ("v", "type", "time", "task")}
            self.progress[str(ev.get("task"))] = ", ".join("%s=%s" % kv for kv in sorted(fields.items()))
        elif kind == "log":
            self.lines.append("[%s] %s" % (ev.get("task", ""), ev.get("line", "")))
        elif kind == "warning":
            self.notes.append("warning: %s" % ev.get("text", ""))
        self._show(final=kind == "result")

    def stderr(self, line: str) -> None:
        if line.startswith("tfyarn:") or "error" in line.lower():
            self.notes.append(line)
            self._show(final=False)

    def close(self) -> None:
        self._show(final=True)

    def text(self) -> str:
        head = "tfyarn %s: %s%s" % (
            self.app_id or "(submitting)",
            self.state,
            " (%s)" % self.final_status if self.final_status else "",
        )
        rows = [head]
        for name, t in sorted(self.tasks.items()):
            rows.append(
                "  %-14s %-10s %-20s exit=%s %s"
                % (name, t.get("state", ""), t.get("host", ""), t.get("exit_code", ""), self.progress.get(name, ""))
            )
        rows.extend(self.notes[-3:])
        rows.extend(self.lines)
        return "\n".join(rows)

    def html(self) -> str:
        link = (
            ' <a href="%s" target="_blank">tracking UI</a>' % html.escape(self.tracking_url) if self.tracking_url else ""
        )
        cells = "".join(
            "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
            % tuple(
                html.escape(str(x))
                for x in (name, t.get("state", ""), t.get("host", ""), t.get("exit_code", ""), self.progress.get(name, ""))
            )
            for name, t in sorted(self.tasks.items())
        )
        notes = "".join("<div>%s</div>" % html.escape(n) for n in self.notes[-3:])
        log = html.escape("\n".join(self.lines))
        return (
            "<div><b>tfyarn %s</b>: %s %s%s"
            "<table><tr><th>task</th><th>state</th><th>host</th><th>exit</th><th>progress</th></tr>%s</table>"
            "%s<pre>%s</pre></div>"
            % (
                html.escape(self.app_id or "(submitting)"),
                html.escape(self.state),
                html.escape(self.final_status),
                link,
                cells,
                notes,
                log,
            )
        )

    def _show(self, final: bool) -> None:
        now = time.monotonic()
        if not final and now - self._last < _UPDATE_EVERY:
            return
        self._last = now
        data = {"text/plain": self.text(), "text/html": self.html()}
        if self._handle is None:
            self._handle = self._display(data, raw=True, display_id=True)
        else:
            self._handle.update(data, raw=True)


def make_view(live: Optional[bool] = None) -> Any:
    """A JupyterView inside a Jupyter kernel (or when live=True and IPython is there), else a PlainView."""
    if live is False:
        return PlainView()
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return PlainView()
    try:
        shell = ipython.get_ipython()
        from IPython.display import display
    except Exception:
        return PlainView()
    if shell is None or (live is None and type(shell).__name__ != "ZMQInteractiveShell"):
        return PlainView()
    return JupyterView(display)

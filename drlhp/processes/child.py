"""The one child wrapper, and the one interface both backends give the parent.

    Child        one role to run: its name, its entry point ("module:function"), the config, its ports
                 (drlhp.processes.ports), its run directory, what the parent worked out for it (``extra``),
                 --profile's directory and its Ray resources (--backend ray)
    run_child    the child wrapper, in the role's process on either backend: import the entry point
                 (there: the parent stays TensorFlow-free), run ``entry(cfg, ports, run_dir, log=log,
                 **extra)`` profiled, and turn what happens into a Report: "done" with the figures it
                 returned, or "error" with the traceback (logged, and the stop event set: the others stop)
    ChildGroup   what the parent uses of a backend: start(child), pids(), watch(until_done),
                 shutdown() -> the roles it had to kill; figures and stopped_by_signal per role. Report
                 handling and the shutdown's wait are here; a backend (drlhp.processes.launcher.ProcessGroup,
                 drlhp.processes.ray_backend.RayGroup) says how a child is started, how its report comes
                 back, and how a straggler is killed
    ChildFailed  a child that reported an error or died: ends the run with its message
"""
from __future__ import annotations

import importlib
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from drlhp.processes.messages import Report
from drlhp.processes.profiling import profiled

STOPPED_BY_SIGTERM = "stopped by SIGTERM"  # a "done" report's text when SIGTERM stopped the child


class ChildFailed(Exception):
    def __init__(self, role: str, message: str, detail: str = ""):
        super().__init__(f"the {role} process failed: {message}")
        self.role, self.detail = role, detail


@dataclass(frozen=True)
class Child:
    role: str
    entry: str  # "module:function": entry(cfg, ports, run_dir, log=log, **extra) -> figures for the summary
    cfg: Any
    ports: Any
    run_dir: str
    extra: dict = field(default_factory=dict)
    profile_dir: str | None = None  # --profile: <run_dir>/profile/<role>.{prof,txt}
    resources: dict | None = None  # --backend ray: where its actor may run (the local backend ignores it)


def run_child(child: Child, log: Callable = print) -> Report:
    """Run the child's role in this process; its Report (never raises: a failure is an "error" report)."""
    try:
        module, name = child.entry.split(":")
        fn = getattr(importlib.import_module(module), name)  # imported here: the parent stays TF-free
        with profiled(child.profile_dir, child.role):
            figures = fn(child.cfg, child.ports, child.run_dir, log=log, **child.extra)
        return Report(child.role, "done", figures=figures or {})
    except BaseException as e:  # noqa: BLE001 -- every failure is the role's report
        detail = traceback.format_exc()
        log(f"[{child.role}] crashed:\n{detail}", file=sys.stderr)
        try:
            child.ports.stop_event.set()  # the other roles stop; the parent learns why from the report
        except Exception:  # noqa: BLE001 -- the channel is gone too (Ray's hub); the parent notices anyway
            pass
        return Report(child.role, "error", text=f"{type(e).__name__}: {' '.join(str(e).split())}",
                      figures={"traceback": detail})


class ChildGroup:
    """The children of one run (see the module docstring). A backend implements ``start``, ``pids``,
    ``_poll`` (take the reports that arrive within ``timeout``; ChildFailed for a child that died without
    one), ``_running``, ``_kill_running`` and, where reports can still be waiting, ``_take_last``."""

    def __init__(self, stop_event):
        self.stop_event = stop_event
        self.figures: dict[str, dict] = {}
        self.failed: set[str] = set()
        self.stopped_by_signal: set[str] = set()  # roles that stopped because they got SIGTERM

    def start(self, child: Child) -> None:
        raise NotImplementedError

    def pids(self) -> dict[str, int]:
        raise NotImplementedError

    def _poll(self, timeout: float) -> None:
        raise NotImplementedError

    def _running(self) -> list[str]:
        raise NotImplementedError

    def _kill_running(self) -> list[str]:
        """Kill what still runs (and release the backend); the roles killed."""
        raise NotImplementedError

    def _take_last(self) -> None:
        """Take the reports still waiting once every child has ended."""

    def _set_stop(self) -> None:
        self.stop_event.set()

    def _fail(self, role: str, message: str, detail: str = ""):
        self.failed.add(role)
        self._set_stop()
        raise ChildFailed(role, message, detail)

    def _take(self, report: Report) -> None:
        if report.kind == "error":
            self._fail(report.role, report.text, (report.figures or {}).get("traceback", ""))
        if report.text == STOPPED_BY_SIGTERM:
            self.stopped_by_signal.add(report.role)
        self.figures[report.role] = report.figures or {}

    def _reported(self, role: str) -> bool:
        return role in self.figures or role in self.failed

    def watch(self, until_done: set[str]) -> None:
        """Return once every role in ``until_done`` has finished; ChildFailed when any child fails."""
        while not until_done <= set(self.figures):
            self._poll(0.2)

    def shutdown(self, timeout: float = 60.0, after_failure_timeout: float = 10.0) -> list[str]:
        """Stop every child and wait for it (saving takes a moment); returns the roles that had to be
        killed (a child takes SIGTERM as a stop request, which a stuck one cannot honour). Errors
        reported while stopping are raised as ChildFailed after all have stopped.

        After a failure the wait is shorter: a child killed while writing a message leaves a partial
        message in its queue's pipe, and its reader can block on it for good (measured: 2 kills in 11
        of the policy mid-segment left the preference interface stuck in read())."""
        if self.failed:
            timeout = min(timeout, after_failure_timeout)
        self._set_stop()
        deadline = time.monotonic() + timeout
        failure = None
        while self._running() and time.monotonic() < deadline:
            try:
                self._poll(0.2)
            except ChildFailed as e:
                failure = failure or e
        killed = self._kill_running()
        try:
            self._take_last()
        except ChildFailed as e:
            failure = failure or e
        if failure is not None:
            raise failure
        return killed

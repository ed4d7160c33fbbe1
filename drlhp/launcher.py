"""The one place that makes processes and queues: the three roles' channels, starting children with
the ``spawn`` context (TensorFlow is not fork-safe), watching them, and stopping them.

    Channels       segment_queue (bounded, drop when full), preference_queue (bounded, blocking),
                   weights to the policy and to the preference interface (latest wins),
                   agent_episode (the policy's newest episode frames for the labelling window, latest wins),
                   predictor_version and db_size (shared integers the predictor writes, the window shows),
                   report_queue (child -> parent), stop_event, gathering_done
    ProcessGroup   start(role, "module:function", **kwargs); watch(until_done=roles) -> figures per role;
                   shutdown(): set stop, wait for every child to save and exit, terminate stragglers

A child that raises reports its error and sets the stop event; a child that dies without a word
(killed, out of memory) is noticed by its exit code. Either ends the run with ChildFailed.
Children ignore SIGINT: on Ctrl-C the parent sets the stop event and the children save and exit.
"""
from __future__ import annotations

import importlib
import multiprocessing as mp
import queue as queue_lib
import signal
import sys
import time
import traceback
from dataclasses import dataclass

from drlhp.messages import Report
from drlhp.profiling import profiled
from drlhp.queues import LatestValue, SharedFlag


class ChildFailed(Exception):
    def __init__(self, role: str, message: str, detail: str = ""):
        super().__init__(f"the {role} process failed: {message}")
        self.role, self.detail = role, detail


@dataclass
class Channels:
    segment_queue: object
    preference_queue: object
    weights_to_policy: LatestValue
    weights_to_prefs: LatestValue
    report_queue: object
    stop_event: SharedFlag  # not multiprocessing.Event: a killed child can leave its lock held (queues.py)
    gathering_done: SharedFlag
    agent_episode: LatestValue
    predictor_version: object  # multiprocessing.Value("q"): the newest published weights' version
    db_size: object  # multiprocessing.Value("q"): preferences in the predictor's database

    @classmethod
    def create(cls, ctx, segment_queue_size: int, preference_queue_size: int = 16) -> "Channels":
        return cls(ctx.Queue(maxsize=segment_queue_size), ctx.Queue(maxsize=preference_queue_size),
                   LatestValue(ctx), LatestValue(ctx), ctx.Queue(), SharedFlag(ctx), SharedFlag(ctx),
                   LatestValue(ctx), ctx.Value("q", 0), ctx.Value("q", 0))


def _child_main(role: str, target: str, kwargs: dict, report_queue, stop_event, profile_dir=None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C through stop_event

    def log(*args, **kw):
        print(*args, **{"flush": True, **kw})

    try:
        module, name = target.split(":")
        fn = getattr(importlib.import_module(module), name)  # imported here: the parent stays TF-free
        with profiled(profile_dir, role):  # --profile: <run_dir>/profile/<role>.{prof,txt}
            figures = fn(**kwargs, log=log)
        report_queue.put(Report(role, "done", figures=figures or {}))
    except BaseException as e:
        detail = traceback.format_exc()
        print(f"[{role}] crashed:\n{detail}", file=sys.stderr, flush=True)
        report_queue.put(Report(role, "error", text=f"{type(e).__name__}: {' '.join(str(e).split())}",
                                figures={"traceback": detail}))
        stop_event.set()
        sys.exit(1)


class ProcessGroup:
    def __init__(self, channels: Channels, ctx=None, profile_dir=None):
        self.ctx = ctx or mp.get_context("spawn")
        self.profile_dir = profile_dir  # --profile: each child profiles itself (drlhp.profiling)
        self.ch = channels
        self.procs: dict[str, mp.Process] = {}
        self.figures: dict[str, dict] = {}
        self.failed: set[str] = set()

    def start(self, role: str, target: str, **kwargs) -> None:
        """Run ``target`` ("module:function", imported in the child) with kwargs and a ``log`` function."""
        p = self.ctx.Process(target=_child_main, name=f"drlhp-{role}", daemon=False,
                             args=(role, target, kwargs, self.ch.report_queue, self.ch.stop_event,
                                   self.profile_dir))
        p.start()
        self.procs[role] = p

    def _handle(self, report: Report) -> None:
        if report.kind == "error":
            self.ch.stop_event.set()
            self.failed.add(report.role)
            raise ChildFailed(report.role, report.text, (report.figures or {}).get("traceback", ""))
        self.figures[report.role] = report.figures or {}

    def _poll(self, timeout: float) -> None:
        try:
            self._handle(self.ch.report_queue.get(timeout=timeout))
        except queue_lib.Empty:
            pass
        for role, p in self.procs.items():
            if role not in self.figures and role not in self.failed and p.exitcode is not None:
                try:  # its last report may still be in flight
                    while True:
                        self._handle(self.ch.report_queue.get(timeout=1.0))
                except queue_lib.Empty:
                    pass
                if role not in self.figures and role not in self.failed:
                    self.ch.stop_event.set()
                    self.failed.add(role)
                    raise ChildFailed(role, f"it died with exit code {p.exitcode} (killed, or out of memory?)")

    def watch(self, until_done: set[str]) -> None:
        """Return once every role in ``until_done`` has finished; ChildFailed when any child fails."""
        while not until_done <= set(self.figures):
            self._poll(0.2)

    def shutdown(self, timeout: float = 60.0, after_failure_timeout: float = 10.0) -> list[str]:
        """Stop every child and wait for it (saving takes a moment); returns the roles that had to be
        terminated. Errors reported while stopping are raised as ChildFailed after all have stopped.

        After a failure the wait is shorter: a child killed while writing a message leaves a partial
        message in its queue's pipe, and its reader can block on it for good (measured: 2 kills in 11
        of the policy mid-segment left the preference interface stuck in read())."""
        if self.failed:
            timeout = min(timeout, after_failure_timeout)
        self.ch.stop_event.set()
        deadline = time.monotonic() + timeout
        failure = None
        while any(p.is_alive() for p in self.procs.values()) and time.monotonic() < deadline:
            try:
                self._poll(0.2)
            except ChildFailed as e:
                failure = failure or e
        terminated = []
        for role, p in self.procs.items():
            if p.is_alive():
                p.terminate()
                terminated.append(role)
            p.join(timeout=5)
        try:
            while True:
                self._handle(self.ch.report_queue.get_nowait())
        except queue_lib.Empty:
            pass
        except ChildFailed as e:
            failure = failure or e
        if failure is not None:
            raise failure
        return terminated

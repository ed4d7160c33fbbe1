"""The one place that makes processes and queues: the three roles' channels, starting children with
the ``spawn`` context (TensorFlow is not fork-safe), watching them, and stopping them.

    Channels       segment_queue (bounded, drop when full), preference_queue (bounded, blocking),
                   weights to the policy and to the preference interface (latest wins),
                   agent_episode (the policy's newest episode frames for the labelling window, latest wins),
                   predictor_version and db_size (shared integers the predictor writes, the window shows),
                   report_queue (child -> parent), stop_event,
                   random_play_over (set once the predictor needs no more random-play segments: it
                   pretrains, or a predictor is loaded; the policy then waits for the first weights),
                   segment_flow (segments the preference interface wants, the policy's step: queues.py)
    ProcessGroup   start(role, "module:function", **kwargs); watch(until_done=roles) -> figures per role;
                   shutdown(): set stop, wait for every child to save and exit, kill stragglers

A child that raises reports its error and sets the stop event; a child that dies without a word
(killed, out of memory) is noticed by its exit code. Either ends the run with ChildFailed.
Children ignore SIGINT: on Ctrl-C the parent sets the stop event and the children save and exit.
SIGTERM is a stop too: a child that gets it (``timeout``, ``docker stop``, ``kill -TERM -PGID``) sets
the stop event, saves and exits 0, and says so in its report (ProcessGroup.stopped_by_signal).
No orphans: a child whose parent has died (even by SIGKILL) stops the same way, and exits within
PARENT_GONE_EXIT_S whatever it was doing (_watch_parent).
"""
from __future__ import annotations

import atexit
import importlib
import multiprocessing as mp
import os
import queue as queue_lib
import select
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass

from drlhp.runtime.messages import Report
from drlhp.runtime.profiling import profiled
from drlhp.runtime.queues import LatestValue, SegmentFlow, SharedFlag
from drlhp.runtime.run_paths import RunPaths

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
STOPPED_BY_SIGTERM = "stopped by SIGTERM"  # a "done" report's text when SIGTERM stopped the child
PARENT_POLL_S = 0.5  # how often a child checks that its parent is alive
PARENT_GONE_EXIT_S = 8.0  # once the parent is gone: the child's time to save and exit before os._exit
_parent_gone = threading.Event()


def parent_gone() -> bool:
    """Whether this child's parent has died: nobody will wait for the child, so its waits for other
    processes (the predictor's wait for the last preferences) shorten to fit PARENT_GONE_EXIT_S."""
    return _parent_gone.is_set()


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
    random_play_over: SharedFlag
    agent_episode: LatestValue
    predictor_version: object  # multiprocessing.Value("q"): the newest published weights' version
    db_size: object  # multiprocessing.Value("q"): preferences in the predictor's database
    pair_updates: object  # multiprocessing.Value("q"): the predictor's pair-updates since pretraining ended
    segment_flow: SegmentFlow | None = None  # flow control on segment_queue (queues.py)

    @classmethod
    def create(cls, ctx, segment_queue_size: int, preference_queue_size: int = 16) -> "Channels":
        return cls(ctx.Queue(maxsize=segment_queue_size), ctx.Queue(maxsize=preference_queue_size),
                   LatestValue(ctx), LatestValue(ctx), ctx.Queue(), SharedFlag(ctx), SharedFlag(ctx),
                   LatestValue(ctx), ctx.Value("q", 0), ctx.Value("q", 0), ctx.Value("q", 0),
                   segment_flow=SegmentFlow(ctx))


def _redirect_broken_output(log_dir: str | None) -> None:
    """Point fds 1 and 2, where they are pipes whose reader is gone, at <log_dir>/stdout.log and
    stderr.log (or /dev/null): the parent's output tee (drlhp.runtime.output_tee) died with the parent, and a
    print into its pipe would raise BrokenPipeError in the middle of saving."""
    for fd, name in ((1, RunPaths.STDOUT), (2, RunPaths.STDERR)):
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        if not any(events & select.POLLERR for _, events in poll.poll(0)):  # POLLERR: a pipe without reader
            continue
        target = os.open(os.path.join(log_dir, name) if log_dir else os.devnull,
                         os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.dup2(target, fd)
        os.close(target)


def _exit_without_teardown() -> None:
    """An atexit hook once the parent is gone: the role has saved and nobody waits for the exit code, so
    skip the interpreter's teardown (TensorFlow's takes 2-10 s on a loaded machine, measured)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def _watch_parent(role: str, parent_pid: int, stop_event, report_queue, log_dir: str | None) -> None:
    """A daemon thread: once the parent is gone (this process was handed to another parent) the child
    stops as on Ctrl-C, saves and exits; if it has not exited PARENT_GONE_EXIT_S later, os._exit."""
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        _parent_gone.set()
        _redirect_broken_output(log_dir)
        report_queue.cancel_join_thread()  # nobody will read our report: do not wait at exit to send it
        print(f"[{role}] the parent process {parent_pid} is gone: stopping", file=sys.stderr, flush=True)
        stop_event.set()
        atexit.register(_exit_without_teardown)
        time.sleep(PARENT_GONE_EXIT_S)
        print(f"[{role}] not stopped {PARENT_GONE_EXIT_S:.0f} s after the parent died: exiting now",
              file=sys.stderr, flush=True)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _child_main(role: str, target: str, kwargs: dict, report_queue, stop_event, profile_dir=None,
                parent_pid: int | None = None, log_dir: str | None = None) -> None:
    got_sigterm = []

    def on_sigterm(signum, frame):  # a stop, as Ctrl-C is for the parent: save and exit
        got_sigterm.append(signum)
        stop_event.set()

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C through stop_event
    signal.signal(signal.SIGTERM, on_sigterm)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked since ProcessGroup.start
    if parent_pid is not None:
        _watch_parent(role, parent_pid, stop_event, report_queue, log_dir)

    def log(*args, **kw):
        try:
            print(*args, **{"flush": True, **kw})
        except BrokenPipeError:  # the parent died between two looks of _watch_parent
            _redirect_broken_output(log_dir)
            print(*args, **{"flush": True, **kw})

    try:
        module, name = target.split(":")
        fn = getattr(importlib.import_module(module), name)  # imported here: the parent stays TF-free
        with profiled(profile_dir, role):  # --profile: <run_dir>/profile/<role>.{prof,txt}
            figures = fn(**kwargs, log=log)
        report_queue.put(Report(role, "done", text=STOPPED_BY_SIGTERM if got_sigterm else "",
                                figures=figures or {}))
    except BaseException as e:
        detail = traceback.format_exc()
        log(f"[{role}] crashed:\n{detail}", file=sys.stderr)
        report_queue.put(Report(role, "error", text=f"{type(e).__name__}: {' '.join(str(e).split())}",
                                figures={"traceback": detail}))
        stop_event.set()
        sys.exit(1)


class ProcessGroup:
    def __init__(self, channels: Channels, ctx=None, profile_dir=None, log_dir=None):
        self.ctx = ctx or mp.get_context("spawn")
        self.profile_dir = profile_dir  # --profile: each child profiles itself (drlhp.runtime.profiling)
        self.log_dir = log_dir  # where a child's output goes once the parent (teeing it) is gone
        self.ch = channels
        self.procs: dict[str, mp.Process] = {}
        self.figures: dict[str, dict] = {}
        self.failed: set[str] = set()
        self.stopped_by_signal: set[str] = set()  # roles that stopped because they got SIGTERM

    def start(self, role: str, target: str, **kwargs) -> None:
        """Run ``target`` ("module:function", imported in the child) with kwargs and a ``log`` function."""
        p = self.ctx.Process(target=_child_main, name=f"drlhp-{role}", daemon=False,
                             args=(role, target, kwargs, self.ch.report_queue, self.ch.stop_event,
                                   self.profile_dir, os.getpid(), self.log_dir))
        # The child starts with SIGINT and SIGTERM blocked (the mask is inherited) and unblocks them once
        # its handlers are in place: a signal to the whole group while it starts up is a stop, not a death
        # (multiprocessing's resource tracker starts the same way, bpo-33613).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            p.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.procs[role] = p

    def pids(self) -> dict[str, int]:
        return {role: p.pid for role, p in self.procs.items()}

    def _handle(self, report: Report) -> None:
        if report.kind == "error":
            self.ch.stop_event.set()
            self.failed.add(report.role)
            raise ChildFailed(report.role, report.text, (report.figures or {}).get("traceback", ""))
        if report.text == STOPPED_BY_SIGTERM:
            self.stopped_by_signal.add(report.role)
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
        killed (SIGKILL: a child takes SIGTERM as a stop request, which a stuck one cannot honour).
        Errors reported while stopping are raised as ChildFailed after all have stopped.

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
        killed = []
        for role, p in self.procs.items():
            if p.is_alive():
                p.kill()
                killed.append(role)
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
        return killed

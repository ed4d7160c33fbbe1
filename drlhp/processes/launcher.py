"""The local backend (the default): each role a child process of the ``spawn`` context (TensorFlow is
not fork-safe), the channels multiprocessing's, made here and nowhere else.

    create(cfg, run_dir)  -> (Channels, ProcessGroup): the run's channels (drlhp.processes.ports), each
                   of its kind: queue (multiprocessing.Queue, bounded), latest (queues.LatestValue), int
                   (multiprocessing.Value("q")), flag (queues.SharedFlag), flow (queues.SegmentFlow)
    ProcessGroup   drlhp.processes.child.ChildGroup on processes: start(child) spawns a process that runs
                   the one child wrapper (drlhp.processes.child.run_child) and puts its Report on the
                   group's report queue

A child that raises reports its error and sets the stop event; a child that dies without a word
(killed, out of memory) is noticed by its exit code. Either ends the run with ChildFailed.
Children ignore SIGINT: on Ctrl-C the parent sets the stop event and the children save and exit.
SIGTERM is a stop too: a child that gets it (``timeout``, ``docker stop``, ``kill -TERM -PGID``) sets
the stop event, saves and exits 0, and says so in its report (ProcessGroup.stopped_by_signal).
No orphans: a child whose parent has died (even by SIGKILL) stops the same way, and exits within
PARENT_GONE_EXIT_S whatever it was doing (_watch_parent). Nobody is left to write the run's status, so
the children do: "parent gone: saving", then "parent gone: saved" once each role has saved
(drlhp.records.run_record.record_parent_gone).
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import queue as queue_lib
import select
import signal
import sys
import threading
import time
from dataclasses import replace

from drlhp.processes.child import STOPPED_BY_SIGTERM, Child, ChildGroup, run_child
from drlhp.processes.lifeline import mark_parent_gone, parent_gone
from drlhp.processes.ports import Channels, queue_sizes
from drlhp.processes.queues import LatestValue, SegmentFlow, SharedFlag
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import SAVED, STOPPING, record_parent_gone

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
PARENT_POLL_S = 0.5  # how often a child checks that its parent is alive
PARENT_GONE_EXIT_S = 8.0  # once the parent is gone: the child's time to save and exit before os._exit


def create(cfg, run_dir: str) -> tuple[Channels, "ProcessGroup"]:
    """The run's channels and its process group, of the ``spawn`` context."""
    ctx = mp.get_context("spawn")
    sizes = queue_sizes(cfg.prefs.segment_queue_size)
    channels = Channels.make(lambda name, kind: _channel(ctx, sizes, name, kind))
    return channels, ProcessGroup(channels.stop_event, ctx, log_dir=run_dir)


def _channel(ctx, sizes: dict[str, int], name: str, kind: str):
    """One channel of the kind drlhp.processes.ports gives it, multiprocessing's."""
    if kind == "queue":
        return ctx.Queue(maxsize=sizes[name])
    if kind == "int":
        return ctx.Value("q", 0)
    return {"latest": LatestValue, "flag": SharedFlag, "flow": SegmentFlow}[kind](ctx)


def _redirect_broken_output(log_dir: str | None) -> None:
    """Point fds 1 and 2, where they are pipes whose reader is gone, at <log_dir>/stdout.log and
    stderr.log (or /dev/null): the parent's output tee (drlhp.processes.output_tee) died with the parent, and a
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


def _record_outcome(role: str, run_dir: str, outcome: str) -> None:
    """This role's word in the run's status once the parent is gone; a failure to write it is said, not raised
    (the role's own saving matters more)."""
    try:
        record_parent_gone(run_dir, role, outcome)
    except OSError as e:
        print(f"[{role}] could not write the run's status: {e}", file=sys.stderr, flush=True)


def _watch_parent(child: Child, parent_pid: int, stop_event, report_queue, log_dir: str | None,
                  outcome: list[str]) -> None:
    """A daemon thread: once the parent is gone (this process was handed to another parent) the child
    stops as on Ctrl-C, saves and exits; if it has not exited PARENT_GONE_EXIT_S later, os._exit. It says
    so in the run's status: stopping (or, where the role has already returned, its ``outcome``), or cut
    short by the os._exit."""
    role = child.role

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_S)
        mark_parent_gone()  # a role's waits shorten to fit PARENT_GONE_EXIT_S (drlhp.processes.lifeline)
        _redirect_broken_output(log_dir)
        report_queue.cancel_join_thread()  # nobody will read our report: do not wait at exit to send it
        print(f"[{role}] the parent process {parent_pid} is gone: stopping", file=sys.stderr, flush=True)
        stop_event.set()
        atexit.register(_exit_without_teardown)
        _record_outcome(role, child.run_dir, outcome[0] if outcome else STOPPING)
        time.sleep(PARENT_GONE_EXIT_S)
        print(f"[{role}] not stopped {PARENT_GONE_EXIT_S:.0f} s after the parent died: exiting now",
              file=sys.stderr, flush=True)
        if not outcome:  # the role had not returned: it did not finish saving
            _record_outcome(role, child.run_dir, f"cut short {PARENT_GONE_EXIT_S:.0f} s after the parent died")
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _child_main(child: Child, report_queue, parent_pid: int | None = None, log_dir: str | None = None) -> None:
    """A child process: stop signals as stop requests, the parent watched, the child wrapper run, its
    report sent to the parent."""
    stop_event = child.ports.stop_event
    got_sigterm = []

    def on_sigterm(signum, frame):  # a stop, as Ctrl-C is for the parent: save and exit
        got_sigterm.append(signum)
        stop_event.set()

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C through stop_event
    signal.signal(signal.SIGTERM, on_sigterm)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # blocked since ProcessGroup.start
    outcome: list[str] = []  # the role's outcome once it has returned, for the status after the parent died
    if parent_pid is not None:
        _watch_parent(child, parent_pid, stop_event, report_queue, log_dir, outcome)

    def log(*args, **kw):
        try:
            print(*args, **{"flush": True, **kw})
        except BrokenPipeError:  # the parent died between two looks of _watch_parent
            _redirect_broken_output(log_dir)
            print(*args, **{"flush": True, **kw})

    report = run_child(child, log)
    if report.kind == "done" and got_sigterm:
        report = replace(report, text=STOPPED_BY_SIGTERM)
    outcome.append(SAVED if report.kind == "done" else f"failed: {report.text}")
    if parent_pid is not None and (parent_gone() or os.getppid() != parent_pid):  # the watch may not know yet
        _record_outcome(child.role, child.run_dir, outcome[0])
    report_queue.put(report)
    if report.kind == "error":
        sys.exit(1)


class ProcessGroup(ChildGroup):
    def __init__(self, stop_event, ctx=None, log_dir=None):
        super().__init__(stop_event)
        self.ctx = ctx or mp.get_context("spawn")
        self.log_dir = log_dir  # where a child's output goes once the parent (teeing it) is gone
        self.report_queue = self.ctx.Queue()  # child -> parent: one Report each
        self.procs: dict[str, mp.Process] = {}

    def start(self, child: Child) -> None:
        """Run ``child`` in a new process (its entry point is imported there)."""
        p = self.ctx.Process(target=_child_main, name=f"drlhp-{child.role}", daemon=False,
                             args=(child, self.report_queue, os.getpid(), self.log_dir))
        # The child starts with SIGINT and SIGTERM blocked (the mask is inherited) and unblocks them once
        # its handlers are in place: a signal to the whole group while it starts up is a stop, not a death
        # (multiprocessing's resource tracker starts the same way, bpo-33613).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            p.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        self.procs[child.role] = p

    def pids(self) -> dict[str, int]:
        return {role: p.pid for role, p in self.procs.items()}

    def _poll(self, timeout: float) -> None:
        try:
            self._take(self.report_queue.get(timeout=timeout))
        except queue_lib.Empty:
            pass
        for role, p in self.procs.items():
            if not self._reported(role) and p.exitcode is not None:
                try:  # its last report may still be in flight
                    while True:
                        self._take(self.report_queue.get(timeout=1.0))
                except queue_lib.Empty:
                    pass
                if not self._reported(role):
                    self._fail(role, f"it died with exit code {p.exitcode} (killed, or out of memory?)")

    def _running(self) -> list[str]:
        return [role for role, p in self.procs.items() if p.is_alive()]

    def _kill_running(self) -> list[str]:
        """SIGKILL: a child takes SIGTERM as a stop request, which a stuck one cannot honour."""
        killed = []
        for role, p in self.procs.items():
            if p.is_alive():
                p.kill()
                killed.append(role)
            p.join(timeout=5)
        return killed

    def _take_last(self) -> None:
        try:
            while True:
                self._take(self.report_queue.get_nowait())
        except queue_lib.Empty:
            pass

"""How a run stops when asked: Ctrl-C and SIGTERM (``timeout``, ``docker stop``, ``kill``) alike.

    with sigterm_as_interrupt():   # SIGTERM raises KeyboardInterrupt in this process, as Ctrl-C does
        ...
    except KeyboardInterrupt:
        return mark_interrupted(record, "[run] interrupted; ...")   # status "interrupted", exit 130

A reader that stops early (``python run.py --list_envs | head``, ``python -m floyd list | head``) is
a stop too, of the output alone: ``except BrokenPipeError: return broken_pipe_exit()``.

A stop that comes while a file is being written waits for the write to end (drlhp.records.atomic's
``raise_or_defer``). Imports nothing heavy: floyd (no TensorFlow) uses it too. The child processes' own handling of
SIGTERM (a stop request they act on) is in drlhp.processes.launcher.
"""
from __future__ import annotations

import os
import signal
import sys
from contextlib import contextmanager

from drlhp.records.atomic import raise_or_defer

INTERRUPTED_EXIT = 130  # the shell's code for a process stopped by SIGINT (128 + 2)
BROKEN_PIPE_EXIT = 1


class SittingOver(KeyboardInterrupt):
    """--stop_after_hours ran out: the run stops exactly as on Ctrl-C (every process saves), but it was
    planned, so it ends "stopped" with exit 0 (``end_sitting``)."""


def _raise_keyboard_interrupt(signum, frame):
    raise_or_defer(KeyboardInterrupt(f"signal {signum}"))


@contextmanager
def sigterm_as_interrupt():
    """Within the block SIGTERM raises KeyboardInterrupt, so one ``except KeyboardInterrupt`` saves
    and marks the run for both; the previous handler is back after it."""
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def sitting_timer(hours: float):
    """Within the block, ``hours`` of wall time (0: never) raise SittingOver in this process, as Ctrl-C
    raises KeyboardInterrupt; the timer is cancelled when the block ends."""
    if hours <= 0:
        yield
        return

    def time_up(signum, frame):
        raise_or_defer(SittingOver(f"--stop_after_hours {hours:g}"))

    previous = signal.signal(signal.SIGALRM, time_up)
    signal.setitimer(signal.ITIMER_REAL, hours * 3600.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def end_sitting(record, hours: float, summary: dict | None = None) -> int:
    """A sitting that --stop_after_hours ended: saved as on Ctrl-C, status "stopped", exit 0."""
    if summary is not None:
        record.write_summary(summary)
    record.set_status("stopped")
    print(f"[run] stopped after --stop_after_hours {hours:g}: everything saved. To go on, run the same command "
          f"(with --run_dir {record.dir})", flush=True)
    return 0


@contextmanager
def sigterm_ignored():
    """Within the block SIGTERM is ignored (a second one must not cut the children's saving short)."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def mark_interrupted(record, message: str | None = None, summary: dict | None = None) -> int:
    """A stopped run: ``summary`` written (if given), status "interrupted", ``message`` to stderr;
    returns the exit code, 130. ``record``: a drlhp.records.run_record.RunRecord."""
    if summary is not None:
        record.write_summary(summary)
    record.set_status("interrupted")
    if message:
        print(message, file=sys.stderr, flush=True)
    return INTERRUPTED_EXIT


def broken_pipe_exit() -> int:
    """After a BrokenPipeError on stdout (the reader has gone): stdout to /dev/null, so that the
    interpreter's flush at exit raises no second error, and no message; returns the exit code, 1."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return BROKEN_PIPE_EXIT

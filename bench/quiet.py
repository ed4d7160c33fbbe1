"""TensorFlow's own lines off a benchmark's terminal, as run.py keeps them off a run's: every script in bench/
that imports TensorFlow in its own process imports this module first (``import quiet  # noqa: F401``; a
script's own folder is on sys.path), before TensorFlow.

Importing drlhp sets drlhp's default TF_CPP_MIN_LOG_LEVEL (2: no info or warning from TensorFlow's own logging;
drlhp/__init__.py). That does not reach absl's lines (the oneDNN notice, ``WARNING: All log messages before
absl::InitializeLog() ...``: drlhp.runtime.tf_setup says why), so this module also points fd 2 at a pipe that a
thread copies to the real stderr through drlhp.runtime.output_tee.TfLogFilter, the filter of run.py's output tee:
TensorFlow's and absl's lines are dropped, anything else (a traceback, a fatal line) passes. Child processes
that inherit fd 2 go through it too. DRLHP_TF_LOGS=1 shows everything (no filter). At exit fd 2 is restored
and what is left in the pipe is written out.
"""
from __future__ import annotations

import atexit
import os
import select
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import drlhp  # noqa: E402,F401  (sets TF_CPP_MIN_LOG_LEVEL's default before any TensorFlow import)
from drlhp.runtime.output_tee import HOLD_S, TfLogFilter  # noqa: E402
from drlhp.runtime.tf_setup import tf_logs_shown  # noqa: E402

QUIET_S = 0.2  # at exit: the pipe quiet this long (its other holders, children, may outlive us), at most EXIT_S
EXIT_S = 5.0


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view):]
        except OSError:  # the terminal is gone
            return


def filter_stderr() -> None:
    """Fd 2 through TfLogFilter until exit (once per process; nothing with DRLHP_TF_LOGS=1)."""
    if tf_logs_shown() or getattr(filter_stderr, "done", False):
        return
    filter_stderr.done = True
    sys.stderr.flush()
    terminal = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    quiet = TfLogFilter()
    last_read = [time.monotonic()]

    def pump() -> None:
        while True:
            if quiet.holding and not select.select([read_end], [], [], HOLD_S)[0]:
                _write(terminal, quiet.flush())  # a partial line, quiet for HOLD_S: show it
                continue
            try:
                data = os.read(read_end, 1 << 16)
            except OSError:
                data = b""
            if not data:
                _write(terminal, quiet.flush())
                return
            last_read[0] = time.monotonic()
            _write(terminal, quiet.feed(data))

    thread = threading.Thread(target=pump, name="bench-quiet-stderr", daemon=True)
    thread.start()

    def restore() -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(terminal, 2)  # closes this process's write end of the pipe
        deadline = time.monotonic() + EXIT_S
        while thread.is_alive() and time.monotonic() < deadline:
            thread.join(0.05)
            if (time.monotonic() - last_read[0] > QUIET_S and not select.select([read_end], [], [], 0)[0]
                    and not quiet.holding):
                break

    atexit.register(restore)


filter_stderr()

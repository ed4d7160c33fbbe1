"""Copy a run's stdout and stderr into its run directory while they still reach the terminal.

The copy is made at the file-descriptor level: fds 1 and 2 are pointed at pipes, and one thread per
pipe writes what arrives both to the original destination and to <run_dir>/stdout.log or stderr.log.
So it catches everything: print(), C++ logs of TensorFlow, and the output of the ``spawn``ed child
processes, which inherit fds 1 and 2 from the parent.

    tee = OutputTee(run_dir)   # after the run directory exists
    ...                        # the run
    tee.close()                # restores fds 1 and 2, drains the pipes

The logs get every byte. The terminal gets stderr without TensorFlow's and absl's own lines
(drlhp.processes.tf_setup.is_tf_log_line, which says why), unless DRLHP_TF_LOGS=1 (TfLogFilter).
"""
from __future__ import annotations

import os
import select
import sys
import threading
import time

from drlhp.processes.tf_setup import is_tf_log_line, tf_logs_shown
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import now_iso

HOLD_S = 0.3  # the longest a partial line that may be TensorFlow's waits for its end before it is shown
HOLD_STARTS = b"IWET(\x1b"  # the first bytes of the lines TfLogFilter drops: only such a partial line waits


class TfLogFilter:
    """Drops TensorFlow's and absl's own lines from a byte stream that arrives in pieces (several processes
    write into one pipe, each line in one write). A partial line waits for its end only while it may be one
    of them (HOLD_STARTS, and at most HOLD_S: ``flush``); anything else passes at once."""

    def __init__(self):
        self._pending = b""  # the start of a line that may be TensorFlow's
        self._mid_line = False  # a partial line was passed on: its rest passes too

    def feed(self, data: bytes) -> bytes:
        *lines, rest = (self._pending + data).split(b"\n")
        self._pending = b""
        out = []
        for line in lines:
            if self._mid_line or not is_tf_log_line(line):
                out.append(line + b"\n")
            self._mid_line = False
        if rest:
            if not self._mid_line and rest[:1] in HOLD_STARTS and len(rest) < 1 << 16:
                self._pending = rest
            else:
                out.append(rest)
                self._mid_line = True
        return b"".join(out)

    @property
    def holding(self) -> bool:
        return bool(self._pending)

    def flush(self) -> bytes:
        """The partial line waiting, passed on (its end will pass too)."""
        held, self._pending = self._pending, b""
        if held:
            self._mid_line = True
        return held


class OutputTee:
    """``run_dir`` None: no logs, only stderr, through TfLogFilter, to the terminal (bench/quiet.py's use)."""

    def __init__(self, run_dir: str | os.PathLike | None, header: str | None = None):
        self._pipes = []  # (fd, saved fd, read end, thread, log file or None, TfLogFilter or None)
        self._last_read: dict[int, float] = {}  # read end -> when data last came
        if run_dir is None:
            streams = ((2, sys.stderr, None),)
        else:
            paths = RunPaths(run_dir)
            streams = ((1, sys.stdout, paths.stdout_log), (2, sys.stderr, paths.stderr_log))
        for fd, stream, path in streams:
            stream.flush()
            log = None if path is None else open(path, "ab", buffering=0)
            if log is not None:
                log.write(f"--- {now_iso()} pid {os.getpid()}{': ' + header if header else ''}\n".encode())
            saved = os.dup(fd)
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)  # fd 1/2 are inheritable: spawned children write into the pipe too
            os.close(write_end)
            quiet = TfLogFilter() if fd == 2 and not tf_logs_shown() else None
            thread = threading.Thread(target=self._pump, args=(read_end, saved, log, quiet),
                                      name=f"tee-{path.name if path else 'stderr'}", daemon=True)
            thread.start()
            self._pipes.append((fd, saved, read_end, thread, log, quiet))

    def close(self, timeout: float = 5.0, quiet_s: float = 0.2) -> None:
        """Point fds 1 and 2 back where they were and write out what is left in the pipes.

        Other holders of the pipes may outlive this call (multiprocessing's resource tracker inherits
        fds 1 and 2 and exits only after this process): so this waits until a pipe has been quiet for
        ``quiet_s`` (at most ``timeout``), not for its end; its thread goes on copying until exit."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        for fd, saved, *_ in self._pipes:
            os.dup2(saved, fd)  # closes this process's write end of the pipe
        deadline = time.monotonic() + timeout
        for _, saved, read_end, thread, log, quiet in self._pipes:
            while thread.is_alive() and time.monotonic() < deadline:
                thread.join(0.05)
                if (time.monotonic() - self._last_read.get(read_end, 0.0) > quiet_s
                        and not select.select([read_end], [], [], 0)[0]
                        and not (quiet is not None and quiet.holding)):  # a partial line shows before we go
                    break
            if not thread.is_alive():  # the pipe ended: nothing uses these any more
                os.close(read_end)
                os.close(saved)
                if log is not None:
                    log.close()
        self._pipes = []

    def _pump(self, read_end: int, terminal: int, log, quiet: TfLogFilter | None = None) -> None:
        """Copy the pipe to the log (all of it) and to the terminal (through ``quiet``, where given)."""
        while True:
            if quiet is not None and quiet.holding and not select.select([read_end], [], [], HOLD_S)[0]:
                self._write(terminal, quiet.flush())  # a partial line, quiet for HOLD_S: show it
                continue
            try:
                data = os.read(read_end, 1 << 16)
            except OSError:
                data = b""
            if not data:
                if quiet is not None:
                    self._write(terminal, quiet.flush())
                return
            self._last_read[read_end] = time.monotonic()
            try:
                if log is not None:
                    log.write(data)
            except (OSError, ValueError):
                pass
            self._write(terminal, quiet.feed(data) if quiet is not None else data)

    @staticmethod
    def _write(terminal: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(terminal, view):]
            except OSError:  # the terminal is gone: keep the log going
                break

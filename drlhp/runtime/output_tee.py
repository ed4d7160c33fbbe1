"""Copy a run's stdout and stderr into its run directory while they still reach the terminal.

The copy is made at the file-descriptor level: fds 1 and 2 are pointed at pipes, and one thread per
pipe writes what arrives both to the original destination and to <run_dir>/stdout.log or stderr.log.
So it catches everything: print(), C++ logs of TensorFlow, and the output of the ``spawn``ed child
processes, which inherit fds 1 and 2 from the parent.

    tee = OutputTee(run_dir)   # after the run directory exists
    ...                        # the run
    tee.close()                # restores fds 1 and 2, drains the pipes
"""
from __future__ import annotations

import os
import select
import sys
import threading
import time

from drlhp.runtime.run_paths import RunPaths
from drlhp.runtime.run_record import now_iso


class OutputTee:
    def __init__(self, run_dir: str | os.PathLike, header: str | None = None):
        self._pipes = []  # (fd, saved fd, read end, thread, log file)
        self._last_read: dict[int, float] = {}  # read end -> when data last came
        paths = RunPaths(run_dir)
        for fd, stream, path in ((1, sys.stdout, paths.stdout_log), (2, sys.stderr, paths.stderr_log)):
            stream.flush()
            log = open(path, "ab", buffering=0)
            log.write(f"--- {now_iso()} pid {os.getpid()}{': ' + header if header else ''}\n".encode())
            saved = os.dup(fd)
            read_end, write_end = os.pipe()
            os.dup2(write_end, fd)  # fd 1/2 are inheritable: spawned children write into the pipe too
            os.close(write_end)
            thread = threading.Thread(target=self._pump, args=(read_end, saved, log), name=f"tee-{path.name}",
                                      daemon=True)
            thread.start()
            self._pipes.append((fd, saved, read_end, thread, log))

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
        for fd, saved, _, _, _ in self._pipes:
            os.dup2(saved, fd)  # closes this process's write end of the pipe
        deadline = time.monotonic() + timeout
        for _, saved, read_end, thread, log in self._pipes:
            while thread.is_alive() and time.monotonic() < deadline:
                thread.join(0.05)
                if (time.monotonic() - self._last_read.get(read_end, 0.0) > quiet_s
                        and not select.select([read_end], [], [], 0)[0]):
                    break
            if not thread.is_alive():  # the pipe ended: nothing uses these any more
                os.close(read_end)
                os.close(saved)
                log.close()
        self._pipes = []

    def _pump(self, read_end: int, terminal: int, log) -> None:
        while True:
            try:
                data = os.read(read_end, 1 << 16)
            except OSError:
                return
            if not data:
                return
            self._last_read[read_end] = time.monotonic()
            try:
                log.write(data)
            except (OSError, ValueError):
                pass
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(terminal, view):]
                except OSError:  # the terminal is gone: keep the log going
                    break

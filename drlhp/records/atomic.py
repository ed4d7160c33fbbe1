"""Atomic writes: a temporary file in the same folder, flushed, then renamed over the target.

A crash mid-write leaves the previous file intact, never a half-written one. A planned stop (SIGTERM,
--stop_after_hours: drlhp.processes.interrupts) that comes during a write waits for it to end
(``interrupts_deferred``).
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_UMASK = os.umask(0)
os.umask(_UMASK)


# An interrupt the stop handlers raise (SIGTERM, --stop_after_hours: drlhp.processes.interrupts) waits while the main
# thread is in a block that must not be cut in two (``interrupts_deferred``: an atomic write, whose library code,
# numpy's savez closing its zip, turns an exception raised inside it into another error and the planned stop into a
# crash); it is raised when the block ends. Signal handlers run in the main thread only, so only the main thread's
# blocks count.
_deferring = 0
_pending: BaseException | None = None


def raise_or_defer(exc: BaseException) -> None:
    """Raise ``exc`` now, or, inside ``interrupts_deferred``, when that block ends (a signal handler: the main
    thread, the only one whose blocks count)."""
    global _pending
    if _deferring:
        _pending = _pending or exc
        return
    raise exc


@contextmanager
def interrupts_deferred():
    """Within the block SIGTERM and --stop_after_hours (drlhp.processes.interrupts' handlers) wait; the first that came
    is raised as the block ends (if the block raised, with its error as the context). Ctrl-C (Python's own handler) is
    not deferred. Nests; a no-op off the main thread (where no handler runs)."""
    global _deferring, _pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _pending is not None:  # raised here, after an error of the block too (its context)
            exc, _pending = _pending, None
            raise exc


def _atomic_write(path: Path, write) -> None:
    with interrupts_deferred():  # a stop that comes mid-write is raised once the file is whole
        _write_and_rename(Path(path), write)


def _write_and_rename(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; give them the usual permissions
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)  # the rename itself reaches the disk before anything written after it
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot fsync a directory
        pass
    finally:
        os.close(fd)


def write_json(path, obj) -> None:
    _atomic_write(Path(path), lambda f: f.write((json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()))


def write_npz(path, arrays: dict[str, np.ndarray]) -> None:
    """Plain numeric/str arrays only: the file loads with ``allow_pickle=False``."""
    _atomic_write(Path(path), lambda f: np.savez(f, **arrays))


def write_text(path, text: str) -> None:
    _atomic_write(Path(path), lambda f: f.write(text.encode()))


def write_bytes(path, data: bytes) -> None:
    _atomic_write(Path(path), lambda f: f.write(data))

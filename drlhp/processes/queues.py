"""The queue policies between processes, each in one place.

    put_or_drop(segment_queue, segment)      segments: never block the policy; a full queue drops
    put_blocking(preference_queue, pref, stop)  preferences: never dropped; waits (checking stop)
    LatestValue                              weights: the reader gets only the newest value

All on ``multiprocessing`` queues of the ``spawn`` context (made by the pipeline).
"""
from __future__ import annotations

import queue as queue_lib
import time


def put_or_drop(q, item) -> bool:
    """Put without blocking; False (item dropped) when the queue is full."""
    try:
        q.put_nowait(item)
        return True
    except queue_lib.Full:
        return False


def put_blocking(q, item, stop_event=None, poll_s: float = 0.5) -> bool:
    """Put, waiting as long as the queue is full; gives up only when ``stop_event`` is set and the
    queue stays full (the reader is gone). Returns whether the item was put."""
    while True:
        try:
            q.put(item, timeout=poll_s)
            return True
        except queue_lib.Full:
            if stop_event is not None and stop_event.is_set():
                return False


def drain(q, max_items: int | None = None) -> list:
    """Everything waiting on the queue now (up to max_items), without blocking."""
    items = []
    while max_items is None or len(items) < max_items:
        try:
            items.append(q.get_nowait())
        except queue_lib.Empty:
            break
    return items


class LatestValue:
    """A one-slot channel where the newest value wins: ``publish`` replaces an unread value,
    ``poll`` returns the newest value since the last poll, or None. One writer, one reader."""

    def __init__(self, ctx):
        self._q = ctx.Queue(maxsize=1)

    def publish(self, value) -> None:
        # The writer never waits at exit for an unread value to be flushed: it is stale by then, and a
        # reader that never polls (or has stopped) would otherwise hang the writer's exit forever.
        self._q.cancel_join_thread()
        while True:
            try:
                self._q.put_nowait(value)
                return
            except queue_lib.Full:
                drain(self._q)  # the reader has not taken the last one: replace it

    def poll(self):
        newest = None
        for newest in drain(self._q):
            pass
        return newest

    def wait(self, stop_event, poll_s: float = 0.2):
        """Block until a value arrives (None if stop_event is set first)."""
        while not stop_event.is_set():
            try:
                value = self._q.get(timeout=poll_s)
            except queue_lib.Empty:
                continue
            newer = self.poll()
            return value if newer is None else newer
        return None


class SharedFlag:
    """A cross-process flag with Event's set / is_set / wait, and no lock.

    multiprocessing.Event guards its flag with a shared lock; a process killed while inside
    is_set() or wait() (the predictor spends most of its paced time in wait) dies holding that lock,
    and every other process, the parent included, then blocks for good in set() or is_set(): the run
    hangs instead of ending with the error. This flag is one byte of shared memory written and read
    without a lock (a byte write is atomic), and wait() polls it every few milliseconds.
    """

    POLL_S = 0.01

    def __init__(self, ctx):
        self._value = ctx.RawValue("b", 0)

    def set(self) -> None:
        self._value.value = 1

    def is_set(self) -> bool:
        return bool(self._value.value)

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._value.value:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            time.sleep(self.POLL_S if remaining is None else min(self.POLL_S, remaining))
        return True


class SegmentFlow:
    """Flow control on segment_queue, in two shared counters (no lock: each has one writer, and an
    aligned 8-byte write or read is atomic):

        wanted       written by the preference interface (``ask_for``): how many segments it has asked
                     for so far this sitting, never lowered. The policy cuts and sends a segment only
                     while its own count of segments put on the queue is below it. The interface asks
                     for what it can use and at most segment_queue_size beyond what it has received, so
                     a full queue stays the exception (when it happens, the segment is dropped and counted).
        policy_step  written by the policy (``report_step``): its agent-step count, the interface's clock
                     for the label schedule, which no longer ticks with every segment.
        step_limit   written by the preference interface where a person labels (``hold_at``): the agent step
                     the policy may not start an update at, nor end its run at, until more labels are given
                     (None: no limit, the oracle's runs, which never write it). Stored as limit + 1, 0 for None.
    """

    def __init__(self, ctx):
        self._wanted = ctx.RawValue("q", 0)
        self._policy_step = ctx.RawValue("q", 0)
        self._step_limit = ctx.RawValue("q", 0)

    def ask_for(self, total: int) -> None:
        if total > self._wanted.value:
            self._wanted.value = total

    def wanted(self) -> int:
        return self._wanted.value

    def report_step(self, step: int) -> None:
        self._policy_step.value = step

    def policy_step(self) -> int:
        return self._policy_step.value

    def hold_at(self, step: int | None) -> None:
        self._step_limit.value = 0 if step is None else step + 1

    def step_limit(self) -> int | None:
        value = self._step_limit.value
        return None if value == 0 else value - 1


def feeder_cpu_s(q) -> float | None:
    """CPU seconds used so far by the feeder thread of a ``multiprocessing`` queue in this process (the
    thread that pickles what ``put`` hands it and writes it to the pipe); None before the first put."""
    thread = getattr(q, "_thread", None)  # multiprocessing.queues.Queue starts it on the first put
    native_id = getattr(thread, "native_id", None)
    if native_id is None:
        return None
    import psutil

    for t in psutil.Process().threads():
        if t.id == native_id:
            return t.user_time + t.system_time
    return None

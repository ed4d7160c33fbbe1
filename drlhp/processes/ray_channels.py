"""The channels of drlhp.processes.ports.Channels on Ray (--backend ray): one hub actor holds every queue,
flag and value; the roles get small proxies with the methods they already call on the
multiprocessing versions, so the roles' code is the same on both backends.

    ChannelHub   a threaded actor (num_cpus=0, on the driver's node): bounded queue.Queue's, flags,
                 integers and latest-wins slots, by name
    RayQueue     put_nowait (queue.Full when full: put_or_drop drops and counts), put(timeout),
                 get(timeout), get_nowait, qsize, cancel_join_thread (nothing to do)
    RayLatest    publish / poll / wait, as queues.LatestValue
    RayFlag      set / is_set / wait, as queues.SharedFlag (is_set is cached for FLAG_CACHE_S while unset:
                 the policy asks every step, and a flag is never cleared)
    RayInt       .value, as multiprocessing.Value("q")
    RayFlow      ask_for / wanted / report_step / policy_step / hold_at / step_limit, as queues.SegmentFlow

Ray's own ray.util.queue.Queue is an actor per queue (an asyncio actor, a worker process each); one hub
for all channels costs one worker process. Every call is one Ray round trip (about 1 ms here).
"""
from __future__ import annotations

import queue as queue_lib
import threading
import time

import ray

from drlhp.processes.ports import Channels, queue_sizes

FLAG_CACHE_S = 0.02


class ChannelHub:
    def __init__(self, queue_sizes: dict[str, int]):
        self._queues = {name: queue_lib.Queue(maxsize=size) for name, size in queue_sizes.items()}
        self._flags: dict[str, bool] = {}
        self._ints: dict[str, int] = {}
        self._latest: dict[str, tuple] = {}
        self._lock = threading.Lock()

    def put(self, name: str, item, timeout: float | None) -> bool:
        try:
            if timeout is None:
                self._queues[name].put_nowait(item)
            else:
                self._queues[name].put(item, timeout=timeout)
            return True
        except queue_lib.Full:
            return False

    def get(self, name: str, timeout: float | None) -> tuple[bool, object]:
        try:
            if timeout is None:
                return True, self._queues[name].get_nowait()
            return True, self._queues[name].get(timeout=timeout)
        except queue_lib.Empty:
            return False, None

    def qsize(self, name: str) -> int:
        return self._queues[name].qsize()

    def set_flag(self, name: str) -> None:
        self._flags[name] = True

    def flag(self, name: str) -> bool:
        return self._flags.get(name, False)

    def set_int(self, name: str, value: int) -> None:
        self._ints[name] = int(value)

    def raise_int(self, name: str, value: int) -> None:
        with self._lock:
            self._ints[name] = max(self._ints.get(name, 0), int(value))

    def get_int(self, name: str) -> int:
        return self._ints.get(name, 0)

    def publish(self, name: str, value) -> None:
        self._latest[name] = (value,)

    def take(self, name: str):
        slot = self._latest.pop(name, None)
        return None if slot is None else slot[0]


class _Proxy:
    def __init__(self, hub, name: str):
        self.hub, self.name = hub, name


class RayQueue(_Proxy):
    def put_nowait(self, item) -> None:
        if not ray.get(self.hub.put.remote(self.name, item, None)):
            raise queue_lib.Full

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        if not block:
            return self.put_nowait(item)
        while True:
            wait = 1.0 if timeout is None else timeout
            if ray.get(self.hub.put.remote(self.name, item, wait)):
                return None
            if timeout is not None:
                raise queue_lib.Full

    def get(self, block: bool = True, timeout: float | None = None):
        if not block:
            return self.get_nowait()
        while True:
            ok, item = ray.get(self.hub.get.remote(self.name, 1.0 if timeout is None else timeout))
            if ok:
                return item
            if timeout is not None:
                raise queue_lib.Empty

    def get_nowait(self):
        ok, item = ray.get(self.hub.get.remote(self.name, None))
        if not ok:
            raise queue_lib.Empty
        return item

    def qsize(self) -> int:
        return ray.get(self.hub.qsize.remote(self.name))

    def cancel_join_thread(self) -> None:
        pass  # no feeder thread: every put has reached the hub when it returns


class RayLatest(_Proxy):
    def publish(self, value) -> None:
        ray.get(self.hub.publish.remote(self.name, value))

    def poll(self):
        return ray.get(self.hub.take.remote(self.name))

    def wait(self, stop_event, poll_s: float = 0.2):
        while not stop_event.is_set():
            value = self.poll()
            if value is not None:
                return value
            time.sleep(poll_s)
        return None


class RayFlag(_Proxy):
    def __init__(self, hub, name: str):
        super().__init__(hub, name)
        self._set, self._checked = False, 0.0

    def __getstate__(self):
        return {"hub": self.hub, "name": self.name}

    def __setstate__(self, state):
        self.__init__(state["hub"], state["name"])

    def set(self) -> None:
        ray.get(self.hub.set_flag.remote(self.name))
        self._set = True

    def is_set(self) -> bool:
        if not self._set and time.monotonic() - self._checked > FLAG_CACHE_S:
            self._set = ray.get(self.hub.flag.remote(self.name))
            self._checked = time.monotonic()
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.is_set():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(FLAG_CACHE_S)
        return True


class RayInt(_Proxy):
    @property
    def value(self) -> int:
        return ray.get(self.hub.get_int.remote(self.name))

    @value.setter
    def value(self, v: int) -> None:
        ray.get(self.hub.set_int.remote(self.name, v))


class RayFlow(_Proxy):
    def ask_for(self, total: int) -> None:
        ray.get(self.hub.raise_int.remote(self.name + ".wanted", total))

    def wanted(self) -> int:
        return ray.get(self.hub.get_int.remote(self.name + ".wanted"))

    def report_step(self, step: int) -> None:
        ray.get(self.hub.set_int.remote(self.name + ".policy_step", step))

    def policy_step(self) -> int:
        return ray.get(self.hub.get_int.remote(self.name + ".policy_step"))

    def hold_at(self, step: int | None) -> None:
        ray.get(self.hub.set_int.remote(self.name + ".step_limit", 0 if step is None else step + 1))

    def step_limit(self) -> int | None:
        value = ray.get(self.hub.get_int.remote(self.name + ".step_limit"))
        return None if value == 0 else value - 1


PROXIES = {"queue": RayQueue, "latest": RayLatest, "flag": RayFlag, "int": RayInt, "flow": RayFlow}


def create_channels(segment_queue_size: int):
    """A hub actor on this (the driver's) node and the run's Channels (drlhp.processes.ports): proxies to
    it, each of its channel's kind, under the channel's name."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    hub = ray.remote(ChannelHub).options(num_cpus=0, max_concurrency=64, scheduling_strategy=here).remote(
        queue_sizes(segment_queue_size))
    return Channels.make(lambda name, kind: PROXIES[kind](hub, name)), hub

"""The channels between the three roles, one name each, and each role's ports: the channels it is handed
(as Acme hands each node just its handles), under the same names as in the run's Channels.

    Channels             every channel of one run, made by a backend: drlhp.processes.launcher
                         (multiprocessing) or drlhp.processes.ray_channels (proxies to one hub actor), each
                         from the channel's kind
    PolicyPorts          what the policy process uses
    PrefInterfacePorts   what the preference interface uses
    PredictorPorts       what the reward predictor uses

    channel            type    from -> to
    segment_queue      Queue   policy -> preference interface; bounded, a full queue drops (queues.put_or_drop)
    segment_flow       Flow    preference interface <-> policy: segments wanted; the policy's step
    preference_queue   Queue   preference interface -> reward predictor; bounded, blocking, never drops
    weights_to_policy  Latest  reward predictor -> policy (RewardWeights; the newest wins)
    weights_to_prefs   Latest  reward predictor -> preference interface (--query_selection variance)
    agent_episode      Latest  policy -> preference interface: the newest episode's frames (--show_agent)
    predictor_version  Int     reward predictor -> preference interface (a person's status)
    db_size            Int     reward predictor -> preference interface (a person's status)
    pair_updates       Int     reward predictor -> policy (--reward_updates_per_step)
    stop_event         Flag    everyone (and the parent): set to stop the run
    random_play_over   Flag    reward predictor (or the parent, when a predictor is loaded) -> policy: no more
                               random-play segments needed; wait for the first weights

Each type is a Protocol (the methods the roles call), and a kind ("queue", "flow", "latest", "int",
"flag") that each backend makes its own of (Channels.make).

A ports class's fields are channel names: a role's ports are cut from the run's channels by name (``cut``),
so a channel cannot be called one thing by its writer and another by its reader. A port the run does not
use is None (the agent's episode without --show_agent); a ports object with every port None is a role
alone (the policy with --no_labelling). The children's reports to the parent are not a channel between
roles: each backend has its own way back (drlhp.processes.child).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Protocol

PREFERENCE_QUEUE_SIZE = 16  # preferences waiting for the predictor's drain thread (blocking when full)


class Queue(Protocol):
    """multiprocessing.Queue's methods the roles call (ray_channels.RayQueue has them too)."""

    def put(self, item, block: bool = True, timeout: float | None = None) -> None: ...
    def put_nowait(self, item) -> None: ...
    def get(self, block: bool = True, timeout: float | None = None) -> Any: ...
    def get_nowait(self) -> Any: ...
    def qsize(self) -> int: ...
    def cancel_join_thread(self) -> None: ...


class Latest(Protocol):
    """queues.LatestValue: the newest value wins."""

    def publish(self, value) -> None: ...
    def poll(self) -> Any: ...


class Int(Protocol):
    """multiprocessing.Value("q"): one shared integer, one writer."""

    value: int


class Flag(Protocol):
    """queues.SharedFlag: set once, never cleared."""

    def set(self) -> None: ...
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class Flow(Protocol):
    """queues.SegmentFlow: the segments the preference interface wants; the policy's step; where a person labels,
    the step the policy waits at for their labels."""

    def ask_for(self, total: int) -> None: ...
    def wanted(self) -> int: ...
    def report_step(self, step: int) -> None: ...
    def policy_step(self) -> int: ...
    def hold_at(self, step: int | None) -> None: ...
    def step_limit(self) -> int | None: ...


KINDS = {Queue: "queue", Latest: "latest", Int: "int", Flag: "flag", Flow: "flow"}


def _channel(kind: type) -> Any:
    return field(default=None, metadata={"kind": KINDS[kind]})


@dataclass(frozen=True)
class Channels:
    segment_queue: Queue = _channel(Queue)
    segment_flow: Flow = _channel(Flow)
    preference_queue: Queue = _channel(Queue)
    weights_to_policy: Latest = _channel(Latest)
    weights_to_prefs: Latest = _channel(Latest)
    agent_episode: Latest = _channel(Latest)
    predictor_version: Int = _channel(Int)
    db_size: Int = _channel(Int)
    pair_updates: Int = _channel(Int)
    stop_event: Flag = _channel(Flag)
    random_play_over: Flag = _channel(Flag)

    @classmethod
    def make(cls, new: Callable[[str, str], Any]) -> "Channels":
        """Every channel, each ``new(name, kind)``: the backend's own of that kind ("queue", "latest",
        "int", "flag", "flow")."""
        return cls(**{f.name: new(f.name, f.metadata["kind"]) for f in fields(cls)})


def queue_sizes(segment_queue_size: int) -> dict[str, int]:
    """Each queue's bound (--segment_queue_size; the preference queue's is fixed)."""
    return {"segment_queue": segment_queue_size, "preference_queue": PREFERENCE_QUEUE_SIZE}


@dataclass(frozen=True)
class PolicyPorts:
    stop_event: Flag | None = None
    random_play_over: Flag | None = None  # set: stop random play (the predictor pretrains, or one was loaded)
    segment_queue: Queue | None = None  # segments out (put_or_drop)
    segment_flow: Flow | None = None  # how many segments are wanted; the policy's step goes back
    weights_to_policy: Latest | None = None  # the predictor's newest weights
    pair_updates: Int | None = None  # the predictor's pair-updates, which --reward_updates_per_step waits for
    agent_episode: Latest | None = None  # --show_agent: worker 0's newest episode out


@dataclass(frozen=True)
class PrefInterfacePorts:
    stop_event: Flag | None = None
    segment_queue: Queue | None = None  # segments in
    segment_flow: Flow | None = None  # how many segments it wants; the policy's step, the label schedule's clock
    preference_queue: Queue | None = None  # preferences out (blocking: never dropped)
    weights_to_prefs: Latest | None = None  # --query_selection variance: the ensemble's newest weights
    predictor_version: Int | None = None  # for a person's status line
    db_size: Int | None = None  # for a person's status line
    agent_episode: Latest | None = None  # --show_agent: the agent's newest episode, shown beside the pairs


@dataclass(frozen=True)
class PredictorPorts:
    stop_event: Flag | None = None
    random_play_over: Flag | None = None  # set when pretraining starts (or a predictor was loaded)
    preference_queue: Queue | None = None  # preferences in
    weights_to_policy: Latest | None = None  # published weights out
    weights_to_prefs: Latest | None = None  # published weights out, --query_selection variance
    predictor_version: Int | None = None  # the newest published version
    db_size: Int | None = None  # preferences in the database
    pair_updates: Int | None = None  # pair-updates since pretraining ended


def cut(ports_class: type, channels: Channels, unused: frozenset[str] | set[str] = frozenset()):
    """A role's ports: each of its fields the run's channel of that name (None where in ``unused``)."""
    ports = ports_class(**{f.name: getattr(channels, f.name) for f in fields(ports_class)})
    return replace(ports, **{name: None for name in unused if name in {f.name for f in fields(ports_class)}})

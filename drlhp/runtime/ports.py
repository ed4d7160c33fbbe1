"""The channels between the three roles, one name each, and each role's ports: the channels it is handed
(as Acme hands each node just its handles), under the same names as in the run's Channels.

    Channels             every channel of one run, made by a backend: drlhp.runtime.launcher
                         (multiprocessing) or drlhp.runtime.ray_channels (proxies to one hub actor), each
                         from the channel's kind
    PolicyPorts          what the policy process uses
    PrefInterfacePorts   what the preference interface uses
    PredictorPorts       what the reward predictor uses

    channel            kind    from -> to
    segment_queue      queue   policy -> preference interface; bounded, a full queue drops (queues.put_or_drop)
    segment_flow       flow    preference interface <-> policy: segments wanted; the policy's step
    preference_queue   queue   preference interface -> reward predictor; bounded, blocking, never drops
    weights_to_policy  latest  reward predictor -> policy (RewardWeights; the newest wins)
    weights_to_prefs   latest  reward predictor -> preference interface (--query_selection variance)
    agent_episode      latest  policy -> preference interface: the newest episode's frames (--show_agent)
    predictor_version  int     reward predictor -> preference interface (a person's status)
    db_size            int     reward predictor -> preference interface (a person's status)
    pair_updates       int     reward predictor -> policy (--reward_updates_per_step)
    stop_event         flag    everyone (and the parent): set to stop the run
    random_play_over   flag    reward predictor (or the parent, when a predictor is loaded) -> policy: no more
                               random-play segments needed; wait for the first weights

A ports class's fields are channel names: a role's ports are cut from the run's channels by name (``cut``),
so a channel cannot be called one thing by its writer and another by its reader. A port the run does not
use is None (the agent's episode without --show_agent); a ports object with every port None is a role
alone (the policy with --no_labelling). The children's reports to the parent are not a channel between
roles: each backend has its own way back (drlhp.runtime.child).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

PREFERENCE_QUEUE_SIZE = 16  # preferences waiting for the predictor's drain thread (blocking when full)
KINDS = ("queue", "flow", "latest", "int", "flag")


def _channel(kind: str) -> Any:
    assert kind in KINDS
    return field(default=None, metadata={"kind": kind})


@dataclass(frozen=True)
class Channels:
    segment_queue: Any = _channel("queue")
    segment_flow: Any = _channel("flow")
    preference_queue: Any = _channel("queue")
    weights_to_policy: Any = _channel("latest")
    weights_to_prefs: Any = _channel("latest")
    agent_episode: Any = _channel("latest")
    predictor_version: Any = _channel("int")
    db_size: Any = _channel("int")
    pair_updates: Any = _channel("int")
    stop_event: Any = _channel("flag")
    random_play_over: Any = _channel("flag")

    @classmethod
    def make(cls, new: Callable[[str, str], Any]) -> "Channels":
        """Every channel, each ``new(name, kind)`` (the backend's own queue, flag, ... of that kind)."""
        return cls(**{f.name: new(f.name, f.metadata["kind"]) for f in fields(cls)})


def queue_sizes(segment_queue_size: int) -> dict[str, int]:
    """Each queue's bound (--segment_queue_size; the preference queue's is fixed)."""
    return {"segment_queue": segment_queue_size, "preference_queue": PREFERENCE_QUEUE_SIZE}


@dataclass(frozen=True)
class PolicyPorts:
    stop_event: Any = None
    random_play_over: Any = None  # set: stop random play (the predictor pretrains, or one was loaded)
    segment_queue: Any = None  # segments out (put_or_drop)
    segment_flow: Any = None  # how many segments are wanted; the policy's step goes back
    weights_to_policy: Any = None  # the predictor's newest weights
    pair_updates: Any = None  # the predictor's pair-updates, which --reward_updates_per_step waits for
    agent_episode: Any = None  # --show_agent: worker 0's newest episode out


@dataclass(frozen=True)
class PrefInterfacePorts:
    stop_event: Any = None
    segment_queue: Any = None  # segments in
    segment_flow: Any = None  # how many segments it wants; the policy's step, the label schedule's clock
    preference_queue: Any = None  # preferences out (blocking: never dropped)
    weights_to_prefs: Any = None  # --query_selection variance: the ensemble's newest weights
    predictor_version: Any = None  # for a person's status line
    db_size: Any = None  # for a person's status line
    agent_episode: Any = None  # --show_agent: the agent's newest episode, shown beside the pairs


@dataclass(frozen=True)
class PredictorPorts:
    stop_event: Any = None
    random_play_over: Any = None  # set when pretraining starts (or a predictor was loaded)
    preference_queue: Any = None  # preferences in
    weights_to_policy: Any = None  # published weights out
    weights_to_prefs: Any = None  # published weights out, --query_selection variance
    predictor_version: Any = None  # the newest published version
    db_size: Any = None  # preferences in the database
    pair_updates: Any = None  # pair-updates since pretraining ended


def cut(ports_class: type, channels: Channels, unused: frozenset[str] | set[str] = frozenset()):
    """A role's ports: each of its fields the run's channel of that name (None where in ``unused``)."""
    ports = ports_class(**{f.name: getattr(channels, f.name) for f in fields(ports_class)})
    return replace(ports, **{name: None for name in unused if name in {f.name for f in fields(ports_class)}})

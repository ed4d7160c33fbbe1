"""The observers of a policy trained on the predictor's reward (drlhp.policy.process.run_policy), each a
RolloutObserver of the policy loop (drlhp.policy.loop):

    SegmentFeed     cuts as many segments as the preference interface still wants (segment_flow), offers them to
                    segment_queue (full queue: dropped, counted), and measures the predictor on fresh segments
                    (correlation of predicted and true segment returns) and per-episode predicted returns
    EpisodeFeed     (--show_agent) worker 0's frames of its newest finished episode to the labelling window
                    (agent_episode, latest wins)
    PredictorPace   (--reward_updates_per_step) waits for the predictor's pair-updates
    LabelPace       where a person labels, waits for their labels (the run lasts as long as they do)
"""
from __future__ import annotations

import collections
import time

import numpy as np

from drlhp.config import RunConfig
from drlhp.policy.loop import RolloutObserver
from drlhp.policy.reward_source import RewardSource
from drlhp.policy.segments import SegmentCutter
from drlhp.policy.training_state import TrainingState
from drlhp.processes.ports import PolicyPorts
from drlhp.processes.queues import feeder_cpu_s, put_or_drop
from drlhp.processes.segment_wire import compact_nbytes_sent

RECENT_SEGMENTS = 200
MAX_EPISODE_FRAMES = 1500  # an episode sent to the window keeps its last 1,500 frames (100 s at 15 fps)


class SegmentFeed(RolloutObserver):
    """Segments for the labeller (``ports.segment_queue``), as many as it wants (``ports.segment_flow``;
    None: ``segments_per_cut`` every cut), and what they cost: bytes on the wire, and the time spent
    cutting, offering and (the queue's feeder thread) pickling and writing them. It holds random play back
    while the labeller wants no segments."""

    def __init__(self, cfg: RunConfig, env, reward_source: RewardSource, ports: PolicyPorts):
        p = cfg.prefs
        self.cutter = SegmentCutter(cfg.env, env.n_envs, env.obs_shape, p.segment_length, p.segments_per_cut,
                                    env.frames_to_watch, env.predictor_dtype, getattr(env, "state_size", 0),
                                    getattr(env, "watch", None))
        self.queue, self.reward_source, self.flow = ports.segment_queue, reward_source, ports.segment_flow
        self.sent = self.dropped = 0
        self.steps_seen = 0  # agent steps of every rollout seen, random play included
        self.nbytes_at_start = compact_nbytes_sent()
        self.cut_send_s = 0.0  # this thread's time cutting and offering segments
        self.t_start = time.perf_counter()
        self._last = self._totals()
        self.recent = collections.deque(maxlen=RECENT_SEGMENTS)  # (predicted, true) segment returns
        self.pred_episode = np.zeros(env.n_envs)
        self.recent_pred_episodes = collections.deque(maxlen=100)

    def budget(self) -> int | None:
        """Segments the preference interface wants and has not been sent (None: no flow control)."""
        if self.queue is None:
            return 0
        return None if self.flow is None else max(0, self.flow.wanted() - self.sent)

    def holds_random_play(self) -> bool:
        return self.budget() == 0

    def on_rollout(self, rollout, state: TrainingState) -> None:
        if self.flow is not None:
            self.flow.report_step(state.timesteps)
        t0 = time.perf_counter()
        segments, cut_returns = self.cutter.add(rollout.next_obs, rollout.true_rewards, rollout.rewards,
                                                state.timesteps, budget=self.budget(),
                                                states=getattr(rollout, "states", None),
                                                falls=getattr(rollout, "falls", None))
        for seg in segments:
            if put_or_drop(self.queue, seg):
                self.sent += 1
            else:
                self.dropped += 1
        self.cut_send_s += time.perf_counter() - t0
        self.steps_seen += rollout.true_rewards.size
        for pred, true in cut_returns:
            ok = np.isfinite(pred)
            self.recent.extend(zip(pred[ok], true[ok]))
        if rollout.rewards is not None:
            for t in range(len(rollout.rewards)):
                self.pred_episode += rollout.rewards[t]
                for i in np.flatnonzero(rollout.dones[t]):
                    self.recent_pred_episodes.append(self.pred_episode[i])
                    self.pred_episode[i] = 0.0

    def _totals(self) -> tuple:
        """(time, agent steps, bytes pickled for segment_queue, seconds spent on segments) so far."""
        feeder = (feeder_cpu_s(self.queue) or 0.0) if self.queue is not None else 0.0
        return (time.perf_counter(), self.steps_seen, compact_nbytes_sent() - self.nbytes_at_start,
                self.cut_send_s + feeder)

    def transport(self, since: tuple) -> dict:
        """Bytes per agent step on segment_queue and the share of wall time spent on segments since
        ``since`` (a ``_totals()``)."""
        now = self._totals()
        return {"bytes_per_agent_step": (now[2] - since[2]) / max(1, now[1] - since[1]),
                "transport_time_frac": (now[3] - since[3]) / max(1e-9, now[0] - since[0]),
                "transport_s": now[3] - since[3]}

    def correlation(self) -> float | None:
        """Pearson correlation of predicted and true returns of the last segments (None if undefined)."""
        if len(self.recent) < 10:
            return None
        pred, true = np.array(self.recent).T
        if pred.std() == 0 or true.std() == 0:
            return None
        return float(np.corrcoef(pred, true)[0, 1])

    def metrics(self) -> dict:
        since, self._last = self._last, self._totals()
        transport = self.transport(since)
        out = {"policy/predictor_version": self.reward_source.version,
               "policy/pred_true_corr": self.correlation(),
               "system/segments_sent": self.sent, "system/segments_dropped": self.dropped,
               "system/segments_not_cut": self.cutter.not_cut,
               "system/segment_bytes_per_agent_step": transport["bytes_per_agent_step"],
               "system/segment_transport_time_frac": transport["transport_time_frac"]}
        if self.recent_pred_episodes:
            out["policy/predicted_return_last100"] = float(np.mean(self.recent_pred_episodes))
        return out

    def summary(self) -> dict:
        corr = self.correlation()
        transport = self.transport((self.t_start, 0, 0, 0.0))
        return {"pred_true_corr": None if corr is None else round(corr, 4), "segments_sent": self.sent,
                "segments_dropped": self.dropped, "segments_not_cut": self.cutter.not_cut,
                "segment_bytes_per_agent_step": round(transport["bytes_per_agent_step"], 1),
                "segment_transport_s": round(transport["transport_s"], 2),
                "segment_transport_time_frac": round(transport["transport_time_frac"], 4),
                "predictor_version": self.reward_source.version}


class EpisodeFeed(RolloutObserver):
    """Worker 0's frames (what a person watches) of each finished episode, published latest-wins."""

    def __init__(self, env, agent_episode, max_frames: int = MAX_EPISODE_FRAMES):
        self.env, self.agent_episode = env, agent_episode
        self.frames = collections.deque(maxlen=max_frames)
        self.published = 0

    def on_rollout(self, rollout, state: TrainingState) -> None:
        for t in range(len(rollout.dones)):
            self.frames.append(self.env.frames_to_watch(rollout.next_obs[t, 0]))
            if rollout.dones[t, 0]:
                self.agent_episode.publish(np.ascontiguousarray(np.stack(self.frames)))
                self.published += 1
                self.frames.clear()


class PredictorPace(RolloutObserver):
    """--reward_updates_per_step: before each update the policy waits until the predictor has made that
    many pair-updates per agent step, both counted from the policy's first update (``ports.pair_updates``:
    the predictor's shared count; ``ports.stop_event`` ends a wait). Its metrics say how fed the loop is,
    with or without waiting (ratio 0)."""

    paces = True

    def __init__(self, ratio: float, ports: PolicyPorts):
        self.ratio, self.pair_updates, self.stop_event = ratio, ports.pair_updates, ports.stop_event
        self.start_steps = self.start_updates = None
        self.steps = 0
        # (time, pair-updates) at the first update, at the last metrics and at the last progress line
        self._first = self._last = self._line_at = None

    def should_stop(self) -> bool:
        return self.stop_event is not None and self.stop_event.is_set()

    def before_update(self, timesteps: int) -> None:
        if self.start_steps is None:
            self.start_steps, self.start_updates = timesteps, self.pair_updates.value
            self._first = self._last = self._line_at = self._mark()
        self.steps = timesteps - self.start_steps
        need = self.start_updates + self.ratio * self.steps
        while self.ratio > 0 and self.pair_updates.value < need and not self.should_stop():
            time.sleep(0.005)

    def per_step(self) -> float | None:
        if not self.steps:
            return None
        return (self.pair_updates.value - self.start_updates) / self.steps

    def per_second(self, since: tuple[float, int] | None) -> float | None:
        """The predictor's pair-updates per second of wall time since ``since`` (time, count), or None."""
        if since is None:
            return None
        now = (time.perf_counter(), self.pair_updates.value)
        return (now[1] - since[1]) / max(now[0] - since[0], 1e-9)

    def _mark(self) -> tuple[float, int]:
        return time.perf_counter(), self.pair_updates.value

    def metrics(self) -> dict:
        rate = self.per_second(self._last)
        self._last = self._mark() if self._last is not None else None
        return {"feed/pair_updates_per_agent_step": self.per_step(), "feed/pair_updates_per_s": rate}

    def progress_text(self) -> str:
        rate = self.per_second(self._line_at)
        self._line_at = self._mark() if self._line_at is not None else None
        return "" if rate is None else f" | predictor {rate:,.0f} pair-updates/s"

    def summary(self) -> dict:
        value, rate = self.per_step(), self.per_second(self._first)
        return {"pair_updates_per_agent_step": None if value is None else round(value, 5),
                "pair_updates_per_s": None if rate is None else round(rate, 1)}


class LabelPace(RolloutObserver):
    """A person's labels pace the policy (issue 40; why pacing and not training on: pref_interface.process's
    docstring): where a person labels, the preference interface publishes on ``ports.segment_flow`` the step the
    policy may not pass until more labels are given (its ``step_limit``; None: no limit, as in every oracle's run,
    which never sets one). Before an update at or past that step, and at the end of the run's budget, the policy
    reports its step (the schedule's clock, so the labels it waits for are allowed) and waits until the limit moves
    on or the stop event is set (Ctrl-C: saved and resumable as ever). Its figures: the seconds it waited."""

    paces = True
    POLL_S = 0.05

    def __init__(self, ports: PolicyPorts, total_timesteps: int):
        self.flow, self.stop_event, self.total = ports.segment_flow, ports.stop_event, total_timesteps
        self.waited_s = 0.0
        self.waits = 0

    def _held(self, timesteps: int) -> bool:
        limit = self.flow.step_limit()
        stopping = self.stop_event is not None and self.stop_event.is_set()
        return limit is not None and timesteps >= limit and not stopping

    def wait(self, timesteps: int) -> None:
        if not self._held(timesteps):
            return
        self.flow.report_step(timesteps)
        self.waits += 1
        t0 = time.perf_counter()
        while self._held(timesteps):
            time.sleep(self.POLL_S)
        self.waited_s += time.perf_counter() - t0

    def before_update(self, timesteps: int) -> None:
        self.wait(timesteps)

    def before_end(self, timesteps: int) -> None:
        """At the end of the budget (not of a sitting cut short): the labels still planned come first."""
        if timesteps >= self.total:
            self.wait(timesteps)

    def metrics(self) -> dict:
        return {"feed/waited_for_labels_s": self.waited_s}

    def progress_text(self) -> str:
        return f" | waited for labels {self.waited_s:,.0f} s" if self.waits else ""

    def summary(self) -> dict:
        return {"waited_for_labels_s": round(self.waited_s, 1), "waits_for_labels": self.waits}

"""The preference-interface process.

    PrefInterface: the loop's state, shared by both labellers
        receive_segments()   segment_queue -> the pool of recent segments (all waiting, without blocking)
        (a person)           segment_flow <- the step the policy waits at for more labels (``pace_policy``)
        next_pair(pending)   a pair never asked before, while labels given + pending < schedule.allowed(frames);
                             a pair of MuJoCo segments (recorded states, no frames) is first drawn for a person
                             by the render worker (pref_interface.clip_drawer), DRAW_AHEAD pairs at a time, and
                             offered once drawn, as a ShownPair (pref_interface.shown_pairs)
        (both)               segment_flow <- the segments wanted so far: the pool's size, then two
                             fresh clips per pair asked; at most segment_queue_size beyond those received
                             (the policy's step, the schedule's clock, comes back the same way)
        send(pair, mu)       preference_queue <- Preference (never dropped: blocking, or held in an outbox
                             and retried, so that a person's window never freezes on a full queue); the
                             segments as the policy sent them, a MuJoCo segment with its recorded states (the
                             database keeps them, for review to draw; the drawn frames are the ShownPair's,
                             never a Segment's: they reach neither predictor nor database)
    the labeller (--labeller, one entry of pref_interface.labellers.LABELLERS) runs its loop over them:
        oracle   a plain loop until stop: receive_segments; pair <- next_pair(); send(pair, oracle's answer)
        window   the same steps in a Qt timer tick, a person answering in the window (pref_interface.human)
        web      the same steps in an asyncio task, people answering in browsers (pref_interface.web)
    at exit: a None sentinel on preference_queue ("no more preferences")

A person's run lasts as long as their labels (issue 40). The oracle answers as fast as the schedule allows, so its
labels follow the policy's steps; a person answers at their own pace (3-5 s a label), and a policy that ran on
regardless would end its 2M agent steps with half the labels the preset plans unasked. Of the two ways out, training
on past the budget until the labels are in, or pacing the policy's steps to the labels, this takes the second: the
policy keeps its budget, its learning-rate schedule (which reaches 0 at the budget: steps beyond it would learn
nothing) and the schedule's spread of labels over its steps (the paper's: more labels early), and the person's pace
sets only the wall time. So where a person labels (a labeller whose ``paces_policy``) and --person_pace_margin is
not 0, the interface publishes on segment_flow the step at which the schedule would allow more than ``given +
margin`` labels (schedule.policy_step_limit); the policy (drlhp.policy.process.LabelPace) waits before an update at
or past it, and at its last step until every planned label is given. The margin keeps pairs coming while the
policy waits (pairs on a page and being drawn count against the schedule) and lets a person run a little behind
without stalling the policy. Ctrl-C (or closing the window) ends the run, saved and resumable, as before.
"""
from __future__ import annotations

import json
import time

from drlhp.config import RunConfig
from drlhp.processes.messages import Preference
from drlhp.processes.ports import PrefInterfacePorts
from drlhp.processes.queues import drain, put_blocking
from drlhp.processes.segment_wire import register_compact_pickling
from drlhp.records.run_paths import RunPaths
from pref_interface.labellers import LABELLERS
from pref_interface.pool import SegmentPool
from pref_interface.schedule import LabelSchedule, policy_step_limit

STATE_FILE = RunPaths.LABELLER_STATE  # labels given so far: a resumed run goes on counting
SEGMENTS_PER_PAIR = 2  # fresh segments asked of the policy per pair asked: each pair can have two new clips
DRAW_AHEAD = 2  # MuJoCo pairs being drawn (or drawn, not yet offered) at once: the next ones are ready in time


class _VarianceScorer:
    """The ensemble's P[s1 > s2] per member, from the newest published weights."""

    def __init__(self, cfg: RunConfig, weights_to_prefs):
        self.cfg, self.channel, self.ensemble = cfg, weights_to_prefs, None

    def probs_fn(self, obs_shape: tuple, obs_dtype="uint8"):
        """preference_probs of the newest weights, or None before the first publication."""
        weights = self.channel.poll()
        if weights is not None:
            if self.ensemble is None:
                from drlhp.processes.tf_setup import configure_tensorflow
                from drlhp.reward.model import RewardEnsemble

                configure_tensorflow(1, 1, seed=self.cfg.seed)
                self.ensemble = RewardEnsemble(obs_shape, self.cfg.reward, seed=self.cfg.seed, obs_dtype=obs_dtype)
            self.ensemble.load_weights(weights)
        return None if self.ensemble is None else self.ensemble.preference_probs


class PrefInterface:
    """Segments in, pairs out, preferences sent, figures logged (see the module docstring), on ``ports``
    (drlhp.processes.ports.PrefInterfacePorts): the labeller's loop reads the rest of them from here (the stop
    event; a person's status: the predictor's version, the database's size, the agent's episode).
    ``frames_per_step``: emulator frames per agent step (the label schedule counts frames)."""

    def __init__(self, cfg: RunConfig, ports: PrefInterfacePorts, run_dir: str, frames_per_step: int):
        from drlhp.records.metrics import MetricsLogger

        p = self.p = cfg.prefs
        self.cfg, self.frames_per_step, self.ports = cfg, frames_per_step, ports
        self.segment_queue, self.preference_queue = ports.segment_queue, ports.preference_queue
        self.stop_event, self.segment_flow = ports.stop_event, ports.segment_flow
        self.pool = SegmentPool(p.segment_pool_size, seed=cfg.seed + 1)
        n_initial = 0 if (cfg.load_prefs_dir or cfg.load_reward_predictor_ckpt_dir) else p.n_initial_prefs
        n_labels = p.n_labels if cfg.labels_while_training else 0
        self.schedule = LabelSchedule(p.label_schedule, n_initial, n_labels, cfg.total_timesteps * frames_per_step)
        paced = LABELLERS[p.labeller].paces_policy and cfg.labels_while_training and self.segment_flow is not None
        self.pace_margin = p.person_pace_margin if paced else 0  # 0: the policy's steps never wait for labels
        self.total_steps = cfg.total_timesteps
        self._limit_sent: object = ()  # the step limit last published (none yet)
        self.scorer = _VarianceScorer(cfg, ports.weights_to_prefs) if p.query_selection == "variance" else None
        self.logger = MetricsLogger(run_dir, tb_subdir=RunPaths.TB / "prefs", csv_name=RunPaths.PROGRESS_PREFS)
        self.given = self.discarded = self.received = 0
        self.policy_step = 0
        self.state_path = RunPaths(run_dir).labeller_state
        self._restore_state()
        self.outbox: list[Preference] = []  # answered, not yet on the queue (send(..., block=False))
        self.drawer = None  # pref_interface.clip_drawer.ClipDrawer, made for the first pair of MuJoCo segments
        self.t_start = self.last_log = time.perf_counter()
        self._given_at_last_log = 0
        self.ask_for_segments()
        self.pace_policy()

    @property
    def labels_to_go(self) -> int:
        """Labels the schedule plans that are not given yet (those waiting in the outbox count as given)."""
        return max(0, self.schedule.planned - self.given - len(self.outbox))

    def pace_policy(self) -> None:
        """Where a person labels: the step the policy waits at for more labels, on segment_flow (see the module
        docstring), written when it changes."""
        if not self.pace_margin:
            return
        limit = policy_step_limit(self.schedule, self.given + len(self.outbox), self.pace_margin,
                                  self.frames_per_step, self.total_steps)
        if limit != self._limit_sent:
            self.segment_flow.hold_at(limit)
            self._limit_sent = limit

    @property
    def segments_wanted(self) -> int:
        """Segments wanted from the policy this sitting so far: enough to fill the pool, then two per
        pair asked, and never more than segment_queue_size beyond those received (the queue then
        rarely fills, and what the policy sends is what the pool takes)."""
        return min(self.pool.max_segments + SEGMENTS_PER_PAIR * self.pool.n_asked,
                   self.received + self.p.segment_queue_size)

    def ask_for_segments(self) -> None:
        if self.segment_flow is not None:
            self.segment_flow.ask_for(self.segments_wanted)

    def _restore_state(self) -> None:
        """A resumed run (its run directory has our state): the label counts go on where they stopped,
        so the schedule does not hand out its labels a second time."""
        try:
            state = json.loads(self.state_path.read_text())
            self.given, self.discarded = int(state["labels_given"]), int(state["labels_discarded"])
            self.policy_step = int(state["policy_step"])
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise RuntimeError(f"cannot read the labeller's state {self.state_path}: {e}") from None

    def save_state(self) -> None:
        from drlhp.records.atomic import write_json

        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.state_path, {"labels_given": self.given, "labels_discarded": self.discarded,
                                     "policy_step": self.policy_step, "pairs_asked_this_sitting": self.pool.n_asked})

    @property
    def allowed(self) -> int:
        return self.schedule.allowed(self.policy_step * self.frames_per_step)

    def receive_segments(self, max_items: int = 256) -> int:
        if self.segment_flow is not None:
            self.policy_step = max(self.policy_step, self.segment_flow.policy_step())
        segments = drain(self.segment_queue, max_items=max_items)
        for seg in segments:
            self.pool.add(seg)
            self.received += 1
            self.policy_step = max(self.policy_step, seg.step)
        if segments:
            self.ask_for_segments()
        return len(segments)

    @property
    def n_drawing(self) -> int:
        """Pairs of MuJoCo clips being drawn for a person (or drawn and not yet offered)."""
        return 0 if self.drawer is None else self.drawer.n_drawing

    def next_pair(self, pending: int = 0):
        """A pair to ask about, marked asked; None when the schedule allows no more labels now (given +
        ``pending`` answers-to-come count, and the pairs being drawn) or the pool has no new pair. A pair of
        MuJoCo segments goes to the drawer first and comes back from a later call, drawn (a ShownPair)."""
        if self.drawer is not None:
            drawn = self.drawer.take()
            if drawn is not None:
                return drawn
            if self.drawer.n_drawing >= DRAW_AHEAD:
                return None
        if self.given + len(self.outbox) + pending + self.n_drawing >= self.allowed:
            return None
        probs_fn = (self.scorer.probs_fn(self.pool.obs_shape, self.pool.obs_dtype)
                    if self.scorer is not None and len(self.pool) else None)
        pair = self.pool.select(self.p.query_selection, self.p.variance_candidates, probs_fn)
        if pair is not None:
            self.pool.mark_asked(*pair)
            self.ask_for_segments()
            if pair[0].states is not None and 0 in pair[0].frames.shape[1:]:  # MuJoCo clips: seen once drawn
                self._drawer().add(pair)
                return None
        return pair

    def _drawer(self):
        if self.drawer is None:
            from pref_interface.clip_drawer import ClipDrawer

            self.drawer = ClipDrawer()
        return self.drawer

    def send(self, pair, mu, block: bool = True) -> None:
        """A labelled pair to the predictor; ``mu`` None ("can't tell") is discarded. Never dropped:
        blocking (until sent, or the stop event with the queue still full), or queued in the outbox and
        sent by flush() without blocking."""
        if mu is None:
            self.discarded += 1
            return
        self.outbox.append(Preference(pair[0], pair[1], mu).check())
        self.flush(block)
        self.pace_policy()

    def flush(self, block: bool) -> None:
        while self.outbox:
            pref = self.outbox[0]
            if block:
                if not put_blocking(self.preference_queue, pref, self.stop_event):
                    return  # stopping and the reader is gone
            else:
                try:
                    self.preference_queue.put_nowait(pref)
                except Exception:  # queue.Full: try again next tick
                    return
            self.outbox.pop(0)
            self.given += 1

    def maybe_log(self, extra: dict | None = None) -> bool:
        """A metrics row if log_interval seconds have passed; whether one was written."""
        now = time.perf_counter()
        if now - self.last_log < self.cfg.log_interval:
            return False
        self.logger.log(self.policy_step, {
            "prefs/labels_given": self.given, "prefs/labels_discarded": self.discarded,
            "prefs/labels_per_minute": 60.0 * (self.given - self._given_at_last_log) / (now - self.last_log),
            "prefs/labels_allowed": self.allowed,
            "prefs/pairs_asked": self.pool.n_asked, "prefs/segments_received": self.received,
            "prefs/segments_wanted": self.segments_wanted,
            "system/segment_pool_size": len(self.pool), "system/segment_queue_size": _qsize(self.segment_queue),
            "system/preference_queue_size": _qsize(self.preference_queue),
            "system/memory_mb_prefs": _memory_mb(), **(extra or {}),
            **({} if self.drawer is None else {f"prefs/{k}": v for k, v in self.drawer.figures().items()}),
        })
        self.last_log, self._given_at_last_log = now, self.given
        self.save_state()
        return True

    def close(self) -> None:
        """Send what is left, then the "no more preferences" sentinel; the render worker, if any, ends."""
        try:
            if self.drawer is not None:
                self.drawer.close()
            self.flush(block=True)
            self.save_state()
        finally:
            if not put_blocking(self.preference_queue, None, self.stop_event, poll_s=2.0):
                self.preference_queue.cancel_join_thread()  # the predictor is gone: do not hang on exit
            self.logger.close()

    def figures(self) -> dict:
        return {"labels_given": self.given, "pairs_asked": self.pool.n_asked,
                "labels_per_minute": round(60.0 * self.given / max(1e-9, time.perf_counter() - self.t_start), 1),
                **({} if self.drawer is None else self.drawer.figures())}


def run_pref_interface(cfg: RunConfig, ports: PrefInterfacePorts, run_dir: str, log=print, *,
                       frames_per_step: int) -> dict:
    """The process's main function: the labeller of --labeller runs its loop over a PrefInterface on
    ``ports`` (drlhp.processes.ports.PrefInterfacePorts). ``predictor_version`` and ``db_size`` (shared
    integers written by the reward predictor) and ``agent_episode`` (latest-wins frames of the agent's
    newest episode, with --show_agent) feed a person's status (``iface.ports``); the oracle reads none. Through
    ``segment_flow`` this process tells the policy how many segments it wants, and reads its step.
    ``frames_per_step``: emulator frames per agent step (the label schedule counts frames)."""
    register_compact_pickling()  # the preferences' segments go to the predictor in compact form
    loop = LABELLERS[cfg.prefs.labeller].loop()
    iface = PrefInterface(cfg, ports, run_dir, frames_per_step)
    try:
        extra = loop(iface, log=log)
        return {**iface.figures(), **(extra or {})}
    finally:
        iface.close()


def _memory_mb():
    from drlhp.records.metrics import memory_mb

    return memory_mb()


def _qsize(q) -> float | None:
    try:
        return float(q.qsize())  # approximate; not available on every platform
    except NotImplementedError:
        return None

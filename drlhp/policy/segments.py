"""Cutting segments from rollouts, in the policy process.

Each rollout adds (n_steps, n_envs) steps; once ``segment_length`` steps per worker are collected,
the window is cut into one ``Segment`` per worker and a fresh window starts. Of each cut, at most
``segments_per_cut`` segments are made, and no more than the caller's ``budget`` (the segments the
preference interface still wants: ``queues.SegmentFlow``); workers are taken in turn, so all
contribute over time. Segments may span an episode boundary (the env resets in the same step).
The observations are the rollout's ``next_obs``, already as the predictor and the labeller may see
them (``env.predictor_view``: on Atari the score blanked), so ``Segment.obs`` and the frames a person
watches show no score: uint8. On a Box-action env (PPO) they are float32 (D + A,) per step, the raw
observation and the clipped action (drlhp.policy.ppo.box_actions), and ``frames_to_watch`` may give an empty
(T, 0, 0) array (nothing rendered). A cutter takes only the dtype it was built for (``obs_dtype``). A cutter
built with ``state_size`` S > 0 also cuts each step's recorded simulator state ((T, N, S) float64 given to ``add``:
a MuJoCo env's, recorded where a person labels) into ``Segment.states``, for the labeller to draw the clip from, and
each step's fall flag (``falls``, (T, N) bool, where given) into ``Segment.falls``, for the drawn clip to show a fall.
A cutter built with a ``watch`` (an Atari env's colour frames where a person labels: envs/atari_watch.py) cuts only the
watched workers, each segment's frames the watch's colour frames of its steps, its states the console's RAM after each.
Their compact form on the wire: drlhp.processes.segment_wire.
"""
from __future__ import annotations

import numpy as np

from drlhp.processes.messages import Segment


class SegmentCutter:
    def __init__(self, env_id: str, n_envs: int, obs_shape: tuple, segment_length: int, segments_per_cut: int,
                 frames_to_watch, obs_dtype=np.uint8, state_size: int = 0, watch=None):
        self.env_id, self.n_envs, self.length = env_id, n_envs, segment_length
        self.watch, self.workers = watch, tuple(range(n_envs)) if watch is None else watch.workers
        self.per_cut = min(segments_per_cut, len(self.workers))
        self.frames_to_watch = frames_to_watch
        self.obs_dtype = np.dtype(obs_dtype)
        if self.obs_dtype not in (np.uint8, np.float32):
            raise ValueError(f"SegmentCutter cuts uint8 or float32 observations, not {self.obs_dtype}")
        self._obs = np.zeros((segment_length, n_envs, *obs_shape), self.obs_dtype)
        self._true = np.zeros((segment_length, n_envs), np.float32)
        self._pred = np.zeros((segment_length, n_envs), np.float32)
        self._states = np.zeros((segment_length, n_envs, state_size), np.float64) if state_size > 0 else None
        self._falls = np.zeros((segment_length, n_envs), np.bool_) if state_size > 0 else None
        self._filled = 0
        self._next_worker = 0
        self.not_cut = 0  # segments a cut could have made (segments_per_cut) that the budget left out

    def add(self, obs: np.ndarray, true_rewards: np.ndarray, predicted: np.ndarray | None,
            step: int, budget: int | None = None, states: np.ndarray | None = None,
            falls: np.ndarray | None = None) -> tuple[list[Segment], list[tuple[np.ndarray, np.ndarray]]]:
        """Add a rollout's (T, N, ...) observations after each step and the rewards of those steps
        (copied). Returns the segments to offer (possibly none; at most ``budget`` in all, None: no
        limit) and, per cut, the (predicted, true) returns of ALL workers' windows (predicted is NaN
        where no prediction was made): fresh segments to check the predictor on. ``states``: (T, N, S) float64,
        each step's recorded simulator state, given exactly when the cutter was built with ``state_size`` S; ``falls``
        (T, N) bool, with states: where the robot fell (None: nowhere). With a watch, ``obs`` are the env's newest steps
        (the rollout just played): a window's colour frames are the watch's, that many steps back."""
        if obs.dtype != self.obs_dtype:  # what the predictor sees, as it sees it: never cast silently
            raise ValueError(f"SegmentCutter wants the predictor's view of observations ({self.obs_dtype}), "
                             f"got {obs.dtype}")
        if (states is None) != (self._states is None):
            raise ValueError("SegmentCutter: states are given exactly when it was built with a state_size")
        segments, cut_returns = [], []
        for t in range(len(obs)):
            self._obs[self._filled] = obs[t]
            self._true[self._filled] = true_rewards[t]
            self._pred[self._filled] = np.nan if predicted is None else predicted[t]
            if states is not None:
                self._states[self._filled] = states[t]
                self._falls[self._filled] = False if falls is None else falls[t]
            self._filled += 1
            if self._filled == self.length:
                n_cut = self.per_cut if budget is None else max(0, min(self.per_cut, budget - len(segments)))
                self.not_cut += self.per_cut - n_cut
                for _ in range(n_cut):
                    w = self.workers[self._next_worker]
                    self._next_worker = (self._next_worker + 1) % len(self.workers)
                    seg_obs = self._obs[:, w].copy()
                    seg_states = None if self._states is None else self._states[:, w].copy()
                    seg_falls = None if self._falls is None else self._falls[:, w].copy()
                    frames = (self.frames_to_watch(seg_obs) if self.watch is None  # the window ended len(obs)-1-t ago
                              else self.watch.frames(w, len(obs) - 1 - t, self.length))
                    if self.watch is not None:
                        seg_states = self.watch.states(w, len(obs) - 1 - t, self.length)
                    segments.append(Segment(seg_obs, np.ascontiguousarray(frames),
                                            self._true[:, w].copy(), self.env_id, w, step, seg_states,
                                            seg_falls).check())
                cut_returns.append((self._pred.sum(axis=0), self._true.sum(axis=0)))
                self._filled = 0
        return segments, cut_returns

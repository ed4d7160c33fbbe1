"""Cutting segments from rollouts, in the policy process, and their compact form on the wire.

Each rollout adds (n_steps, n_envs) steps; once ``segment_length`` steps per worker are collected,
the window is cut into one ``Segment`` per worker and a fresh window starts. Of each cut, at most
``segments_per_cut`` segments are made, and no more than the caller's ``budget`` (the segments the
preference interface still wants: ``queues.SegmentFlow``); workers are taken in turn, so all
contribute over time. Segments may span an episode boundary (the env resets in the same step).
The observations are the rollout's ``next_obs``, already as the predictor and the labeller may see
them (``env.predictor_view``: on Atari the score blanked), so ``Segment.obs`` and the frames a person
watches show no score.

On the wire (``register_compact_pickling``) a segment drops what its receiver can rebuild exactly:
stacked observations become one strip of frames (step t's stack is the previous stack shifted by one
frame, within an episode), and frames equal to each stack's newest frame are not sent twice. The
receiver gets an equal ``Segment`` (checked); anything that does not fit is sent whole.
"""
from __future__ import annotations

import functools

import numpy as np

from drlhp.runtime.messages import Segment


class SegmentCutter:
    def __init__(self, env_id: str, n_envs: int, obs_shape: tuple, segment_length: int, segments_per_cut: int,
                 frames_to_watch):
        self.env_id, self.n_envs, self.length = env_id, n_envs, segment_length
        self.per_cut = min(segments_per_cut, n_envs)
        self.frames_to_watch = frames_to_watch
        self._obs = np.zeros((segment_length, n_envs, *obs_shape), np.uint8)
        self._true = np.zeros((segment_length, n_envs), np.float32)
        self._pred = np.zeros((segment_length, n_envs), np.float32)
        self._filled = 0
        self._next_worker = 0
        self.not_cut = 0  # segments a cut could have made (segments_per_cut) that the budget left out

    def add(self, obs: np.ndarray, true_rewards: np.ndarray, predicted: np.ndarray | None,
            step: int, budget: int | None = None) -> tuple[list[Segment], list[tuple[np.ndarray, np.ndarray]]]:
        """Add a rollout's (T, N, ...) observations after each step and the rewards of those steps
        (copied). Returns the segments to offer (possibly none; at most ``budget`` in all, None: no
        limit) and, per cut, the (predicted, true) returns of ALL workers' windows (predicted is NaN
        where no prediction was made): fresh segments to check the predictor on."""
        if obs.dtype != np.uint8:  # what the predictor sees is bytes (env.predictor_view): never cast silently
            raise ValueError(f"SegmentCutter wants the predictor's view of observations (uint8), got {obs.dtype}")
        segments, cut_returns = [], []
        for t in range(len(obs)):
            self._obs[self._filled] = obs[t]
            self._true[self._filled] = true_rewards[t]
            self._pred[self._filled] = np.nan if predicted is None else predicted[t]
            self._filled += 1
            if self._filled == self.length:
                n_cut = self.per_cut if budget is None else max(0, min(self.per_cut, budget - len(segments)))
                self.not_cut += self.per_cut - n_cut
                for _ in range(n_cut):
                    w = self._next_worker
                    self._next_worker = (w + 1) % self.n_envs
                    seg_obs = self._obs[:, w].copy()
                    segments.append(Segment(seg_obs, np.ascontiguousarray(self.frames_to_watch(seg_obs)),
                                            self._true[:, w].copy(), self.env_id, w, step).check())
                cut_returns.append((self._pred.sum(axis=0), self._true.sum(axis=0)))
                self._filled = 0
        return segments, cut_returns


def _is_shifted_stack(obs: np.ndarray) -> bool:
    """Whether each step's stack (T, H, W, C) is the previous one shifted by one frame (oldest first)."""
    if obs.ndim != 4 or obs.shape[-1] < 2 or len(obs) < 2 or not obs.flags.c_contiguous:
        return False
    flat = obs.reshape(len(obs), -1)  # per step: pixel after pixel, each pixel's C frames together
    same = flat[1:, :-1] == flat[:-1, 1:]  # frame k of step t+1 against frame k+1 of step t, ...
    newest = _newest_mask(flat.shape[1] - 1, obs.shape[-1])  # ... except where step t+1's newest frame is
    return bool(np.logical_or(same, newest, out=same).all())


@functools.lru_cache(maxsize=8)
def _newest_mask(n: int, c: int) -> np.ndarray:
    """True at the positions of step t's newest frames in ``flat[t, :n]`` (nothing to compare there)."""
    return np.arange(n) % c == c - 1


class _Sent:
    nbytes = 0  # array bytes of the Segments pickled by this process in compact form (by any thread)


def compact_nbytes_sent() -> int:
    """Array bytes of every Segment this process has pickled in compact form so far (its wire size,
    give or take a few hundred bytes of pickle framing per segment)."""
    return _Sent.nbytes


def _reduce_segment(seg: Segment):
    obs, frames = seg.obs, seg.frames
    newest = np.ascontiguousarray(obs[..., -1]) if obs.ndim == 4 else None
    strip = _is_shifted_stack(obs)
    wire_obs = (obs[0], newest[1:]) if strip else (obs,)  # the first stack, then each later step's new frame
    if newest is not None and frames.shape == newest.shape and np.array_equal(frames, newest):
        frames = None  # the receiver takes each stack's newest frame
    _Sent.nbytes += (sum(a.nbytes for a in wire_obs) + (0 if frames is None else frames.nbytes)
                     + seg.true_rewards.nbytes)
    return _rebuild_segment, (wire_obs, strip, frames, seg.true_rewards, seg.env_id, seg.worker, seg.step)


def _rebuild_segment(wire_obs, strip: bool, frames, true_rewards, env_id, worker, step) -> Segment:
    if strip:
        first, newest = wire_obs
        obs = np.empty((len(newest) + 1, *first.shape), first.dtype)
        obs[0] = first
        for t in range(1, len(obs)):
            obs[t].reshape(-1)[:-1] = obs[t - 1].reshape(-1)[1:]  # frames shift one place towards the oldest
            obs[t, ..., -1] = newest[t - 1]
    else:
        (obs,) = wire_obs
    if frames is None:
        frames = np.ascontiguousarray(obs[..., -1])
    return Segment(obs, frames, true_rewards, env_id, worker, step).check()


def register_compact_pickling() -> None:
    """Send this process's Segments in compact form through multiprocessing queues and pipes (see the
    module docstring); what arrives is an equal, checked Segment. Other pickling is left alone."""
    from multiprocessing.reduction import ForkingPickler

    ForkingPickler.register(Segment, _reduce_segment)

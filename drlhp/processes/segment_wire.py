"""A ``Segment``'s compact form on the wire, for every process that sends or receives one (the policy sends
segments to the preference interface, which sends them on, in preferences, to the reward predictor).

With ``register_compact_pickling`` a segment drops what its receiver can rebuild exactly: stacked
observations become one strip of frames (step t's stack is the previous stack shifted by one frame,
within an episode), and frames equal to each stack's newest frame are not sent twice. The receiver
gets an equal ``Segment`` (checked; a MuJoCo segment's recorded ``states`` go as they are); anything
that does not fit is sent whole.
"""
from __future__ import annotations

import functools

import numpy as np

from drlhp.processes.messages import Segment


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
                     + seg.true_rewards.nbytes + (0 if seg.states is None else seg.states.nbytes)
                     + (0 if seg.falls is None else seg.falls.nbytes))
    return _rebuild_segment, (wire_obs, strip, frames, seg.true_rewards, seg.env_id, seg.worker, seg.step,
                              seg.states, seg.falls)


def _rebuild_segment(wire_obs, strip: bool, frames, true_rewards, env_id, worker, step, states=None,
                     falls=None) -> Segment:
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
    return Segment(obs, frames, true_rewards, env_id, worker, step, states, falls).check()


def register_compact_pickling() -> None:
    """Send this process's Segments in compact form through multiprocessing queues and pipes (see the
    module docstring); what arrives is an equal, checked Segment. Other pickling is left alone."""
    from multiprocessing.reduction import ForkingPickler

    ForkingPickler.register(Segment, _reduce_segment)

"""The messages between the three processes: the only things that cross a process boundary.

    policy ──segment_queue (bounded; put_nowait, a full queue drops the Segment)──▶ pref_interface
    pref_interface ──preference_queue (blocking; never drops a Preference)──▶ reward predictor
    reward predictor ──weights channels (latest wins: RewardWeights)──▶ policy, pref_interface
    every child ──its backend's way back (Report: done, error)──▶ parent

Shapes and dtypes are checked where a message is made (``check()``), so a wrong array fails at the
sender, not three processes later.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

MU_LEFT, MU_RIGHT, MU_EQUAL = (1.0, 0.0), (0.0, 1.0), (0.5, 0.5)
VALID_MU = (MU_LEFT, MU_RIGHT, MU_EQUAL)


@dataclass(frozen=True)
class Segment:
    """A clip of one env worker: ``T`` consecutive agent steps.

    obs: what the reward predictor sees, unnormalized: (T, *obs_shape) uint8 (stacked frames, a quantized
        vector), or (T, D) float32 on a Box-action env (each step's raw observation and its clipped action).
    frames: (T, H, W) or (T, H, W, 3) uint8, what a person watches; or empty, (T, 0, 0) uint8: nothing
        rendered (a Box-action env's segments: a MuJoCo clip is drawn from ``states`` where a person watches).
    true_rewards: (T,) float32, the env's unclipped reward (only the synthetic oracle reads it).
    env_id, worker: where it came from; step: the policy's agent-step count when it was cut.
    states: (T, S) float64, the simulator's state each step was taken in (a MuJoCo env's concat(qpos, qvel):
        envs/mujoco_state.py), recorded only where a person labels, to re-render the clip from; an Atari clip's
        console RAM after each step (T, 128), beside its colour frames (envs/atari_watch.py); else None.
    falls: (T,) bool, with ``states`` only: True at a step where the robot fell (info["fell"]: envs/fixed_length.py),
        for the drawn clip to show it (pref_interface.fall_mark); else None.
    """

    obs: np.ndarray
    frames: np.ndarray
    true_rewards: np.ndarray
    env_id: str
    worker: int
    step: int
    states: np.ndarray | None = None
    falls: np.ndarray | None = None

    def check(self) -> "Segment":
        t = len(self.true_rewards)
        obs = self.obs
        if not (obs.dtype == np.uint8 and obs.ndim >= 2 or obs.dtype == np.float32 and obs.ndim == 2) or len(obs) != t:
            raise ValueError(f"Segment.obs must be (T={t}, ...) uint8 or (T={t}, D) float32, got {self.obs.shape} "
                             f"{self.obs.dtype}")
        if self.frames.dtype != np.uint8 or self.frames.ndim not in (3, 4) or self.frames.shape[0] != t:
            raise ValueError(f"Segment.frames must be (T={t}, H, W[, 3]) uint8 or empty (T={t}, 0, 0), got "
                             f"{self.frames.shape} {self.frames.dtype}")
        if 0 in self.frames.shape[1:] and self.frames.shape != (t, 0, 0):
            raise ValueError(f"Segment.frames: empty frames must be (T={t}, 0, 0), got {self.frames.shape}")
        if self.true_rewards.dtype != np.float32 or self.true_rewards.ndim != 1:
            raise ValueError(f"Segment.true_rewards must be (T,) float32, got {self.true_rewards.shape} "
                             f"{self.true_rewards.dtype}")
        states = self.states
        if states is not None and (states.dtype != np.float64 or states.ndim != 2 or len(states) != t):
            raise ValueError(f"Segment.states must be (T={t}, S) float64 or None, got {states.shape} {states.dtype}")
        falls = self.falls
        if falls is not None and (states is None or falls.dtype != np.bool_ or falls.shape != (t,)):
            raise ValueError(f"Segment.falls must be (T={t},) bool, and only with states, or None, got {falls.shape} "
                             f"{falls.dtype}")
        return self

    @property
    def length(self) -> int:
        return len(self.true_rewards)

    @property
    def true_return(self) -> float:
        return float(self.true_rewards.sum())

    @property
    def id(self) -> str:
        """Content hash (sha1 of the observations and rewards): stable across processes and runs."""
        return segment_id(self.obs, self.true_rewards)


def segment_id(obs: np.ndarray, true_rewards: np.ndarray) -> str:
    """sha1 of the shape, the observations' bytes and the rewards; a float32 segment's dtype is hashed too
    (a uint8 segment's id is what it was before float segments existed: saved databases keep their ids)."""
    h = hashlib.sha1()
    h.update(str(obs.shape).encode())
    if obs.dtype != np.uint8:
        h.update(str(obs.dtype).encode())
    h.update(np.ascontiguousarray(obs).data)
    h.update(np.ascontiguousarray(true_rewards, dtype=np.float32).data)
    return h.hexdigest()


@dataclass(frozen=True)
class Preference:
    """The labeller's answer on a pair: mu = (1, 0) segment_1 better, (0, 1) segment_2 better,
    (0.5, 0.5) equally good. ("Can't tell" answers are discarded, never sent.)"""

    segment_1: Segment
    segment_2: Segment
    mu: tuple[float, float]

    def check(self) -> "Preference":
        if tuple(self.mu) not in VALID_MU:
            raise ValueError(f"Preference.mu must be one of {VALID_MU}, got {self.mu}")
        self.segment_1.check()
        self.segment_2.check()
        o1, o2 = self.segment_1.obs, self.segment_2.obs
        if o1.shape != o2.shape or o1.dtype != o2.dtype:
            raise ValueError(f"Preference: segments differ in shape or dtype {o1.shape} {o1.dtype} "
                             f"vs {o2.shape} {o2.dtype}")
        return self


@dataclass(frozen=True)
class RewardWeights:
    """A published state of the reward predictor ensemble.

    version: increases with every publication (0 is never published).
    weights: per member, its Keras weights (``model.get_weights()``: batch-norm statistics included).
    norm_mean, norm_std: (n_members,) per-member statistics of its per-step output over recent
        segments; a reader normalizes member m's output as (r - norm_mean[m]) / norm_std[m] * scale.
    """

    version: int
    weights: tuple[tuple[np.ndarray, ...], ...]
    norm_mean: np.ndarray
    norm_std: np.ndarray

    def check(self) -> "RewardWeights":
        m = len(self.weights)
        if self.norm_mean.shape != (m,) or self.norm_std.shape != (m,):
            raise ValueError(f"RewardWeights: {m} members but norm stats of shape {self.norm_mean.shape}")
        return self


@dataclass(frozen=True)
class Report:
    """A child's word to the parent: kind "done" (with its final figures) or "error" (with the
    traceback text), or "info" (figures it wants in summary.json)."""

    role: str
    kind: str
    text: str = ""
    figures: dict | None = None

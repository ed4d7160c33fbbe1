"""The one vector-env interface the policy sees, whatever the game.

Every vector env here returns channels-last uint8 images (N, H, W, C) (Atari and MovingDot: (N, 84, 84,
4)) or float32 vectors (N, D) (``envs/gym_vec_env.py``), the TRUE (unclipped) per-step reward, and
resets finished sub-environments in the same step (the returned observation of a finished env is
already the first of its next episode), so a rollout needs no masking. Episode
statistics (true return, length, success) are kept here, once, for every kind of env.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class EpisodeStats:
    """One finished episode of one worker."""

    worker: int
    true_return: float
    length: int
    success: bool | None  # None where the env has no notion of success
    points: int = 0  # steps with a nonzero true reward (Pong: points won + lost)
    returns: int | None = None  # Pong: the agent's returns of the ball (envs.pong_events); None elsewhere


@dataclass
class StepResult:
    obs: np.ndarray  # (N, H, W, C) uint8 or (N, D) float32; for a finished env, the first observation of
    #                  its next episode
    true_reward: np.ndarray  # (N,) float32, unclipped
    terminated: np.ndarray  # (N,) bool: the episode really ended (no bootstrapping)
    truncated: np.ndarray  # (N,) bool: cut by a time limit
    finished: list[EpisodeStats] = field(default_factory=list)
    final_obs: np.ndarray | None = None  # like obs, but for a finished env the LAST observation of its
    #                                      episode (what its final action led to), and for a fall under
    #                                      fixed-length episodes' reset rule the fallen observation (the
    #                                      returned one is a fresh start); None: same as obs

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    @property
    def outcome_obs(self) -> np.ndarray:
        """The observation each action led to: ``final_obs`` where an episode ended or a robot fell, else ``obs``."""
        return self.obs if self.final_obs is None else self.final_obs


class EpisodeTracker:
    """Sums true rewards per worker and reports each episode when it ends."""

    def __init__(self, n_envs: int):
        self.returns = np.zeros(n_envs, dtype=np.float64)
        self.lengths = np.zeros(n_envs, dtype=np.int64)
        self.points = np.zeros(n_envs, dtype=np.int64)

    def update(self, true_reward: np.ndarray, done: np.ndarray, success: np.ndarray | None,
               hits: np.ndarray | None = None) -> list[EpisodeStats]:
        """``hits``: per worker, the game's returns so far where the env counts them (Pong), read at
        this step (for a finished episode: its total)."""
        self.returns += true_reward
        self.lengths += 1
        self.points += true_reward != 0
        finished = []
        for i in np.flatnonzero(done):
            ok = None if success is None else bool(success[i])
            finished.append(EpisodeStats(int(i), float(self.returns[i]), int(self.lengths[i]), ok, int(self.points[i]),
                                         None if hits is None else int(hits[i])))
            self.returns[i] = 0.0
            self.lengths[i] = 0
            self.points[i] = 0
        return finished


class VecEnv:
    """Base of the vector envs: ``reset(seed) -> obs``, ``step(actions) -> StepResult``, ``close()``."""

    env_id: str
    n_envs: int
    n_actions: int
    obs_shape: tuple[int, ...]
    obs_dtype: np.dtype = np.dtype(np.uint8)  # what the policy sees (a vector env's: float32)
    predictor_dtype: np.dtype = np.dtype(np.uint8)  # what predictor_view gives: always bytes
    frames_per_step: int = 1  # emulator frames per agent step (4 for Atari's frame skip)
    watch = None  # where a person watches more than frames_to_watch gives (Atari's colour: envs/atari_watch.py)

    def predictor_view(self, obs: np.ndarray, inplace: bool = False) -> np.ndarray:
        """What the reward predictor and the labeller see of observations (..., H, W, C): by default
        ``obs`` itself; Atari blanks the score (``envs.score_blanking``); a vector env gives one byte per
        component (``envs.gym_vec_env``). Always uint8. ``inplace``: may write into ``obs`` instead of
        copying it (use the returned array)."""
        return obs

    def frames_to_watch(self, obs: np.ndarray) -> np.ndarray:
        """What a person watches of observations (..., H, W, C): by default the newest frame of the
        stack, (..., H, W) uint8."""
        return obs[..., -1]

    def reset(self, seed: int) -> np.ndarray:
        raise NotImplementedError

    def step(self, actions: np.ndarray) -> StepResult:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

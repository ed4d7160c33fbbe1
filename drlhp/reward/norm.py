"""The reward predictor's normalization: one object for what turns raw outputs into the policy's reward.

The preference loss cannot see a constant offset or the scale of a member's output, so each member's
raw per-step output is normalized with statistics measured on recent frames, then the members are
averaged and scaled to the target standard deviation (paper: 0.05):

    norm = RewardNorm(n_members, target_std=0.05, clip=0)
    norm.update(raw (M, B), momentum)   # statistics of raw outputs over recent frames (the predictor does
                                        # this before each publication; 1: replaced, else blended)
    reward = norm.apply(raw (M, B))     # (B,) float32: mean over members of clip((raw - mean) / std) x target
    norm.clipped_share                  # the share of (member, step) values the last apply() clipped
    norm.mean, norm.std                 # the measured statistics, (M,): what RewardWeights carries

``clip`` (RewardConfig.clip) is in the members' own standard deviations; 0 leaves them unclipped, as the
paper did. imitation's RunningNorm and Stable-Baselines3's RunningMeanStd have the same shape.
"""
from __future__ import annotations

import numpy as np


class RewardNorm:
    def __init__(self, n_members: int, target_std: float, clip: float = 0.0):
        self.target_std, self.clip = float(target_std), float(clip)
        self.mean = np.zeros(n_members, np.float32)
        self.std = np.ones(n_members, np.float32)
        self.is_set = False  # no statistics measured yet: the first update replaces the defaults
        self.clipped_share = 0.0

    def update(self, raw: np.ndarray, momentum: float = 1.0) -> None:
        """Move each member's mean and standard deviation towards their values over ``raw`` (M, B):
        new = (1 - momentum) * old + momentum * measured (variance mixed, not std). momentum 1 replaces
        them; a small one keeps the reward on one scale while the weights change. The first call replaces."""
        mean, var = raw.mean(axis=1), np.maximum(raw.var(axis=1), 1e-12)
        if self.is_set and momentum < 1.0:
            mean = (1.0 - momentum) * self.mean + momentum * mean
            var = (1.0 - momentum) * np.square(self.std) + momentum * var
        self.mean = mean.astype(np.float32)
        self.std = np.maximum(np.sqrt(var), 1e-6).astype(np.float32)
        self.is_set = True

    def apply(self, raw: np.ndarray) -> np.ndarray:
        z = (raw - self.mean[:, None]) / self.std[:, None]  # in each member's standard deviations
        if self.clip > 0:  # a rare frame far outside the normalization set cannot dominate the reward
            clipped = np.abs(z) > self.clip
            self.clipped_share = float(clipped.mean()) if clipped.size else 0.0
            z = np.clip(z, -self.clip, self.clip)
        return (z.mean(axis=0) * self.target_std).astype(np.float32)

    def load(self, mean: np.ndarray, std: np.ndarray) -> None:
        """Statistics published or saved earlier (RewardWeights, a checkpoint)."""
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        self.is_set = True

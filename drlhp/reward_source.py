"""Where the policy's training reward comes from.

A reward source turns one rollout into training rewards, in ONE batch per rollout:
    rewards(obs (T, N, ...) uint8, true_rewards (T, N) float32) -> (T, N) float32
Today: the environment's reward, clipped to its sign (DQN/A2C convention). The reward predictor's
output arrives with the preference pipeline and plugs in here.
"""
from __future__ import annotations

import numpy as np


class RewardSource:
    name = "base"

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class ClippedEnvReward(RewardSource):
    """sign(r): +1, 0 or -1 per step, as in DQN and A2C on Atari."""

    name = "env_clipped"

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray:
        return np.sign(true_rewards).astype(np.float32)

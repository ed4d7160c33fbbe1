"""A2C's rollouts: the discrete algorithms' loop (drlhp.policy.discrete_rollout.RolloutRunner) with A2C's batch, the
n-step returns of the training reward bootstrapped from V of the observation after the last step."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from drlhp.policy.a2c.update import discounted_returns
from drlhp.policy.discrete_rollout import Rollout, RolloutRunner
from drlhp.policy.reward_source import RewardSource
from envs import VecEnv


@dataclass
class A2CRollout(Rollout):
    """A rollout and what A2C's update takes besides: B = n_steps * n_envs."""

    b_returns: np.ndarray | None = None  # (B,) float32, n-step returns of the training reward (None: no rewards)


class A2CRunner(RolloutRunner):
    """Steps ``env`` with an A2CPolicy for ``n_steps`` (RolloutRunner.run) and hands over an A2CRollout."""

    def __init__(self, env: VecEnv, policy, reward_source: RewardSource, n_steps: int, gamma: float, seed: int,
                 episode_ends: bool = True):
        super().__init__(env, policy, reward_source, n_steps, seed, episode_ends)
        self.gamma = gamma

    def act(self, t: int) -> np.ndarray:
        actions, _ = self.policy.act(self.obs)
        return actions

    def batch(self, rollout: Rollout, random_actions: bool) -> A2CRollout:
        """The rollout with its n-step returns, where it has rewards; the time they take is the policy's."""
        t1 = time.perf_counter()
        rollout = A2CRollout(**vars(rollout))
        if rollout.rewards is not None:
            last_values = self.policy.value(self.obs)
            rollout.b_returns = discounted_returns(rollout.rewards, self.cuts(), last_values, self.gamma).reshape(-1)
        rollout.act_s += time.perf_counter() - t1
        return rollout

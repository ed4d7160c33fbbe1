"""Discrete PPO's rollouts on drlhp's vector envs (envs.VecEnv: Atari, MovingDot, gymnasium's discrete envs): the
discrete algorithms' rollout loop (drlhp.policy.discrete_rollout.RolloutRunner, subclassed) with what PPO's update
needs besides, each step's value and log-probability, V of the observation after the last step, and where episode
ends stop the returns.

As in A2C's, the training reward of the whole rollout comes from the reward source in one call, on the observations
that follow each action as the predictor and the labeller see them (``env.predictor_view``); before the predictor's
first weights it is None and the rollout is not trained on (random play: uniform random actions, the paper's).
"""
from __future__ import annotations

import time

import numpy as np

from drlhp.policy.discrete_rollout import Rollout, RolloutRunner
from drlhp.policy.ppo.batches import DiscreteRollout
from drlhp.policy.ppo.discrete_policy import DiscretePPOPolicy
from drlhp.policy.reward_source import RewardSource
from envs import VecEnv


class DiscreteRolloutCollector(RolloutRunner):
    """Steps ``env`` with a DiscretePPOPolicy for ``n_steps`` (RolloutRunner.run). Its arrays are views of
    buffers reused by the next ``run()``: learn from a rollout before collecting the next. ``episode_ends``: an
    episode's end stops the returns (False: the envs are one continuing task, as the paper trained on the
    predictor's reward)."""

    def __init__(self, env: VecEnv, policy: DiscretePPOPolicy, reward_source: RewardSource, n_steps: int, seed: int,
                 episode_ends: bool = True):
        n = env.n_envs
        if n != policy.cfg.n_envs or n_steps != policy.cfg.n_steps:
            raise ValueError(f"the rollout is {n} envs x {n_steps} steps, the PPO config {policy.cfg.n_envs} x "
                             f"{policy.cfg.n_steps}")
        super().__init__(env, policy, reward_source, n_steps, seed, episode_ends)
        self._value_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._log_prob_buf = np.zeros((n_steps, n), dtype=np.float32)

    def act(self, t: int) -> np.ndarray:
        actions, self._value_buf[t], self._log_prob_buf[t] = self.policy.act(self.obs)
        return actions

    def batch(self, rollout: Rollout, random_actions: bool) -> DiscreteRollout:
        """The rollout with each step's value and log-probability, V of the observation after the last step (None:
        not trained on) and the cuts (PPO makes its own targets); V's time is the policy's."""
        t1 = time.perf_counter()
        last_values = None if rollout.rewards is None or random_actions else self.policy.value(self.obs)
        rollout.act_s += time.perf_counter() - t1
        return DiscreteRollout(
            **vars(rollout), values=self._value_buf, log_probs=self._log_prob_buf, last_values=last_values,
            cuts=self.cuts())

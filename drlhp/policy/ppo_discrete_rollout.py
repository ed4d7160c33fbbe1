"""Discrete PPO's rollouts on drlhp's vector envs (envs.VecEnv: Atari, MovingDot, gymnasium's discrete envs): A2C's
rollout (drlhp.policy.rollout) with what PPO's update needs besides, each step's value and log-probability, V of
the observation after the last step, and where episode ends stop the returns.

As A2C's, the training reward of the whole rollout comes from the reward source in one call, on the observations
that follow each action as the predictor and the labeller see them (``env.predictor_view``); before the predictor's
first weights it is None and the rollout is not trained on (random play: uniform random actions, the paper's).
"""
from __future__ import annotations

import time

import numpy as np

from drlhp.policy.ppo_batches import DiscreteRollout
from drlhp.policy.ppo_discrete import DiscretePPOPolicy
from drlhp.policy.reward_source import RewardSource
from envs import EpisodeStats, VecEnv


class DiscreteRolloutCollector:
    """Steps ``env`` with a DiscretePPOPolicy for ``n_steps``. Its arrays are views of buffers reused by the next
    ``run()``: learn from a rollout before collecting the next. ``episode_ends``: an episode's end stops the
    returns (False: the envs are one continuing task, as the paper trained on the predictor's reward)."""

    def __init__(self, env: VecEnv, policy: DiscretePPOPolicy, reward_source: RewardSource, n_steps: int, seed: int,
                 episode_ends: bool = True):
        self.env, self.policy, self.reward_source = env, policy, reward_source
        self.n_steps, self.episode_ends = n_steps, episode_ends
        n = env.n_envs
        if n != policy.cfg.n_envs or n_steps != policy.cfg.n_steps:
            raise ValueError(f"the rollout is {n} envs x {n_steps} steps, the PPO config {policy.cfg.n_envs} x "
                             f"{policy.cfg.n_steps}")
        self._obs_buf = np.zeros((n_steps, n, *env.obs_shape), dtype=env.obs_dtype)
        self._next_obs_buf = np.zeros((n_steps, n, *env.obs_shape), dtype=env.obs_dtype)
        self._act_buf = np.zeros((n_steps, n), dtype=np.int32)
        self._value_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._log_prob_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._true_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._done_buf = np.zeros((n_steps, n), dtype=np.float32)
        self.obs = env.reset(seed)
        self._rng = np.random.default_rng(seed)

    def run(self, random_actions: bool = False) -> DiscreteRollout:
        """One rollout; ``random_actions``: uniform random actions instead of the policy's (not trained on)."""
        finished: list[EpisodeStats] = []
        env_s = act_s = 0.0
        for t in range(self.n_steps):
            t0 = time.perf_counter()
            if random_actions:
                actions = self._rng.integers(0, self.env.n_actions, self.env.n_envs, dtype=np.int32)
            else:
                actions, self._value_buf[t], self._log_prob_buf[t] = self.policy.act(self.obs)
            t1 = time.perf_counter()
            step = self.env.step(actions)
            t2 = time.perf_counter()
            act_s += t1 - t0
            env_s += t2 - t1
            self._obs_buf[t] = self.obs
            self._act_buf[t] = actions
            self._true_buf[t] = step.true_reward
            self._done_buf[t] = step.done  # truncation too: no bootstrap through it, as A2C and CleanRL
            finished.extend(step.finished)
            self._next_obs_buf[t] = step.outcome_obs
            self.obs = step.obs
        t0 = time.perf_counter()
        next_obs = self.env.predictor_view(self._next_obs_buf, inplace=True)
        rewards = self.reward_source.rewards(next_obs, self._true_buf)
        t1 = time.perf_counter()
        last_values = None if rewards is None or random_actions else self.policy.value(self.obs)
        t2 = time.perf_counter()
        b = self.n_steps * self.env.n_envs
        return DiscreteRollout(
            b_obs=self._obs_buf.reshape(b, *self.env.obs_shape), b_actions=self._act_buf.reshape(b), b_returns=None,
            rewards=rewards, true_rewards=self._true_buf.copy(), next_obs=next_obs, dones=self._done_buf.copy(),
            finished=finished, env_s=env_s, act_s=act_s + (t2 - t1), reward_s=t1 - t0,
            values=self._value_buf, log_probs=self._log_prob_buf, last_values=last_values,
            cuts=self._done_buf.copy() if self.episode_ends else np.zeros_like(self._done_buf))

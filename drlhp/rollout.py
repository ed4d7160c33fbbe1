"""The rollout runner: steps the vector env with the policy for n_steps and returns one batch.

The training reward of the whole rollout comes from the reward source in one call.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from drlhp.a2c import A2CPolicy, discounted_returns
from drlhp.reward_source import RewardSource
from envs import EpisodeStats, VecEnv


@dataclass
class Rollout:
    """One A2C batch, flattened time-major: B = n_steps * n_envs."""

    b_obs: np.ndarray  # (B, *obs_shape)
    b_actions: np.ndarray  # (B,) int32
    b_returns: np.ndarray  # (B,) float32, n-step returns of the training reward
    rewards: np.ndarray  # (T, N) training reward
    true_rewards: np.ndarray  # (T, N) true env reward
    finished: list[EpisodeStats] = field(default_factory=list)
    env_s: float = 0.0  # seconds stepping envs
    act_s: float = 0.0  # seconds in the policy's forward pass
    reward_s: float = 0.0  # seconds computing the training reward


class RolloutRunner:
    def __init__(self, env: VecEnv, policy: A2CPolicy, reward_source: RewardSource, n_steps: int,
                 gamma: float, seed: int):
        self.env, self.policy, self.reward_source = env, policy, reward_source
        self.n_steps, self.gamma = n_steps, gamma
        n = env.n_envs
        # The returned batch holds views of these buffers: consume it before the next run().
        self._obs_buf = np.zeros((n_steps, n, *env.obs_shape), dtype=env.obs_dtype)
        self._act_buf = np.zeros((n_steps, n), dtype=np.int32)
        self._true_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._done_buf = np.zeros((n_steps, n), dtype=np.float32)
        self.obs = env.reset(seed)

    def run(self) -> Rollout:
        finished: list[EpisodeStats] = []
        env_s = act_s = 0.0
        for t in range(self.n_steps):
            t0 = time.perf_counter()
            actions, _ = self.policy.act(self.obs)
            t1 = time.perf_counter()
            step = self.env.step(actions)
            t2 = time.perf_counter()
            act_s += t1 - t0
            env_s += t2 - t1
            self._obs_buf[t] = self.obs
            self._act_buf[t] = actions
            self._true_buf[t] = step.true_reward
            # Truncation is treated as an episode end (no bootstrap through it), as in baselines.
            self._done_buf[t] = step.done
            finished.extend(step.finished)
            self.obs = step.obs
        t0 = time.perf_counter()
        last_values = self.policy.value(self.obs)
        t1 = time.perf_counter()
        rewards = self.reward_source.rewards(self._obs_buf, self._true_buf)
        t2 = time.perf_counter()
        returns = discounted_returns(rewards, self._done_buf, last_values, self.gamma)
        b = self.n_steps * self.env.n_envs
        return Rollout(
            b_obs=self._obs_buf.reshape(b, *self.env.obs_shape),
            b_actions=self._act_buf.reshape(b),
            b_returns=returns.reshape(b),
            rewards=rewards,
            true_rewards=self._true_buf.copy(),
            finished=finished,
            env_s=env_s, act_s=act_s + (t1 - t0), reward_s=t2 - t1,
        )

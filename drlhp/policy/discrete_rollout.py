"""The rollout loop of the discrete-action algorithms (A2C's drlhp.policy.a2c.rollout, discrete PPO's
drlhp.policy.ppo.discrete_rollout): steps drlhp's vector env (envs.VecEnv) with the policy for n_steps and returns
one batch; what the policy keeps of each step (``act``) and what the batch holds besides (``batch``) are each
algorithm's.

The training reward of the whole rollout comes from the reward source in one call, on the
observations that FOLLOW each action (the newest frames show what the action did, e.g. the dot's
move), so reward t and what the predictor sees at t describe the same transition. Before that,
those observations become, in one call per rollout, what the predictor and the labeller may see
(``env.predictor_view``: on Atari the score blanked, ``envs/score_blanking.py``; a vector env's
float observations as one byte per component, ``envs/gym_vec_env.py``); the policy's own
observations keep everything. A reward source with nothing to give yet (the predictor before its
first weights) returns None: the rollout then has no rewards and no returns, and is not trained on.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from drlhp.config import RunConfig
from drlhp.policy.reward_source import RewardSource
from envs import EpisodeStats, VecEnv


@dataclass
class Rollout:
    """One rollout, flattened time-major where an update takes it whole: B = n_steps * n_envs."""

    b_obs: np.ndarray  # (B, *obs_shape)
    b_actions: np.ndarray  # (B,) int32
    rewards: np.ndarray | None  # (T, N) training reward (None: the reward source has none yet)
    true_rewards: np.ndarray  # (T, N) true env reward
    next_obs: np.ndarray  # (T, N, *obs_shape) uint8: the observation step t led to (for a finished episode
    #                       its last one, not the next episode's first) as the predictor and the labeller
    #                       see it (env.predictor_view: Atari's score blanked, a vector as bytes); may be a
    #                       view of a reused buffer
    dones: np.ndarray  # (T, N) float32: the episode ended at this step
    finished: list[EpisodeStats] = field(default_factory=list)
    env_s: float = 0.0  # seconds stepping envs
    act_s: float = 0.0  # seconds in the policy's forward pass
    reward_s: float = 0.0  # seconds computing the training reward


def episode_ends_for(cfg: RunConfig, reward_source: RewardSource) -> bool:
    """Whether episode ends stop the returns (A2CConfig.episode_ends, both discrete algorithms'): "auto" is yes with
    the env's reward, no with the predictor's (the paper's single continuing episode)."""
    if cfg.a2c.episode_ends == "auto":
        return reward_source.name != "predicted"
    return cfg.a2c.episode_ends == "on"


class RolloutRunner:
    """The loop of the discrete algorithms' rollouts; each subclasses it (A2C's drlhp.policy.a2c.rollout.A2CRunner,
    discrete PPO's drlhp.policy.ppo.discrete_rollout.DiscreteRolloutCollector) for what the policy keeps of each
    step (``act``) and what the batch holds besides (``batch``). Random play (``run(random_actions=True)``) needs
    neither, nor a policy."""

    def __init__(self, env: VecEnv, policy, reward_source: RewardSource, n_steps: int, seed: int,
                 episode_ends: bool = True):
        """``episode_ends``: an episode's end stops the returns (False: the envs are one continuing
        task, as the paper trained on the predictor's reward; the value bootstraps through resets)."""
        self.env, self.policy, self.reward_source = env, policy, reward_source
        self.n_steps, self.episode_ends = n_steps, episode_ends
        n = env.n_envs
        # The returned batch holds views of these buffers: consume it before the next run().
        self._obs_buf = np.zeros((n_steps, n, *env.obs_shape), dtype=env.obs_dtype)
        self._next_obs_buf = np.zeros((n_steps, n, *env.obs_shape), dtype=env.obs_dtype)
        self._act_buf = np.zeros((n_steps, n), dtype=np.int32)
        self._true_buf = np.zeros((n_steps, n), dtype=np.float32)
        self._done_buf = np.zeros((n_steps, n), dtype=np.float32)
        self.obs = env.reset(seed)
        self._rng = np.random.default_rng(seed)

    def act(self, t: int) -> np.ndarray:
        """The policy's actions at step ``t`` (on ``self.obs``), and what the algorithm keeps of them."""
        raise NotImplementedError

    def run(self, random_actions: bool = False) -> Rollout:
        """One rollout; ``random_actions``: uniform random actions instead of the policy's."""
        finished: list[EpisodeStats] = []
        env_s = act_s = 0.0
        for t in range(self.n_steps):
            t0 = time.perf_counter()
            if random_actions:
                actions = self._rng.integers(0, self.env.n_actions, self.env.n_envs, dtype=np.int32)
            else:
                actions = self.act(t)
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
            self._next_obs_buf[t] = step.outcome_obs
            self.obs = step.obs
        t0 = time.perf_counter()
        # a buffer of its own (b_obs keeps the score); a vector env returns a new uint8 array
        next_obs = self.env.predictor_view(self._next_obs_buf, inplace=True)
        rewards = self.reward_source.rewards(next_obs, self._true_buf)
        t1 = time.perf_counter()
        b = self.n_steps * self.env.n_envs
        rollout = Rollout(
            b_obs=self._obs_buf.reshape(b, *self.env.obs_shape),
            b_actions=self._act_buf.reshape(b),
            rewards=rewards,
            true_rewards=self._true_buf.copy(),
            next_obs=next_obs,
            dones=self._done_buf.copy(),
            finished=finished,
            env_s=env_s, act_s=act_s, reward_s=t1 - t0,
        )
        return self.batch(rollout, random_actions)

    def cuts(self) -> np.ndarray:
        """(T, N) float32, 1 where an episode's end stops the returns: the rollout's dones, or 0 everywhere where
        the envs are one continuing task (``episode_ends`` False)."""
        return self._done_buf.copy() if self.episode_ends else np.zeros_like(self._done_buf)

    def batch(self, rollout: Rollout, random_actions: bool) -> Rollout:
        """The rollout with what the algorithm's update needs besides (A2C: the n-step returns); the time that takes
        is the policy's (``act_s``)."""
        return rollout

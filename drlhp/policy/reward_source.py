"""Where the policy's training reward comes from.

A reward source turns one rollout into training rewards, in ONE batch per rollout:
    rewards(next_obs (T, N, ...) uint8 or float32, true_rewards (T, N) float32) -> (T, N) float32
      (next_obs[t]: the observation after action t, which shows what the action did)
    ready() -> bool: whether it can give rewards now (the predictor: once its first weights arrived)
Sources: the environment's reward clipped to its sign (DQN/A2C convention) or as it comes (PPO's on Box
actions), and the reward predictor's normalized output (PredictedReward), computed by the policy process from
the newest published weights.
"""
from __future__ import annotations

import numpy as np


class RewardSource:
    name = "base"
    version = 0  # of the weights in use, where there are weights

    def ready(self) -> bool:
        return True

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray | None:
        raise NotImplementedError

    def state(self) -> dict:
        """What a policy checkpoint keeps of this source (numbers only: JSON), for restore() on resume."""
        return {}

    def restore(self, state: dict) -> None:
        pass


class ClippedEnvReward(RewardSource):
    """sign(r): +1, 0 or -1 per step, as in DQN and A2C on Atari."""

    name = "env_clipped"

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray:
        return np.sign(true_rewards).astype(np.float32)


class EnvReward(RewardSource):
    """The env's reward as the trainer hands it over, unchanged: PPO on a Box-action env's own reward (PPOTrainer.play:
    the env's own, the control cost and any fall penalty in it, or with --no-ppo_control_cost the same without the
    control cost, info["reward_task"]: the paper's tasks, A.1). PPOPolicy scales it itself."""

    name = "env"

    def rewards(self, obs, true_rewards: np.ndarray) -> np.ndarray:
        return true_rewards


class ScaledEnvReward(RewardSource):
    """sign(r) delivered the way the predictor's reward is: its running mean removed and its running
    standard deviation scaled to ``norm_std`` (RewardConfig.norm_std, paper 0.05). For experiments that
    separate "the learned reward is wrong" from "the preference path's delivery hurts A2C"
    (docs/results/pong.md, issue 12's E3): with ``--episode_ends off`` this is the true reward as the
    policy would get it from a perfect predictor."""

    name = "env_scaled"

    def __init__(self, norm_std: float = 0.05):
        self.norm_std = norm_std
        self.count, self.total, self.total_sq = 0, 0.0, 0.0

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray:
        r = np.sign(true_rewards).astype(np.float64)
        self.count += r.size
        self.total += float(r.sum())
        self.total_sq += float((r * r).sum())
        mean = self.total / self.count
        std = max((self.total_sq / self.count - mean * mean) ** 0.5, 1e-3)
        return ((r - mean) * (self.norm_std / std)).astype(np.float32)


class PredictedReward(RewardSource):
    """The reward predictor ensemble's reward: each member normalized with its published statistics,
    then averaged (drlhp.reward.model). New weights are pulled, without blocking, before each
    rollout's rewards; ``weights_to_policy`` is the predictor's channel (a LatestValue), or None for fixed
    weights. ``obs_dtype``: the predictor's input, uint8 or float32 (a Box-action env's (D,) vectors)."""

    name = "predicted"

    def __init__(self, obs_shape: tuple, cfg, seed: int, weights_to_policy=None, weights=None, obs_dtype=np.uint8):
        from drlhp.reward.model import RewardEnsemble

        self.ensemble = RewardEnsemble(obs_shape, cfg, seed, obs_dtype)
        self.channel = weights_to_policy
        self.weights = None  # the RewardWeights in use (a milestone keeps a copy)
        self.center_steps = getattr(cfg, "center_steps", 0)  # RewardConfig.center_steps
        self.offset = None  # the running mean removed (--reward_center_steps), None until the first rollout
        self.center_rollouts = 0  # rollouts in that mean (a checkpoint keeps both: state(), restore())
        # the centring starts after this many agent steps (--reward_center_from_million_timesteps); the steps
        # rewarded so far are counted here and kept in checkpoints with the mean
        self.center_from = round(getattr(cfg, "center_from_million_timesteps", 0.0) * 1e6)
        self.steps_rewarded = 0
        if weights is not None:
            self._load(weights)

    def _load(self, weights) -> None:
        self.ensemble.load_weights(weights)
        self.weights = weights

    @property
    def clipped_share(self) -> float:
        """The share of (member, step) values --reward_clip cut in the last rollout's rewards."""
        return self.ensemble.norm.clipped_share

    @property
    def version(self) -> int:
        return self.ensemble.version

    def _pull(self) -> None:
        weights = self.channel.poll() if self.channel is not None else None
        if weights is not None:
            self._load(weights)

    def ready(self) -> bool:
        self._pull()
        return self.ensemble.version > 0

    def rewards(self, obs: np.ndarray, true_rewards: np.ndarray) -> np.ndarray | None:
        self._pull()
        if self.ensemble.version == 0:
            return None
        t, n = obs.shape[:2]
        r = self.ensemble.reward(obs.reshape(t * n, *obs.shape[2:])).reshape(t, n)
        self.steps_rewarded += t * n
        if self.center_steps and self.steps_rewarded > self.center_from:
            r = self._centred(r)
        return r

    def _centred(self, r: np.ndarray) -> np.ndarray:
        """``r`` less the running mean of the rewards of this and earlier rollouts: the mean of all of them
        until they span center_steps agent steps, then an exponential average over about that many (this
        rollout's weight: its steps / center_steps, 4% for Pong's 80 of 2,000)."""
        self.center_rollouts += 1
        w = min(1.0, max(r.size / self.center_steps, 1.0 / self.center_rollouts))
        m = float(r.mean())
        self.offset = m if self.offset is None else (1.0 - w) * self.offset + w * m
        return (r - self.offset).astype(np.float32)

    def state(self) -> dict:
        out = {"steps_rewarded": self.steps_rewarded} if self.center_from else {}
        if self.offset is not None:
            out.update(center_offset=self.offset, center_rollouts=self.center_rollouts)
        return out

    def restore(self, state: dict) -> None:
        if "center_offset" in state:
            self.offset, self.center_rollouts = float(state["center_offset"]), int(state["center_rollouts"])
        self.steps_rewarded = int(state.get("steps_rewarded", self.steps_rewarded))

"""A MuJoCo PPO run's final policy replayed as it played in training, in numpy alone (no TensorFlow): the
Gaussian's mean (drlhp.policy.ppo.numpy_policy.BoxMeanPolicy) plus its learned, state-independent spread times N(0, 1),
clipped to the action box; or the mean alone (``deterministic``). Shared by mujoco_replay_returns.py and
halfcheetah_pose.py, which differ only in what they read of each step.

    policy = ReplayPolicy(run_dir, env)                      # ValueError where the checkpoint does not fit the env
    for reward, info, ended in replay_steps(env, policy, episodes=10, seed=100):
        ...                                                  # ended: the step that finished an episode
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drlhp.policy.checkpoint import load_policy_checkpoint  # noqa: E402
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy  # noqa: E402


class ReplayPolicy:
    """A run's final PPO checkpoint on ``env``'s spaces: ``act(obs, rng)`` samples as training did; ``std`` the
    learned spread (exp of the log std, weight_12); ``timesteps`` the checkpoint's; ``config`` the run's config.json."""

    def __init__(self, run_dir: str | Path, env, deterministic: bool = False):
        self.config = json.loads((Path(run_dir) / "config.json").read_text())
        arrays, meta = load_policy_checkpoint(str(run_dir))
        space = env.action_space
        self.mean = BoxMeanPolicy(arrays, env.observation_space.shape[0], space.low, space.high,
                                  self.config["ppo"]["obs_clip"])
        self.std = np.exp(np.asarray(arrays["weight_12"], np.float64))
        self.spread = 0.0 if deterministic else self.std
        self.timesteps = meta.get("timesteps")

    def act(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        from drlhp.policy.ppo.numpy_policy import tanh_mlp

        x = self.mean.obs_rms.normalize(obs[None], self.mean.obs_clip).astype(np.float32)
        noise = self.spread * rng.standard_normal(self.std.shape)  # drawn either way: one stream for both modes
        return np.clip(tanh_mlp(self.mean.actor, x)[0] + noise, self.mean.low, self.mean.high)


def replay_steps(env, policy: ReplayPolicy, episodes: int, seed: int):
    """Yields (reward, info, ended) for every step of ``episodes`` episodes of ``env`` (reset with ``seed`` first,
    then as it comes), the policy acting with its own generator seeded by ``seed``; the env is not closed."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    done = 0
    while done < episodes:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs, rng))
        ended = bool(terminated or truncated)
        yield float(reward), info, ended
        if ended:
            done += 1
            obs, _ = env.reset()

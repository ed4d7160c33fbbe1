"""PPO's networks (drlhp.policy.ppo.network: two tanh layers, then a linear output) as numpy, the forward pass acting
runs: PPOPolicy acts on a numpy copy of its weights (``tanh_mlp``), and watch plays a checkpoint by its mean without
TensorFlow (``BoxMeanPolicy``), which must not be loaded beside MuJoCo's EGL context (drlhp.run.modes.watch)."""
from __future__ import annotations

import numpy as np

from drlhp.policy.running_norm import RunningMeanStd


def tanh_mlp(weights: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """The output of a two-tanh-layer MLP given as [w0, b0, w1, b1, w2, b2] (Keras' get_weights order)."""
    w0, b0, w1, b1, w2, b2 = weights
    return np.tanh(np.tanh(x @ w0 + b0) @ w1 + b1) @ w2 + b2


class BoxMeanPolicy:
    """A PPO checkpoint's policy acting by its Gaussian's mean, in numpy alone, as PPOPolicy acts: watch renders
    MuJoCo by EGL, and TensorFlow loaded in the same process with an EGL context crashes it (a segmentation
    fault, either order, on this machine: 2026-11-26). ValueError where the checkpoint does not fit the env."""

    def __init__(self, arrays: dict, obs_dim: int, low, high, obs_clip: float):
        self.actor = [np.asarray(arrays[f"weight_{i}"], np.float32) for i in range(6)]  # 2 tanh layers, the mean
        if self.actor[0].shape[0] != obs_dim or self.actor[-1].shape[0] != np.shape(low)[0]:
            raise ValueError(f"its network maps {self.actor[0].shape[0]} observations to {self.actor[-1].shape[0]} "
                             f"actions, the env has {obs_dim} and {np.shape(low)[0]}")
        self.obs_rms = RunningMeanStd((obs_dim,))
        self.obs_rms.restore({k[8:]: v for k, v in arrays.items() if k.startswith("obs_rms_")})
        self.low, self.high, self.obs_clip = low, high, obs_clip

    def act_deterministic(self, obs: np.ndarray) -> np.ndarray:
        x = self.obs_rms.normalize(obs, self.obs_clip).astype(np.float32)
        return np.clip(tanh_mlp(self.actor, x), self.low, self.high)

"""PPO's networks (drlhp.policy.ppo.network: two tanh layers, then a linear output) as numpy, the forward pass
acting runs: PPOPolicy acts on a numpy copy of its weights, and watch's BoxMeanPolicy must not load TensorFlow
beside MuJoCo's EGL context (drlhp.policy.watch)."""
from __future__ import annotations

import numpy as np


def tanh_mlp(weights: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """The output of a two-tanh-layer MLP given as [w0, b0, w1, b1, w2, b2] (Keras' get_weights order)."""
    w0, b0, w1, b1, w2, b2 = weights
    return np.tanh(np.tanh(x @ w0 + b0) @ w1 + b1) @ w2 + b2

"""PPO's networks for continuous actions: a Gaussian policy's mean and a separate state value, each an MLP of
two tanh layers of 64 (CleanRL's ppo_continuous_action, SB3's MlpPolicy for MuJoCo), and a log std per
action dimension that does not depend on the state.

Orthogonal initialization (as OpenAI baselines, CleanRL, SB3): gain sqrt 2 for the hidden layers, 0.01 for the
mean's output (the first actions are near 0, spread by the std alone), 1 for the value's output; biases 0.
The networks take observations ALREADY normalized (drlhp.policy.running_norm, float32).
"""
from __future__ import annotations

import math

import keras
from keras import layers


def _ortho(gain: float, seed: int):
    return keras.initializers.Orthogonal(gain=gain, seed=seed)


def mlp(obs_dim: int, out_dim: int, out_gain: float, seed: int, hidden: int = 64, name: str = "mlp") -> keras.Model:
    """obs (B, obs_dim) float32 -> (B, out_dim): two tanh layers of ``hidden`` units, then a linear layer."""
    obs = keras.Input(shape=(obs_dim,), dtype="float32", name="obs")
    x = layers.Dense(hidden, activation="tanh", kernel_initializer=_ortho(math.sqrt(2), seed))(obs)
    x = layers.Dense(hidden, activation="tanh", kernel_initializer=_ortho(math.sqrt(2), seed + 1))(x)
    out = layers.Dense(out_dim, kernel_initializer=_ortho(out_gain, seed + 2))(x)
    return keras.Model(obs, out, name=name)


def actor_mean(obs_dim: int, act_dim: int, seed: int, hidden: int = 64) -> keras.Model:
    """The Gaussian policy's mean, (B, act_dim)."""
    return mlp(obs_dim, act_dim, 0.01, seed, hidden, name="actor_mean")


def critic(obs_dim: int, seed: int, hidden: int = 64) -> keras.Model:
    """The state value, (B, 1) (callers take [:, 0])."""
    return mlp(obs_dim, 1, 1.0, seed + 100, hidden, name="critic")

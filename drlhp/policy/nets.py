"""The discrete-action policies' networks (A2C's and discrete PPO's): the Nature CNN for image observations, an MLP
for vector observations.

Both take the raw observation (uint8 images) and normalize INSIDE the graph (uint8 -> [0, 1]), so no
caller can forget to: an unnormalized input cost the original reproduction months.
Outputs: action logits (B, n_actions) and the state value (B,).
"""
from __future__ import annotations

import math

import keras
from keras import layers

OBS_SCALE = 1.0 / 255.0


def _ortho(gain: float, seed: int):
    return keras.initializers.Orthogonal(gain=gain, seed=seed)


def nature_cnn_policy(obs_shape: tuple, n_actions: int, seed: int, bfloat16: bool = False) -> keras.Model:
    """Mnih et al. (2015): conv 32x8x8/4, 64x4x4/2, 64x3x3/1, dense 512, ReLU; orthogonal init
    (gain sqrt 2; 0.01 for the policy head, 1 for the value head) as in OpenAI baselines.
    ``bfloat16``: the torso (the 3 convolutions and the dense 512: all but 0.1% of the FLOPs) computes in bfloat16
    (Keras's mixed_bfloat16): the weights stay float32 (so do the optimizer's state and checkpoints), the heads, the
    loss and its gradients' sums compute in float32, as the reward predictor's --reward_bfloat16."""
    g = math.sqrt(2)
    torso = {"dtype": "mixed_bfloat16"} if bfloat16 else {}
    obs = keras.Input(shape=obs_shape, dtype="uint8", name="obs")
    x = layers.Rescaling(OBS_SCALE, dtype="float32")(obs)
    x = layers.Conv2D(32, 8, strides=4, activation="relu", kernel_initializer=_ortho(g, seed), **torso)(x)
    x = layers.Conv2D(64, 4, strides=2, activation="relu", kernel_initializer=_ortho(g, seed + 1), **torso)(x)
    x = layers.Conv2D(64, 3, strides=1, activation="relu", kernel_initializer=_ortho(g, seed + 2), **torso)(x)
    x = layers.Flatten(**torso)(x)
    x = layers.Dense(512, activation="relu", kernel_initializer=_ortho(g, seed + 3), **torso)(x)
    return _heads(obs, x, n_actions, seed)


def mlp_policy(obs_shape: tuple, n_actions: int, seed: int, hidden: int = 64,
               obs_dtype: str = "float32") -> keras.Model:
    """Two tanh layers of 64 units (baselines' default MLP) for vector observations, taken as they
    come (no env in drlhp has vector observations yet; one that needs scaling should bring it)."""
    g = math.sqrt(2)
    obs = keras.Input(shape=obs_shape, dtype=obs_dtype, name="obs")
    x = layers.Identity(dtype="float32")(obs)
    x = layers.Dense(hidden, activation="tanh", kernel_initializer=_ortho(g, seed))(x)
    x = layers.Dense(hidden, activation="tanh", kernel_initializer=_ortho(g, seed + 1))(x)
    return _heads(obs, x, n_actions, seed)


def _heads(obs, features, n_actions: int, seed: int) -> keras.Model:
    """The policy's logits and the value, in float32 whatever the torso computes in."""
    logits = layers.Dense(n_actions, kernel_initializer=_ortho(0.01, seed + 10), name="logits",
                          dtype="float32")(features)
    value = layers.Dense(1, kernel_initializer=_ortho(1.0, seed + 11), name="value", dtype="float32")(features)
    value = layers.Reshape(())(value)
    return keras.Model(obs, [logits, value])


def policy_network(obs_shape: tuple, n_actions: int, seed: int, obs_dtype: str = "uint8",
                   bfloat16: bool = False) -> keras.Model:
    """The Nature CNN for (H, W, C) uint8 images (its torso in bfloat16 where ``bfloat16``), the MLP for flat
    vectors (float32 always: its FLOPs are few)."""
    if len(obs_shape) == 3:
        if obs_dtype != "uint8":
            raise ValueError(f"image observations must be uint8, got {obs_dtype}")
        return nature_cnn_policy(obs_shape, n_actions, seed, bfloat16)
    if len(obs_shape) == 1:
        return mlp_policy(obs_shape, n_actions, seed, obs_dtype=obs_dtype)
    raise ValueError(f"no policy network for observations of shape {obs_shape}")

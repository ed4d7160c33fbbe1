"""The reward predictor's networks, one per member of the ensemble (drlhp.reward.model): r(o) -> one reward per step.

* uint8 images (H, W, C): the paper's CNN for Atari (Christiano et al. 2017, appendix A.2), observations
  scaled by 1/255;
* uint8 vectors (D,) (CartPole's quantized bytes, envs.gym_vec_env): scaled by 1/255, two dense layers of 64;
* float32 vectors (D,) (a Box-action env's observation and action, issue 29): the paper's MLP for MuJoCo
  (appendix A.1): the input normalized per feature (``InputNorm``: mean and standard deviation held as
  non-trainable weights, so that they travel with the weights in RewardWeights and checkpoints; set by
  RewardEnsemble.set_input_norm), then two dense layers of 64 with leaky ReLU (0.01), dropout per
  RewardConfig after each, no batch norm.

Every network ends in a small output layer (RandomNormal 0.01, see ``reward_network``).
"""
from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from keras import layers

OBS_SCALE = 1.0 / 255.0
INPUT_STD_FLOOR = 1e-3  # set_input_norm's smallest std: a feature (nearly) constant so far is not blown up
INPUT_CLIP = 10.0  # normalized inputs are clipped to +-10 standard deviations (as SB3's VecNormalize clips)


class InputNorm(layers.Layer):
    """x -> clip((x - mean) / std, -INPUT_CLIP, INPUT_CLIP) per feature; mean and std are non-trainable
    weights (0 and 1 until set), so ``get_weights``/``set_weights`` carry them with the rest."""

    def __init__(self, dim: int, **kwargs):
        super().__init__(**kwargs)
        self.dim = int(dim)
        self.mean = self.add_weight(shape=(self.dim,), initializer="zeros", trainable=False, name="mean")
        self.std = self.add_weight(shape=(self.dim,), initializer="ones", trainable=False, name="std")

    def call(self, x):
        return tf.clip_by_value((x - self.mean) / self.std, -INPUT_CLIP, INPUT_CLIP)

    def set(self, mean: np.ndarray, std: np.ndarray, follow: layers.Dense | None = None) -> None:
        """New statistics. With ``follow`` (the Dense layer this one feeds), that layer's kernel and bias are
        rescaled so that the network computes the same function as before wherever no input is clipped: a
        set then changes what the input layer sees, never the reward the policy is paid (a trained member's
        reward jumped at each set otherwise; docs/results/mujoco.md, session 15)."""
        mean = np.asarray(mean, np.float32)
        std = np.maximum(np.asarray(std, np.float32), INPUT_STD_FLOOR)
        if follow is not None:
            old_mean, old_std = self.mean.numpy(), self.std.numpy()
            kernel, bias = follow.kernel.numpy(), follow.bias.numpy()
            # (x - m0) / s0 = z * s1 / s0 + (m1 - m0) / s0 with z = (x - m1) / s1
            follow.bias.assign(bias + ((mean - old_mean) / old_std) @ kernel)
            follow.kernel.assign(kernel * (std / old_std)[:, None])
        self.mean.assign(mean)
        self.std.assign(std)

    def get_config(self):
        return {**super().get_config(), "dim": self.dim}


class PairedDropout(layers.Layer):
    """Dropout whose input is [segment-1 frames; segment-2 frames] on the batch axis (two equal
    halves): one mask is drawn for the first half and used for both."""

    def __init__(self, rate: float, seed: int, **kwargs):
        super().__init__(**kwargs)
        self.rate = rate
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, x, training=False):
        if not training or self.rate == 0:
            return x
        half = tf.shape(x)[0] // 2
        shape = tf.concat([[half], tf.shape(x)[1:]], axis=0)
        keep = tf.cast(keras.random.uniform(shape, seed=self.seed_generator) >= self.rate, x.dtype)
        mask = tf.concat([keep, keep], axis=0) / (1.0 - self.rate)
        return x * mask


def reward_network(obs_shape: tuple, seed: int, dropout: float, batchnorm: bool = True,
                   dropout_layers: int = 4, bfloat16: bool = False, obs_dtype=np.uint8) -> keras.Model:
    """One member: a batch of single observations (B, *obs_shape) -> rewards (B,). Dropout follows the
    first ``dropout_layers`` of the 4 convolutions (the paper: all 4; the original reproduction: 3).
    ``bfloat16``: the 4 convolutions (nearly all the FLOPs) compute in bfloat16 (Keras's mixed_bfloat16:
    weights, the dense layers, the loss and its gradients stay float32), about 1.45x faster per training step
    where the CPU has AVX512_BF16 or AMX (docs/results/speed.md, session 9), slower elsewhere. bfloat16 keeps 8 bits
    of mantissa: a trained predictor whose raw output carries a large offset through its features (Pong's:
    about 40 against a spread of 0.13) may lose much of its spread to rounding; check before relying on it."""
    if np.dtype(obs_dtype) == np.float32:
        return _float_mlp(obs_shape, seed, dropout, dropout_layers)
    hidden = {"dtype": "mixed_bfloat16"} if bfloat16 else {}
    obs = keras.Input(shape=obs_shape, dtype="uint8", name="obs")
    x = layers.Rescaling(OBS_SCALE, dtype="float32")(obs)  # observations normalized here, always
    if len(obs_shape) == 3:
        for i, (size, stride) in enumerate(((7, 3), (5, 2), (3, 1), (3, 1))):
            x = layers.Conv2D(16, size, strides=stride,
                              kernel_initializer=keras.initializers.GlorotUniform(seed + i), **hidden)(x)
            if batchnorm:
                x = layers.BatchNormalization(**hidden)(x)
            x = layers.LeakyReLU(negative_slope=0.01, **hidden)(x)
            if i < dropout_layers:
                x = PairedDropout(dropout, seed=seed + 100 + i, **hidden)(x)
        x = layers.Flatten()(x)
    elif len(obs_shape) != 1:
        raise ValueError(f"no reward network for observations of shape {obs_shape}")
    x = layers.Dense(64, kernel_initializer=keras.initializers.GlorotUniform(seed + 10))(x)
    x = layers.LeakyReLU(negative_slope=0.01)(x)
    if len(obs_shape) == 1:
        x = layers.Dense(64, kernel_initializer=keras.initializers.GlorotUniform(seed + 11))(x)
        x = layers.LeakyReLU(negative_slope=0.01)(x)
    return keras.Model(obs, _small_output(x, seed))


def _small_output(x, seed: int):
    """A small output layer: summed over a segment, Glorot-sized rewards start far from indifference,
    where the 10% random-answer term flattens the loss and a confidently wrong pair gets almost no
    gradient (measured on MovingDot: no learning in 1,000 steps with Glorot; see tests)."""
    r = layers.Dense(1, kernel_initializer=keras.initializers.RandomNormal(stddev=0.01, seed=seed + 12),
                     dtype="float32")(x)
    return layers.Reshape(())(r)


def _float_mlp(obs_shape: tuple, seed: int, dropout: float, dropout_layers: int) -> keras.Model:
    """The paper's MLP on float32 (D,) inputs (module docstring); dropout follows the first ``dropout_layers``
    of the 2 hidden layers (none where ``dropout`` is 0)."""
    if len(obs_shape) != 1:
        raise ValueError(f"no reward network for float32 observations of shape {obs_shape}: want (D,)")
    obs = keras.Input(shape=obs_shape, dtype="float32", name="obs")
    x = InputNorm(obs_shape[0], name="input_norm")(obs)
    for i in range(2):
        x = layers.Dense(64, kernel_initializer=keras.initializers.GlorotUniform(seed + 10 + i))(x)
        x = layers.LeakyReLU(negative_slope=0.01)(x)
        if i < dropout_layers and dropout > 0:
            x = PairedDropout(dropout, seed=seed + 100 + i)(x)
    return keras.Model(obs, _small_output(x, seed))

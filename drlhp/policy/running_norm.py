"""Running normalization for PPO, in plain numpy: observations by their running mean and std, the reward the
policy is paid by the running std of its discounted return.

    RunningMeanStd   mean and variance of everything seen so far, merged batch by batch (Chan et al.'s parallel
                     algorithm, as Stable-Baselines3's RunningMeanStd): exact, not an exponential average
    RewardScaler     r_t / std(R), R_t = gamma * R_{t-1} + r_t per env (reset at an episode's end): the reward
                     scaling of Engstrom et al. (2020), gymnasium's NormalizeReward, SB3's VecNormalize

Each has ``state()`` -> dict of numpy arrays and ``restore(state)``: what a checkpoint keeps (no pickle); and a
PCG64 generator's state as 6 uint64 (``rng_state`` / ``set_rng_state``), for the same checkpoints.
"""
from __future__ import annotations

import numpy as np


class RunningMeanStd:
    """Running mean and (population) variance of vectors of ``shape``, over every batch given to ``update``.

    ``count`` starts at a tiny epsilon (as SB3's) so that the first batch's statistics take over at once
    and a normalization before any update divides by sqrt(1 + eps), not zero.
    """

    def __init__(self, shape: tuple = (), epsilon: float = 1e-4):
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = float(epsilon)

    def update(self, batch: np.ndarray) -> None:
        """Merge a batch (B, *shape) into the statistics."""
        batch = np.asarray(batch, np.float64)
        self.update_from_moments(batch.mean(axis=0), batch.var(axis=0), batch.shape[0])

    def update_from_moments(self, batch_mean, batch_var, batch_count: int) -> None:
        delta = batch_mean - self.mean
        total = self.count + batch_count
        self.mean = self.mean + delta * batch_count / total
        m2 = self.var * self.count + batch_var * batch_count + np.square(delta) * self.count * batch_count / total
        self.var = m2 / total
        self.count = total

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var + 1e-8)

    def normalize(self, x: np.ndarray, clip: float | None = None) -> np.ndarray:
        """(x - mean) / std as float32, clipped to [-clip, clip] if given."""
        out = (np.asarray(x, np.float64) - self.mean) / self.std
        if clip is not None:
            out = np.clip(out, -clip, clip)
        return out.astype(np.float32)

    def state(self) -> dict[str, np.ndarray]:
        return {"mean": np.array(self.mean, np.float64), "var": np.array(self.var, np.float64),
                "count": np.array(self.count, np.float64)}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        mean, var = np.asarray(state["mean"], np.float64), np.asarray(state["var"], np.float64)
        if mean.shape != self.mean.shape or var.shape != self.var.shape:
            raise ValueError(f"running statistics of shape {mean.shape} do not fit {self.mean.shape}")
        self.mean, self.var, self.count = mean.copy(), var.copy(), float(state["count"])


class RewardScaler:
    """Divides each env's reward by the running std of that env's discounted return (the mean is not removed:
    the sign of a reward is kept). ``scale`` takes a whole rollout, time first, and walks it step by step,
    so the result is the same as scaling each step as it came."""

    def __init__(self, n_envs: int, gamma: float, clip: float | None = 10.0):
        self.gamma, self.clip = float(gamma), clip
        self.returns = np.zeros(n_envs, np.float64)  # each env's discounted return so far in its episode
        self.rms = RunningMeanStd(())

    def scale(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        """rewards, dones: (T, n_envs); ``dones[t]``: the episode ended at step t. Returns float32 (T, n_envs)."""
        rewards = np.asarray(rewards, np.float64)
        out = np.empty(rewards.shape, np.float32)
        for t in range(rewards.shape[0]):
            self.returns = self.returns * self.gamma + rewards[t]
            self.rms.update(self.returns)
            out[t] = rewards[t] / self.rms.std
            self.returns[np.asarray(dones[t], bool)] = 0.0
        if self.clip is not None:
            np.clip(out, -self.clip, self.clip, out=out)
        return out

    def state(self) -> dict[str, np.ndarray]:
        return {"returns": np.array(self.returns, np.float64), **{f"rms_{k}": v for k, v in self.rms.state().items()}}

    def restore(self, state: dict[str, np.ndarray]) -> None:
        returns = np.asarray(state["returns"], np.float64)
        if returns.shape != self.returns.shape:
            raise ValueError(f"discounted returns of {returns.shape[0]} envs do not fit {self.returns.shape[0]}")
        self.returns = returns.copy()
        self.rms.restore({k[4:]: v for k, v in state.items() if k.startswith("rms_")})


def rng_state(rng: np.random.Generator) -> np.ndarray:
    """A PCG64 generator's state as 6 uint64: its 128-bit state and increment (high then low halves), and its
    buffered 32-bit draw (has_uint32, uinteger)."""
    full = rng.bit_generator.state
    st, mask = full["state"], (1 << 64) - 1
    return np.array([st["state"] >> 64, st["state"] & mask, st["inc"] >> 64, st["inc"] & mask,
                     full["has_uint32"], full["uinteger"]], np.uint64)


def set_rng_state(rng: np.random.Generator, arr: np.ndarray) -> None:
    """Puts back a state that ``rng_state`` gave."""
    hi_s, lo_s, hi_i, lo_i, has_uint32, uinteger = (int(x) for x in np.asarray(arr, np.uint64))
    state = rng.bit_generator.state
    state["state"] = {"state": (hi_s << 64) | lo_s, "inc": (hi_i << 64) | lo_i}
    state["has_uint32"], state["uinteger"] = has_uint32, uinteger
    rng.bit_generator.state = state

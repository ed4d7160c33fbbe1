"""Frame stacking on the last axis, as the Atari preprocessing does: (H, W, 1) -> (H, W, N_STACK)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np

N_STACK = 4  # frames per observation, DQN/A2C convention (Mnih et al., 2015)


class StackFrames(gym.Wrapper):
    """Keeps the last ``n_stack`` single-channel frames, oldest first; reset repeats the first frame."""

    def __init__(self, env: gym.Env, n_stack: int = N_STACK):
        super().__init__(env)
        h, w, c = env.observation_space.shape
        if c != 1:
            raise ValueError(f"StackFrames wants single-channel frames, got shape {env.observation_space.shape}")
        self.n_stack = n_stack
        self.observation_space = gym.spaces.Box(0, 255, (h, w, n_stack), np.uint8)
        self._stack = np.zeros((h, w, n_stack), dtype=np.uint8)

    def reset(self, **kwargs):
        frame, info = self.env.reset(**kwargs)
        self._stack = np.repeat(frame, self.n_stack, axis=-1)
        return self._stack, info

    def step(self, action):
        frame, reward, terminated, truncated, info = self.env.step(action)
        self._stack = np.concatenate([self._stack[..., 1:], frame], axis=-1)
        return self._stack, reward, terminated, truncated, info

"""MovingDot: a 3x3 white dot on an 84x84 black frame that should be moved to the centre.

A tiny image task for end-to-end tests: it learns in minutes on 2 cores, and the reward depends
on motion (is the dot getting closer?), so a reward predictor must see stacked frames.

Registered ids (``envs/__init__.py``), all with the same observations, actions and reward:

* ``MovingDot-v0``: starts within 20 pixels of the centre on each axis; the env itself truncates after
  200 steps (``MovingDotEnv(time_limit=200)``), so ``gym.make`` adds no ``TimeLimit`` wrapper and
  ``spec.max_episode_steps`` is None. ``make run`` and the tests use it; it is unchanged.
* ``MovingDot-v1``: the same task, but the 200-step limit is gymnasium's: registered with
  ``max_episode_steps=200``, so ``gym.make`` wraps it in ``TimeLimit`` and the env itself never
  truncates (``time_limit=None``). What differs from v0: ``spec.max_episode_steps`` is 200, and
  ``gym.make("MovingDot-v1", max_episode_steps=N)`` changes the limit. Observations, rewards,
  ``info["success"]`` and where episodes end are the same step for step (same seed, same actions);
  the one difference is a dot reaching the centre on exactly the 200th step: v0 says terminated only,
  v1 terminated and truncated (``TimeLimit``'s way; drlhp treats both as an episode end).
* ``MovingDotWide-v0``: v0 starting anywhere in the frame (``start_box=None``).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

FRAME_SIZE = 84
CENTRE = FRAME_SIZE // 2  # the dot is "on the centre" when its middle pixel is (42, 42)
MIN_START_DISTANCE = 10  # Manhattan distance in pixels
START_BOX = 20  # MovingDot-v0 starts within 20 pixels of the centre on each axis (MovingDotWide-v0: anywhere)
MAX_EPISODE_STEPS = 200

# action -> (row delta, column delta): noop, up, right, down, left
ACTION_DELTAS = ((0, 0), (-1, 0), (0, 1), (1, 0), (0, -1))
ACTION_NAMES = ("noop", "up", "right", "down", "left")


class MovingDotEnv(gym.Env):
    """One unstacked frame per step: observation (84, 84, 1) uint8.

    Reward: +1 when a step reduces the Manhattan distance to the centre, -1 when it increases it,
    0 otherwise. Terminates on the centre (``info["success"] = True``); truncated after ``time_limit``
    steps (200; None: never, where gymnasium's ``TimeLimit`` does it, as for ``MovingDot-v1``).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}

    def __init__(self, render_mode: str | None = None, start_box: int | None = START_BOX,
                 time_limit: int | None = MAX_EPISODE_STEPS):
        self.observation_space = gym.spaces.Box(0, 255, (FRAME_SIZE, FRAME_SIZE, 1), np.uint8)
        self.action_space = gym.spaces.Discrete(len(ACTION_DELTAS))
        self.render_mode = render_mode
        self.start_box = start_box
        self.time_limit = time_limit
        self._pos = (CENTRE, CENTRE)  # (row, col) of the dot's middle pixel
        self._steps = 0

    def _distance(self) -> int:
        return abs(self._pos[0] - CENTRE) + abs(self._pos[1] - CENTRE)

    def _frame(self) -> np.ndarray:
        frame = np.zeros((FRAME_SIZE, FRAME_SIZE, 1), dtype=np.uint8)
        r, c = self._pos
        frame[r - 1:r + 2, c - 1:c + 2, 0] = 255
        return frame

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.start_box is None:
            lo, hi = 1, FRAME_SIZE - 1
        else:
            lo, hi = CENTRE - self.start_box, CENTRE + self.start_box + 1
        while True:  # uniform over the positions in the start box at least MIN_START_DISTANCE from the centre
            pos = self.np_random.integers(lo, hi, size=2)
            if np.abs(pos - CENTRE).sum() >= MIN_START_DISTANCE:
                break
        self._pos = (int(pos[0]), int(pos[1]))
        self._steps = 0
        return self._frame(), {"success": False}

    def step(self, action):
        if not 0 <= int(action) < len(ACTION_DELTAS):
            raise ValueError(f"MovingDot: invalid action {action!r}")
        before = self._distance()
        dr, dc = ACTION_DELTAS[int(action)]
        lo, hi = 1, FRAME_SIZE - 2  # walls clip: the 3x3 dot stays inside the frame
        self._pos = (min(max(self._pos[0] + dr, lo), hi), min(max(self._pos[1] + dc, lo), hi))
        after = self._distance()
        self._steps += 1
        reward = float((before > after) - (before < after))
        terminated = after == 0
        truncated = (not terminated) and self.time_limit is not None and self._steps >= self.time_limit
        return self._frame(), reward, bool(terminated), bool(truncated), {"success": bool(terminated)}

    def render(self):
        return np.repeat(self._frame(), 3, axis=2)


def make_moving_dot(render_mode: str | None = None, start_box: int | None = START_BOX,
                    time_limit: int | None = MAX_EPISODE_STEPS) -> gym.Env:
    """The registered ``MovingDot-v0`` (start_box 20), ``MovingDot-v1`` (time_limit None: gymnasium's
    TimeLimit truncates) and ``MovingDotWide-v0`` (start_box None: anywhere): MovingDot with the Atari
    frame stack, (84, 84, 4) uint8."""
    from envs.frame_stack import StackFrames

    return StackFrames(MovingDotEnv(render_mode=render_mode, start_box=start_box, time_limit=time_limit))

"""Gymnasium environments (MovingDot, CartPole, any registered id whose spaces fit) as a ``VecEnv``:
gymnasium's ``SyncVectorEnv``, stepping every worker in this process.

Which envs fit (``spaces_problem``): a ``Discrete`` action space (``start`` allowed; the policy picks
0..n-1 and the start is added here) and a ``Box`` observation space that is either

* an image, (H, W, C) or (H, W) uint8 (a 2-D image gets a channel axis): observations as they come,
  the Nature CNN for the policy and the paper's CNN for the predictor (MovingDot stacks its 4 frames
  itself); a person watches the newest channel, or the RGB image where C is 3; or
* a vector, (D,) of any float dtype: the policy gets float32 as they come (a 64-64 tanh MLP).

**A vector env's observations for the reward predictor and a person.** Everything on the preference
path (clips, the preference database, the predictor's input) is uint8, as for images, so
``predictor_view`` turns each float component into one byte: mapped linearly from its Box bounds
(clipped) to 0..255 where both bounds are finite and less than 1e6 apart (CartPole's cart position
and pole angle), else squashed as ``255 * (1 + tanh(x)) / 2`` (CartPole's two velocities; 0 -> 128).
The predictor's MLP scales the bytes back to [0, 1]. What a person watches (``frames_to_watch``) is a
bar chart of those bytes, one bar per component, from the middle line up (above 128) or down: rendering
the env itself (``render_mode="rgb_array"``) would cost a render of every worker at every step (no
clip knows in advance which worker it will come from), and CartPole's renderer needs pygame, which is
not installed. Atari has its own vector env (``envs/atari.py``).

Why synchronous: cheap environments step faster in-process than across worker processes. On 2 cores
(AMD EPYC, other runs busy on them), random actions, one step of 16 envs: CartPole-v1 0.30 ms with
``SyncVectorEnv`` against 3.65 ms with ``AsyncVectorEnv``; MovingDot-v0 3.1 ms against 14.4 ms (pipes
and pickled frames, and worker processes competing for the same 2 cores as the policy).
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from envs.fixed_length import fall_observations
from envs.vec_env import EpisodeTracker, StepResult, VecEnv

BAR_HEIGHT = 64  # the bar chart a person watches of a vector observation: 64 px high,
BAR_WIDTH, BAR_GAP = 8, 4  # one 8-px bar per component, 4 px apart
LINEAR_MAX_SPAN = 1e6  # wider finite bounds than this are squashed (tanh), not mapped linearly
SUCCESS_KEYS = ("success", "is_success")  # info keys of an episode's success (drlhp's, Stable-Baselines3's)


def spaces_problem(action_space: gym.Space, observation_space: gym.Space, box_actions: bool = False) -> str | None:
    """What about these spaces drlhp cannot run, in words (None: they fit). ``box_actions``: a Box action vector
    (A,) with a float vector observation (D,) fits too (PPO's envs, envs/fixed_length.py)."""
    if box_actions and isinstance(action_space, gym.spaces.Box):
        if len(action_space.shape) != 1:
            return f"Box actions of shape {action_space.shape} are not supported: PPO acts on a vector (A,)"
        if not (isinstance(observation_space, gym.spaces.Box) and len(observation_space.shape) == 1
                and np.issubdtype(np.dtype(observation_space.dtype), np.floating)):
            return "PPO takes a float vector observation (D,) with Box actions"
        return None
    if not isinstance(action_space, gym.spaces.Discrete):
        name = type(action_space).__name__
        if isinstance(action_space, gym.spaces.Box):
            return "continuous actions (Box) are not supported: drlhp's policy picks discrete actions"
        return (f"{name} actions are not supported: drlhp's policies take a Discrete action space (A2C) or a Box "
                f"one (PPO)")
    wanted = "drlhp takes a Box observation that is a float vector (D,) or a uint8 image (H, W[, C])"
    if not isinstance(observation_space, gym.spaces.Box):
        return f"{type(observation_space).__name__} observations are not supported: {wanted}"
    shape, dtype = observation_space.shape, np.dtype(observation_space.dtype)
    if len(shape) == 1:
        if not np.issubdtype(dtype, np.floating):
            return f"vector observations of dtype {dtype} are not supported: {wanted}"
        return None
    if len(shape) in (2, 3):
        if dtype != np.uint8:
            return f"image observations of dtype {dtype} (shape {shape}) are not supported: {wanted}"
        return None
    return f"observations of shape {shape} are not supported: {wanted}"


def observation_layout(space: gym.spaces.Box) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of one observation as ``GymVecEnv`` gives it: a 2-D image gets a channel axis,
    a vector is float32."""
    shape = tuple(space.shape)
    if len(shape) == 1:
        return shape, np.dtype(np.float32)
    return (shape if len(shape) == 3 else (*shape, 1)), np.dtype(np.uint8)


class VectorQuantizer:
    """Float vectors (..., D) -> uint8 (..., D), per component: linear from the Box bounds where they are
    finite and within LINEAR_MAX_SPAN, else 255 * (1 + tanh(x)) / 2 (see the module docstring)."""

    def __init__(self, space: gym.spaces.Box):
        low = np.asarray(space.low, np.float64).reshape(-1)
        high = np.asarray(space.high, np.float64).reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            span = high - low
            self.linear = np.isfinite(low) & np.isfinite(high) & (span > 0) & (span <= LINEAR_MAX_SPAN)
        self.low = np.where(self.linear, low, 0.0)
        self.scale = np.where(self.linear, 1.0 / np.where(self.linear, span, 1.0), 1.0)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float64)
        unit = np.where(self.linear, (x - self.low) * self.scale, 0.5 + 0.5 * np.tanh(x))
        return np.rint(np.clip(unit, 0.0, 1.0) * 255.0).astype(np.uint8)


def bar_frames(q: np.ndarray) -> np.ndarray:
    """uint8 vectors (..., D) -> grayscale bar charts (..., BAR_HEIGHT, W) uint8: per component a white
    bar from the grey middle line up (value above 128) or down (below), its length the distance."""
    q = np.asarray(q, np.uint8)
    d = q.shape[-1]
    mid = (BAR_HEIGHT - 1) / 2.0
    level = (BAR_HEIGHT - 1) - q.astype(np.float32) * ((BAR_HEIGHT - 1) / 255.0)  # row of the value
    rows = np.arange(BAR_HEIGHT, dtype=np.float32)[:, None]  # (H, 1) against (..., 1, D)
    lo = np.minimum(level, mid)[..., None, :]
    hi = np.maximum(level, mid)[..., None, :]
    filled = (rows >= np.floor(lo)) & (rows <= np.ceil(hi))  # (..., H, D)
    column = np.where(filled, np.uint8(255), np.uint8(0))
    width = d * (BAR_WIDTH + BAR_GAP) + BAR_GAP
    out = np.zeros((*q.shape[:-1], BAR_HEIGHT, width), np.uint8)
    out[..., int(mid), :] = 96  # the middle line
    for i in range(d):
        x0 = BAR_GAP + i * (BAR_WIDTH + BAR_GAP)
        out[..., x0:x0 + BAR_WIDTH] = np.maximum(out[..., x0:x0 + BAR_WIDTH], column[..., i:i + 1])
    return out


class GymVecEnv(VecEnv):
    def __init__(self, env_id: str, n_envs: int, falls: dict | None = None):
        """``falls``: fixed-length episodes (envs/fixed_length.py, with these fall arguments) where ``env_id``'s
        episode ends on a fall (CartPole-v1): a fall costs reward and ends no episode, so the preference modes'
        clips differ by their falls. None: every env as gymnasium ends its episodes."""
        from envs.fixed_length import FALLING_ENV_IDS, fixed_length_env

        self.env_id = env_id
        self.n_envs = n_envs
        self.fixed_length = falls is not None and env_id in FALLING_ENV_IDS and falls.get("fall_rule") != "end"

        def make():
            return fixed_length_env(env_id, **falls) if self.fixed_length else gym.make(env_id)

        with warnings.catch_warnings():  # an explicit older version (MovingDot-v0) is what was asked for
            warnings.filterwarnings("ignore", message=".*is out of date")
            self._env = SyncVectorEnv([make for _ in range(n_envs)], autoreset_mode=AutoresetMode.SAME_STEP)
        action_space, space = self._env.single_action_space, self._env.single_observation_space
        problem = spaces_problem(action_space, space)
        if problem:
            self._env.close()
            raise ValueError(f"{env_id}: {problem}")
        self.obs_shape, self.obs_dtype = observation_layout(space)
        self.n_actions = int(action_space.n)
        self._action_start = int(action_space.start)
        self.is_vector = len(self.obs_shape) == 1
        self._quantize = VectorQuantizer(space) if self.is_vector else None
        self._tracker = EpisodeTracker(n_envs)

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        """Gymnasium's observations (N, ...) as this env gives them (observation_layout)."""
        return np.asarray(obs, self.obs_dtype).reshape(len(obs), *self.obs_shape)

    def reset(self, seed: int) -> np.ndarray:
        # Worker i is seeded with seed + i (gymnasium's convention for an int seed).
        obs, _ = self._env.reset(seed=seed)
        self._env.action_space.seed(seed)
        self._tracker = EpisodeTracker(self.n_envs)
        return self._obs(obs)

    def step(self, actions: np.ndarray) -> StepResult:
        actions = np.asarray(actions)
        if self._action_start:
            actions = actions + self._action_start
        obs, reward, terminated, truncated, info = self._env.step(actions)
        obs = self._obs(obs)
        done = terminated | truncated
        success = None
        final_info = info.get("final_info", {})
        for key in SUCCESS_KEYS:
            if key in final_info:
                success = np.asarray(final_info[key], dtype=bool)
                break
        reward = np.asarray(reward, np.float32)
        finished = self._tracker.update(reward, done, success)
        final_obs = None
        if done.any() and "final_obs" in info:
            final_obs = obs.copy()
            for i in np.flatnonzero(done):
                final_obs[i] = np.asarray(info["final_obs"][i], self.obs_dtype).reshape(self.obs_shape)
        fallen = fall_observations(info, done)
        if fallen:  # a fall (the reset rule): the step led to the fallen state, not to the fresh start returned
            final_obs = obs.copy() if final_obs is None else final_obs
            for i, fell_obs in fallen.items():
                final_obs[i] = np.asarray(fell_obs, self.obs_dtype).reshape(self.obs_shape)
        return StepResult(obs, reward, np.asarray(terminated, bool), np.asarray(truncated, bool), finished,
                          final_obs)

    def predictor_view(self, obs: np.ndarray, inplace: bool = False) -> np.ndarray:
        """Images: ``obs`` itself. Vectors (..., D) float: one byte per component (module docstring), a
        new uint8 array."""
        return self._quantize(obs) if self.is_vector else obs

    def frames_to_watch(self, obs: np.ndarray) -> np.ndarray:
        """Vectors (..., D), float or already bytes: bar charts (..., 64, W). Images: the newest channel
        (..., H, W), or the RGB image itself (..., H, W, 3)."""
        if self.is_vector:
            return bar_frames(obs if obs.dtype == np.uint8 else self._quantize(obs))
        return obs if self.obs_shape[-1] == 3 else obs[..., -1]

    def close(self) -> None:
        self._env.close()

"""Environments for drlhp. Importing this package registers ``MovingDot-v0`` with gymnasium.

``make_vec_env(env_id, n_envs)`` is the one constructor the rest of drlhp uses. This package knows
nothing of learning and never imports ``drlhp``.
"""
from __future__ import annotations

import gymnasium as gym

from envs.vec_env import EpisodeStats, StepResult, VecEnv

MOVING_DOT_ID = "MovingDot-v0"  # starts within 20 pixels of the centre on each axis
MOVING_DOT_WIDE_ID = "MovingDotWide-v0"  # starts anywhere in the frame (MovingDot-v0 before 2026-11-22)
GYM_ENV_IDS = (MOVING_DOT_ID, MOVING_DOT_WIDE_ID)

if MOVING_DOT_ID not in gym.registry:
    gym.register(MOVING_DOT_ID, entry_point="envs.moving_dot:make_moving_dot")
if MOVING_DOT_WIDE_ID not in gym.registry:
    gym.register(MOVING_DOT_WIDE_ID, entry_point="envs.moving_dot:make_moving_dot", kwargs={"start_box": None})


class UnknownEnvError(ValueError):
    """An env id drlhp cannot run."""


def is_valid_env_id(env_id: str) -> bool:
    from envs.atari import atari_game

    return env_id in GYM_ENV_IDS or atari_game(env_id) is not None


def list_env_ids() -> list[str]:
    from envs.atari import atari_env_ids

    return list(GYM_ENV_IDS) + atari_env_ids()


def frames_per_agent_step(env_id: str) -> int:
    """Emulator frames per agent step: 4 for Atari (frame skip), 1 otherwise. The paper's label
    schedule counts frames."""
    return 1 if env_id in GYM_ENV_IDS else 4


def observation_shape(env_id: str) -> tuple[int, ...]:
    """The shape of one observation of ``env_id``, without starting its vector env."""
    if env_id in GYM_ENV_IDS:
        return tuple(gym.spec(env_id).make().observation_space.shape)
    from envs.atari import N_STACK

    return (84, 84, N_STACK)


def make_vec_env(env_id: str, n_envs: int, n_threads: int = 0) -> VecEnv:
    """A vector env of ``n_envs`` workers; call ``reset(seed)`` on it before stepping."""
    if env_id in GYM_ENV_IDS:
        from envs.gym_vec_env import GymVecEnv

        return GymVecEnv(env_id, n_envs)
    from envs.atari import AtariVecEnv, atari_game

    if atari_game(env_id) is None:
        raise UnknownEnvError(f"unknown env {env_id!r}")
    return AtariVecEnv(env_id, n_envs, n_threads=n_threads)


__all__ = ["EpisodeStats", "StepResult", "VecEnv", "UnknownEnvError", "MOVING_DOT_ID",
           "is_valid_env_id", "list_env_ids", "make_vec_env",
           "frames_per_agent_step", "observation_shape"]

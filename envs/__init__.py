"""Environments for drlhp. Importing this package registers MovingDot with gymnasium.

Which envs run (``check_env_id``; ``--list_envs``):

* drlhp's own: ``MovingDot-v0``, ``MovingDot-v1``, ``MovingDotWide-v0`` (``envs/moving_dot.py``);
* Atari ``<Game>NoFrameskip-v4`` for every ROM ale-py ships, on ale-py's C++ ``AtariVectorEnv``
  with the DeepMind preprocessing (``envs/atari.py``);
* any other registered gymnasium id whose spaces fit: a ``Discrete`` action space and a ``Box``
  observation space that is a float vector (D,) or a uint8 image (H, W[, C]), stepped by gymnasium's
  ``SyncVectorEnv`` (``envs/gym_vec_env.py``, which also says how a vector env's observations reach
  the reward predictor and a person). Anything else is refused in one line naming what does not fit.

``make_vec_env(env_id, n_envs)`` is the one constructor the rest of drlhp uses. This package knows
nothing of learning and never imports ``drlhp``.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from envs.vec_env import EpisodeStats, StepResult, VecEnv

MOVING_DOT_ID = "MovingDot-v0"  # starts within 20 pixels of the centre on each axis
MOVING_DOT_V1_ID = "MovingDot-v1"  # MovingDot-v0 with gymnasium's TimeLimit(200) instead of the env's own
MOVING_DOT_WIDE_ID = "MovingDotWide-v0"  # starts anywhere in the frame (MovingDot-v0 before 2026-11-22)
GYM_ENV_IDS = (MOVING_DOT_ID, MOVING_DOT_V1_ID, MOVING_DOT_WIDE_ID)  # drlhp's own gymnasium envs

if MOVING_DOT_ID not in gym.registry:
    gym.register(MOVING_DOT_ID, entry_point="envs.moving_dot:make_moving_dot")
if MOVING_DOT_V1_ID not in gym.registry:
    gym.register(MOVING_DOT_V1_ID, entry_point="envs.moving_dot:make_moving_dot", kwargs={"time_limit": None},
                 max_episode_steps=200)
if MOVING_DOT_WIDE_ID not in gym.registry:
    gym.register(MOVING_DOT_WIDE_ID, entry_point="envs.moving_dot:make_moving_dot", kwargs={"start_box": None})

# What --list_envs says after the ids it can list.
ANY_GYM_ENV_NOTE = ("... and any other registered gymnasium id with a Discrete action space and a Box observation "
                    "space (a float vector or a uint8 image), e.g. CartPole-v1, Acrobot-v1, MountainCar-v0; "
                    "train_policy_with_original_rewards also runs PPO on Box actions with a float vector "
                    "observation, e.g. Hopper-v5, HalfCheetah-v5, Pendulum-v1")


class UnknownEnvError(ValueError):
    """An env id that names no env: neither drlhp's, nor an Atari game ale-py ships, nor registered."""


class UnsupportedEnvError(ValueError):
    """A registered env drlhp cannot run; the message is one line naming what does not fit."""


def _is_atari(env_id: str) -> bool:
    from envs.atari_ids import atari_game

    return atari_game(env_id) is not None


def _register_ale_ids() -> None:
    """ale-py registers its gymnasium ids (``ALE/Pong-v5``, ...) when imported; without ale-py, none."""
    try:
        import ale_py  # noqa: F401
    except ImportError:
        pass


def _make_one(env_id: str, **make_kwargs) -> gym.Env:
    """One env of a registered id, made with ``make_kwargs`` (UnknownEnvError where none is; UnsupportedEnvError
    where it cannot be made here, e.g. a missing dependency), gymnasium's warnings silenced: a check prints nothing."""
    import warnings

    _register_ale_ids()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            gym.spec(env_id)
        except gym.error.UnregisteredEnv:
            raise UnknownEnvError(f"unknown env {env_id!r}") from None
        except gym.error.Error as e:
            if str(e).startswith("No registered env"):
                raise UnknownEnvError(f"unknown env {env_id!r}") from None
            raise UnsupportedEnvError(f"{env_id}: {_one_line(e)}") from None
        try:
            return gym.make(env_id, **make_kwargs)
        except Exception as e:  # noqa: BLE001 -- whatever stops it being made, in one line
            raise UnsupportedEnvError(f"{env_id}: cannot be made here: {type(e).__name__}: {_one_line(e)}") from None


def _one_line(e: Exception) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= 200 else text[:197] + "..."


def check_env_id(env_id: str, box_actions: bool = False) -> None:
    """Nothing if drlhp can run ``env_id``; else UnknownEnvError, or UnsupportedEnvError with one line
    naming what does not fit (e.g. ``Pendulum-v1: continuous actions (Box) are not supported: ...``).
    ``box_actions``: Box actions on a vector observation fit too (PPO's).
    Cheap: drlhp's and Atari ids by name; any other id by its gymnasium spec and one env made and closed."""
    from envs.gym_vec_env import spaces_problem

    if env_id in GYM_ENV_IDS or _is_atari(env_id):
        return
    env = _make_one(env_id)
    try:
        problem = spaces_problem(env.action_space, env.observation_space, box_actions)
    finally:
        env.close()
    if problem:
        raise UnsupportedEnvError(f"{env_id}: {problem}")


def action_kind(env_id: str) -> str:
    """"discrete", "box" or the action space's class name, of a known id (UnknownEnvError, UnsupportedEnvError
    as ``check_env_id``): drlhp's and Atari ids by name, any other by one env made and closed."""
    if env_id in GYM_ENV_IDS or _is_atari(env_id):
        return "discrete"
    env = _make_one(env_id)
    try:
        space = env.action_space
    finally:
        env.close()
    if isinstance(space, gym.spaces.Discrete):
        return "discrete"
    return "box" if isinstance(space, gym.spaces.Box) else type(space).__name__


def is_valid_env_id(env_id: str) -> bool:
    try:
        check_env_id(env_id)
    except ValueError:
        return False
    return True


def list_env_ids() -> list[str]:
    """drlhp's own ids and every Atari id; any other registered gymnasium id whose spaces fit runs too
    (``ANY_GYM_ENV_NOTE``), but is not listed: telling would mean making every registered env."""
    from envs.atari_ids import atari_env_ids

    return list(GYM_ENV_IDS) + atari_env_ids()


def frames_per_agent_step(env_id: str) -> int:
    """Emulator frames per agent step: 4 for Atari (frame skip), 1 otherwise. The paper's label
    schedule counts frames."""
    from envs.atari import FRAME_SKIP

    return FRAME_SKIP if _is_atari(env_id) else 1


def observation_shape(env_id: str) -> tuple[int, ...]:
    """The shape of one observation of ``env_id`` as drlhp's vector envs give it (a 2-D image gets a
    channel axis), without starting its vector env."""
    if _is_atari(env_id):
        from envs.atari import N_STACK

        return (84, 84, N_STACK)
    from envs.gym_vec_env import observation_layout

    env = _make_one(env_id)
    try:
        return observation_layout(env.observation_space)[0]
    finally:
        env.close()


def predictor_input(env_id: str, **make_kwargs) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of the reward predictor's per-step input on ``env_id``: ``(observation_shape, uint8)`` for
    images and Discrete-action vector envs (CartPole's quantized bytes); ``((D + A,), float32)`` on a Box-action
    env, whose input is the raw observation (D) and the clipped action (A) of each step (issue 29). Makes
    at most one env (with ``make_kwargs``, e.g. an oracle goal's), closed again (drlhp's and Atari ids: none)."""
    if env_id in GYM_ENV_IDS or _is_atari(env_id):
        return observation_shape(env_id), np.dtype(np.uint8)
    from envs.gym_vec_env import observation_layout

    env = _make_one(env_id, **make_kwargs)
    try:
        obs_space, act_space = env.observation_space, env.action_space
        if isinstance(act_space, gym.spaces.Box):
            return (int(np.prod(obs_space.shape)) + int(np.prod(act_space.shape)),), np.dtype(np.float32)
        return observation_layout(obs_space)[0], np.dtype(np.uint8)
    finally:
        env.close()


def make_vec_env(env_id: str, n_envs: int, n_threads: int = 0, score_visible: bool = False,
                 falls: dict | None = None, watch_steps: int = 0) -> VecEnv:
    """A vector env of ``n_envs`` workers; call ``reset(seed)`` on it before stepping. ``n_threads``:
    Atari's C++ threads (0: one per core); gymnasium envs step in this process. ``score_visible``: Atari's
    score stays in what the predictor and the labeller see (default: blanked, the paper). ``falls`` (the
    preference modes: ``envs/fixed_length.py``'s makers' fall arguments): a gymnasium env whose episode ends on a
    fall (CartPole-v1; ``envs.fixed_length.FALLING_ENV_IDS``) gets fixed-length episodes, a fall costing reward
    and ending no episode; None, or any other env: episodes as gymnasium ends them. ``watch_steps`` > 0 (a person
    watches the clips): Atari keeps the colour frames of a few workers' last ``watch_steps`` steps (the env's
    ``watch``: envs/atari_watch.py); other envs have nothing more to show (their ``watch`` is None)."""
    if _is_atari(env_id):
        from envs.atari import AtariVecEnv

        return AtariVecEnv(env_id, n_envs, n_threads=n_threads, score_visible=score_visible, watch_steps=watch_steps)
    check_env_id(env_id)
    from envs.gym_vec_env import GymVecEnv

    return GymVecEnv(env_id, n_envs, falls=falls)


__all__ = ["EpisodeStats", "StepResult", "VecEnv", "UnknownEnvError", "UnsupportedEnvError", "MOVING_DOT_ID",
           "ANY_GYM_ENV_NOTE", "check_env_id", "is_valid_env_id", "list_env_ids", "make_vec_env",
           "frames_per_agent_step", "observation_shape", "predictor_input"]

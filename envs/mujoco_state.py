"""A MuJoCo simulator's state, recorded for re-rendering later (envs/mujoco_render.py draws it; issue 30).

``record_state(env)`` copies concat(data.qpos, data.qvel), (nq + nv,) float64, a few microseconds. The policy's
process records it each step when a person labels (drlhp.policy.ppo.rollout, with ``record_state_into``: no new
array); rendering happens elsewhere, in a
process that loads no TensorFlow. This module imports numpy only (no mujoco, no OpenGL): the policy's process,
which loads TensorFlow, may import it.
"""
from __future__ import annotations

import numpy as np


def is_mujoco(env) -> bool:
    """Whether ``env`` (wrapped or not) is a MuJoCo env whose state can be recorded and re-rendered: its
    ``unwrapped`` has a model and data (gymnasium's MujocoEnv) and a ``set_state`` to put a state back."""
    u = getattr(env, "unwrapped", env)
    return all(hasattr(u, name) for name in ("model", "data", "set_state"))


def record_state(env) -> np.ndarray:
    """The simulator's state now, for re-rendering later: concat(data.qpos, data.qvel), (nq + nv,) float64, a
    copy. ``env`` is any gymnasium MuJoCo env, wrapped or not (its ``unwrapped`` holds ``data``)."""
    data = env.unwrapped.data
    return np.concatenate([data.qpos, data.qvel])


def record_state_into(env, out: np.ndarray) -> None:
    """``record_state(env)`` written into ``out`` ((nq + nv,) float64), with no new array."""
    data = env.unwrapped.data
    nq = len(data.qpos)
    out[:nq] = data.qpos
    out[nq:] = data.qvel


def state_size(env) -> int:
    """nq + nv of ``env``'s model: the length of ``record_state(env)``."""
    model = env.unwrapped.model
    return int(model.nq + model.nv)


def vector_state_size(envs) -> int:
    """nq + nv of a gymnasium SyncVectorEnv whose every sub-env is a MuJoCo env; 0 where it is not one (an async
    vector env, whose sub-envs live in other processes, or envs with no simulator state to record)."""
    subs = getattr(envs, "envs", None)
    return state_size(subs[0]) if subs and all(is_mujoco(e) for e in subs) else 0

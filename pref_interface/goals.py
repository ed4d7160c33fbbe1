"""Goal functions for the scripted labeller: behaviours no task's reward describes (issue 30).

A goal is a function ``goal(obs, actions, info) -> float`` of one clip:

    obs      (T, D) float: the env's raw observations, obs[t] the one action t was taken in
    actions  (T, A) float: the actions (clipped to the action space)
    info     dict of (T,) arrays, per step; may be empty (the goal oracle passes {} today: segments carry
             no info yet), so a goal must not need it

and returns a finite score: the goal oracle (pref_interface/goal_oracle.py) prefers the clip with the higher
score and calls equal scores a tie. A goal may carry ``env_kwargs``, the ``gym.make`` kwargs its env needs
(the run makes its envs with them: envs/fixed_length.py's makers take them), and ``env_ids``, the tasks
whose observations it reads, and ``measure``: (a name, a function of one whole episode's observations (T, D)),
what ``watch`` reports per episode (drlhp.modes). Name one with ``pref_interface.goals:hopper_backflip``.

**Hopper-v5's backflip** (``hopper_backflip``). Hopper-v5's observation (default kwargs) is qpos[1:] then
qvel, so ``obs[:, 1]`` is qpos[2], the torso's pitch: the ``rooty`` hinge, unwrapped (it runs past +-pi, a
full turn adds 2 pi). The hopper faces +x (its foot points +x; its task rewards +x speed). Measured
(tests/test_goals.py replays it): with the torso spinning at qvel[2] = -8 rad/s, obs[:, 1] falls and the top
of the torso moves to -x first, head over heels backwards; at +8 it rises and the top moves to +x. So
**backward is a DECREASING pitch**. ``backward_rotation`` is the backward rotation over the clip in radians,
``obs[0, 1] - obs[-1, 1]`` summed step by step, a step whose pitch jumps by more than ``RESET_JUMP``
(1 rad in one 8 ms step: a reset, not motion) counted as 0. A flip is 2 pi = 6.28. The score adds
``HEIGHT_WEIGHT`` (3 rad per metre) times the torso's mean height over the clip (``obs[:, 0]``, qpos[1]: 1.25 m
standing, about 0.25 m lying on its back). Rotation alone (the goal until session 16) left one seed of three lying
on its back after one turn, which scores 0 there as still as anything (docs/results.md, session 15); with the
height term lying scores about 0.7, standing 3.75, a turn in a 1.5-s clip at half a metre about 7.8: getting up
pays, and a flip made higher pays more.
Its env needs ``terminate_when_unhealthy=False``: Hopper-v5 calls a torso pitched beyond +-0.2 rad
unhealthy and ends the episode (and the fixed-length wrapper would put the robot back mid-flip).
``count_backflips`` counts the full backward turns in a series of pitch angles, for ``watch``.

**HalfCheetah-v5 standing on its back leg** (``cheetah_standing``). Its observation is qpos[1:] then qvel:
``obs[:, 1]`` is the torso's pitch (``rooty``, unwrapped). Measured (tests/test_goals.py): at pitch -pi/2 the
head is 1.1 m above the back thigh (standing on the back leg), at +pi/2 below it (on the front leg). The
score is the mean over the clip of -sin(pitch) + min(0, cos(pitch)): 1 standing upright on the back leg, 0
on its feet, -1 on its front leg or on its back. (The first goal, -sin(pitch) alone, scored lying on its back
with the head raised 13 degrees at 0.22, and seed 0 learned exactly that: docs/results.md, session 15; the cos
term makes every pose past upright, towards the back, worse than standing on its feet.) ``upright_fraction``
gives the share of steps within 30 degrees of that stance, for ``watch``. HalfCheetah never ends early: no env
kwargs.
"""
from __future__ import annotations

import math

import numpy as np

RESET_JUMP = 1.0  # rad in one step: more is a reset of the env, not the robot turning
FULL_TURN = 2 * math.pi

HOPPER_PITCH = 1  # obs column of Hopper-v5's torso pitch (qpos[2], rooty)
HOPPER_HEIGHT = 0  # obs column of Hopper-v5's torso height (qpos[1], rootz), metres
HEIGHT_WEIGHT = 3.0  # the backflip's score per metre of mean torso height (the module's docstring)
CHEETAH_PITCH = 1  # obs column of HalfCheetah-v5's torso pitch (qpos[2], rooty)


def _pitch_steps(angles: np.ndarray) -> np.ndarray:
    """Step-by-step changes of an unwrapped angle series, a jump beyond RESET_JUMP (a reset) counted as 0."""
    steps = np.diff(np.asarray(angles, dtype=np.float64))
    steps[np.abs(steps) > RESET_JUMP] = 0.0
    return steps


def backward_rotation(obs: np.ndarray) -> float:
    """Backward rotation of Hopper-v5's torso over the clip, radians (2 pi a flip; the pitch falling is
    backward: the module's docstring)."""
    return float(-_pitch_steps(np.asarray(obs)[:, HOPPER_PITCH]).sum())


def hopper_backflip(obs: np.ndarray, actions: np.ndarray, info: dict) -> float:
    """The backward rotation over the clip (radians) plus HEIGHT_WEIGHT times the torso's mean height (metres)."""
    obs = np.asarray(obs, dtype=np.float64)
    return backward_rotation(obs) + HEIGHT_WEIGHT * float(np.mean(obs[:, HOPPER_HEIGHT]))


def hopper_backflips(obs: np.ndarray) -> int:
    """The full backward turns of Hopper-v5's torso over an episode's observations (``count_backflips``)."""
    return count_backflips(np.asarray(obs)[:, HOPPER_PITCH])


hopper_backflip.env_kwargs = {"terminate_when_unhealthy": False}
hopper_backflip.env_ids = ("Hopper-v5",)
hopper_backflip.measure = ("backflips", hopper_backflips)


def cheetah_standing(obs: np.ndarray, actions: np.ndarray, info: dict) -> float:
    """How upright HalfCheetah-v5 stands on its back leg over the clip: the mean of -sin(pitch) + min(0, cos(pitch))
    (1 upright on the back leg; 0 on its feet; -1 on its front leg or its back; the module docstring)."""
    pitch = np.asarray(obs, dtype=np.float64)[:, CHEETAH_PITCH]
    return float(np.mean(-np.sin(pitch) + np.minimum(0.0, np.cos(pitch))))


def cheetah_upright(obs: np.ndarray) -> float:
    """The share of an episode's steps HalfCheetah-v5 stands upright on its back leg (``upright_fraction``)."""
    return upright_fraction(np.asarray(obs)[:, CHEETAH_PITCH])


cheetah_standing.env_kwargs = {}
cheetah_standing.env_ids = ("HalfCheetah-v5",)
cheetah_standing.measure = ("upright_fraction", cheetah_upright)


def count_backflips(angles, backward: int = -1) -> int:
    """Full backward turns in a series of unwrapped angles (Hopper's torso pitch: backward is falling,
    ``backward=-1``). A flip counts when the angle has gone 2 pi backward from the most forward point since
    the last flip (so back 2 pi, forward 2 pi, back 2 pi is two flips; rocking by less than a turn is none);
    a jump beyond RESET_JUMP in one step (a reset) starts the count afresh from there."""
    a = backward * np.asarray(angles, dtype=np.float64)  # now backward is rising
    if a.ndim != 1:
        raise ValueError(f"angles must be a 1-D series, got shape {a.shape}")
    flips, low = 0, None
    for t, x in enumerate(a):
        if low is None or (t and abs(x - a[t - 1]) > RESET_JUMP):
            low = x
        elif x >= low + FULL_TURN:
            flips += 1
            low = x
        else:
            low = min(low, x)
    return flips


def upright_fraction(pitch, within: float = math.pi / 6) -> float:
    """The share of steps HalfCheetah's torso stands within ``within`` rad of upright on its back leg
    (pitch -pi/2, modulo full turns)."""
    p = np.asarray(pitch, dtype=np.float64)
    off = np.abs((p + math.pi / 2 + math.pi) % FULL_TURN - math.pi)
    return float(np.mean(off <= within)) if len(p) else 0.0

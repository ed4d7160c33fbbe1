"""Goal functions for the scripted labeller: behaviours no task's reward describes (issue 30).

A goal is a function ``goal(obs, actions, info) -> float`` of one clip:

    obs      (T, D) float: the env's raw observations, obs[t] the one action t was taken in
    actions  (T, A) float: the actions (clipped to the action space)
    info     dict of (T,) arrays, per step; may be empty (the goal oracle passes {} on a Box-action env's clips:
             segments carry no info yet), so a goal must not need it

An Atari goal (``reads = "atari"``) gets the clip as the game's state instead: ``obs`` the console's RAM after each
step (T, 128), ``actions`` empty (T, 0), ``info`` {"reward": the game's reward per step} (Enduro's below).

and returns a finite score: the goal oracle (pref_interface/goal_oracle.py) prefers the clip with the higher
score and calls equal scores a tie. A goal may carry ``env_kwargs``, the ``gym.make`` kwargs its env needs
(the run makes its envs with them: envs/fixed_length.py's makers take them), and ``env_ids``, the tasks
whose observations it reads, and ``measure``: (a name, a function of one whole episode's observations (T, D)),
what ``watch`` reports per episode (drlhp.run.modes). Name one with ``pref_interface.goals:hopper_backflip``.

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
on its back after one turn, which scores 0 there as still as anything (docs/results/mujoco.md, session 15); with the
height term lying scores about 0.7, standing 3.75, a turn in a 1.5-s clip at half a metre about 7.8: getting up
pays, and a flip made higher pays more.
Its env needs ``terminate_when_unhealthy=False``: Hopper-v5 calls a torso pitched beyond +-0.2 rad
unhealthy and ends the episode (and the fixed-length wrapper would put the robot back mid-flip).
``count_backflips`` counts the full backward turns in a series of pitch angles, for ``watch``.

**Hopper-v5's backflip that lands** (``hopper_landed_backflip``, issue 40). The backflip goal above made a Hopper turn
over 7.6 times an episode with its torso's median height at 0.55 m: it tumbled more than it flipped, since a turn
rolled on the ground pays as much as one made in the air. The paper's Hopper jumped, turned in the air and landed on
its foot, so this goal pays what that takes, on top of the backflip's own score (the way there: a turn of any kind
is what the backflip goal taught on 3 of 3 seeds; the terms below pay more for the same turn made in the air and
landed):

* the backflip's score: ``backward_rotation`` plus ``HEIGHT_WEIGHT`` times the torso's mean height. Until session 20
  this goal paid rotation only in the air, and at a person's budget (900 labels, seed 0: docs/results/mujoco.md,
  session 19) its oracle taught the height term and no turn at all: a turn pays nothing there until it leaves the
  ground, and random play never turns in the air, so a Hopper standing still scored above any turn it made on the
  ground;
* ``air_rotation``, once more: the backward rotation (the pitch falling, as above) summed over the steps whose two
  ends both have the body's lowest point above ``AIRBORNE_M`` (2 cm; standing, the foot's bottom is at -0.3 cm). Not
  the foot alone: a Hopper rolling over its back on the ground has its foot in the air. The height comes from the
  observation alone: obs[:5] is qpos[1:6] (height, pitch and the three joint angles), and ``body_bottom`` is Hopper's
  planar forward kinematics of its four capsules (tests/test_goals.py checks it against MuJoCo's own on random poses);
* ``LANDING_BONUS`` (2 pi: as much again as the turn) for each landed flip in the clip (``landed_backflips``, the
  measure below): landing is what makes a turn a backflip, so it pays as much as the turn itself.

So a turn rolled on the ground pays 2 pi, the same turn made in the air 4 pi, and landed on the foot 6 pi, with the
height term above each.

A clip is 1.5 s (188 steps), room for a jump, a turn and a landing; a flip that straddles two clips is paid its air
rotation in each, and its landing bonus in neither. Its env is made as the backflip's (``terminate_when_unhealthy``
off).

**A backflip that lands** (``landed_backflips``: the landed goal's ``measure``, which watch reports per episode, and
the one place it is counted: experiments/count_backflips.py prints the goals' own measures). From an episode's
observations (the simulator's state but rootx, which no part of it needs): a flip is a full backward turn, as
``count_backflips`` finds it (2 pi back from the most forward point since the last flip); it counts as landed when
(1) at least ``AIR_SHARE`` (three quarters) of that turn's rotation was made in the air (the foot, and all else, off
the ground; the rest allows for the push-off and the touch-down; a turn pivoted on the foot or rolled on the ground
has little of it), and (2) at some step within ``LANDING_S`` (half a second, 62 steps) after the turn is complete,
before any reset, it starts to stand for ``STAND_S`` (0.1 s, 12 steps): on the ground (its lowest point at most
AIRBORNE_M up: with the torso upright and high, that is the foot), the torso above ``LANDED_HEIGHT_M`` (1.0 m;
standing it is 1.2 m, lying 0.25 m) and upright (its pitch within ``UPRIGHT_RAD``, 30 degrees, of a whole number of
turns). On the ground, since a flip's torso passes upright and high in the air as its turn completes; for 0.1 s,
since a Hopper that touches down and goes on over onto its back passes through that pose for a step or two.

**HalfCheetah-v5 standing on its back leg** (``cheetah_standing``). Its observation is qpos[1:] then qvel:
``obs[:, 1]`` is the torso's pitch (``rooty``, unwrapped). Measured (tests/test_goals.py): at pitch -pi/2 the
head is 1.1 m above the back thigh (standing on the back leg), at +pi/2 below it (on the front leg). The
score is the mean over the clip of -sin(pitch) + min(0, cos(pitch)): 1 standing upright on the back leg, 0
on its feet, -1 on its front leg or on its back. (The first goal, -sin(pitch) alone, scored lying on its back
with the head raised 13 degrees at 0.22, and seed 0 learned exactly that: docs/results/mujoco.md, session 15; the cos
term makes every pose past upright, towards the back, worse than standing on its feet.) ``upright_fraction``
gives the share of steps within 30 degrees of that stance, for ``watch``. HalfCheetah never ends early: no env
kwargs.

**Enduro among the cars** (``enduro_with_cars``, issue 62). The paper's labellers were told, for Enduro (appendix B.2):
avoid passing cars or being passed by them, stay even with other cars, none around is fine. An Atari goal reads the
clip as the game's state (``reads = "atari"``): ``obs`` is the console's RAM after each step, (T, 128) (the segment's
``states``: envs/atari_watch.py, recorded where a person or a goal watches), ``actions`` is empty, and ``info`` holds
the game's ``reward`` per step. What the RAM means is envs/enduro.py's, checked against the frames by day, at night
and in fog. The score: ``ENDURO_PASS_COST`` (1) for every pass either way (the game's reward is +1 or -1 at a pass),
``ENDURO_CRASH_COST`` (2) for every crash begun in the clip, and ``ENDURO_LEVEL_PAY`` (1) times the share of the
clip's steps with a car alongside and no crash: a clip spent beside a car scores up to 1, a clip with nobody around
0 ("none around is fine"), a pass -1, a crash -2. Its ``measure`` for ``watch`` is each episode's figures: passes,
the share of steps level with a car, crashes (envs.enduro.figures).
"""
from __future__ import annotations

import math

import numpy as np

from envs import enduro

RESET_JUMP = 1.0  # rad in one step: more is a reset of the env, not the robot turning
FULL_TURN = 2 * math.pi

HOPPER_PITCH = 1  # obs column of Hopper-v5's torso pitch (qpos[2], rooty)
HOPPER_HEIGHT = 0  # obs column of Hopper-v5's torso height (qpos[1], rootz), metres
HEIGHT_WEIGHT = 3.0  # the backflip's score per metre of mean torso height (the module's docstring)
CHEETAH_PITCH = 1  # obs column of HalfCheetah-v5's torso pitch (qpos[2], rooty)
HOPPER_DT = 0.008  # seconds per Hopper-v5 step (env.unwrapped.dt)
AIRBORNE_M = 0.02  # the body's lowest point above this (metres): in the air; at or below it, on the ground
AIR_SHARE = 0.75  # of a landed flip's turn, at least this share made with the foot off the ground
LANDING_S = 0.5  # seconds after the turn within which the robot must be up
LANDED_HEIGHT_M = 1.0  # torso height above which it is up (standing: 1.25 m)
UPRIGHT_RAD = math.pi / 6  # pitch within this of a whole number of turns: upright
STAND_S = 0.1  # seconds it must stand so (a body falling through the pose onto its back does not land)
LANDING_BONUS = FULL_TURN  # the landed backflip goal's pay per landed flip in a clip
# Hopper-v5's planar geometry (its hopper.xml), metres in (x, z) of each body's frame: where each body sits in its
# parent, each hinge's point in its own body
_THIGH_IN_TORSO, _LEG_IN_THIGH, _FOOT_IN_LEG = (0.0, -0.2), (0.0, -0.7), (0.13, -0.35)
_LEG_HINGE, _FOOT_HINGE = (0.0, 0.25), (-0.13, 0.1)
# each capsule: its two ends in its body's frame, and its radius
_TORSO, _THIGH = (((0.0, 0.2), (0.0, -0.2)), 0.05), (((0.0, 0.0), (0.0, -0.45)), 0.05)
_LEG, _FOOT = (((0.0, 0.25), (0.0, -0.25)), 0.04), (((-0.26, 0.1), (0.13, 0.1)), 0.06)


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


def _turn(angle: np.ndarray, point) -> np.ndarray:
    """(x, z) ``point`` (a pair, or (2, T)) turned by ``angle`` (T,) about +y, as MuJoCo turns a body's frame."""
    c, s = np.cos(angle), np.sin(angle)
    x, z = (np.asarray(point, np.float64).reshape(2, -1))
    return np.stack([c * x + s * z, -s * x + c * z])


def body_bottom(obs: np.ndarray) -> np.ndarray:
    """The height (metres) of the lowest point of Hopper-v5's body (torso, thigh, leg and foot capsules) at each step,
    from its observations (T, >= 5): obs[:, :5] = qpos[1:6] (torso height, pitch, thigh, leg and foot hinge angles;
    the hinges turn about -y). Planar forward kinematics of its hopper.xml; x is left out (rootx is not observed)."""
    q = np.asarray(obs, np.float64)
    z, pitch, thigh, leg, foot = (q[:, i] for i in range(5))
    origin = np.stack([np.zeros_like(z), z])
    thigh_angle = pitch - thigh
    thigh_origin = origin + _turn(pitch, _THIGH_IN_TORSO)
    leg_angle = thigh_angle - leg
    hinge = np.array(_LEG_HINGE)
    leg_origin = thigh_origin + _turn(thigh_angle, _LEG_IN_THIGH) + _turn(thigh_angle, hinge) - _turn(leg_angle, hinge)
    foot_angle = leg_angle - foot
    hinge = np.array(_FOOT_HINGE)
    foot_origin = leg_origin + _turn(leg_angle, _FOOT_IN_LEG) + _turn(leg_angle, hinge) - _turn(foot_angle, hinge)
    bottoms = []
    for body_origin, angle, (ends, radius) in ((origin, pitch, _TORSO), (thigh_origin, thigh_angle, _THIGH),
                                               (leg_origin, leg_angle, _LEG), (foot_origin, foot_angle, _FOOT)):
        bottoms += [(body_origin + _turn(angle, end))[1] - radius for end in ends]
    return np.min(bottoms, axis=0)


def _air_steps(obs: np.ndarray) -> np.ndarray:
    """(T - 1,) bool: step t -> t + 1 made with the whole body off the ground at both ends."""
    air = body_bottom(obs) > AIRBORNE_M
    return air[:-1] & air[1:]


def air_rotation(obs: np.ndarray) -> float:
    """Backward rotation (radians) of Hopper-v5's torso made in the air (no part on the ground), over the clip."""
    obs = np.asarray(obs, np.float64)
    return float(-(_pitch_steps(obs[:, HOPPER_PITCH]) * _air_steps(obs)).sum())


def landed_backflips(obs: np.ndarray, dt: float = HOPPER_DT) -> int:
    """Backflips that land, in Hopper-v5's observations (T, D) of an episode or a clip (the module docstring): full
    backward turns at least AIR_SHARE made in the air, then standing on the foot with the torso above LANDED_HEIGHT_M
    and within UPRIGHT_RAD of upright at some step within LANDING_S, before any reset."""
    obs = np.asarray(obs, np.float64)
    if obs.ndim != 2 or obs.shape[1] < 5:
        raise ValueError(f"landed_backflips needs Hopper-v5's observations (T, >= 5), got shape {obs.shape}")
    pitch, height = obs[:, HOPPER_PITCH], obs[:, HOPPER_HEIGHT]
    raw = np.diff(pitch)
    reset = np.abs(raw) > RESET_JUMP  # step t -> t + 1 is a reset of the env
    back = np.concatenate([[0.0], np.cumsum(np.where(reset, 0.0, -raw))])  # backward rotation up to each step
    air = np.concatenate([[0.0], np.cumsum(np.where(reset | ~_air_steps(obs), 0.0, -raw))])  # ... in the air
    turned = np.abs(pitch - FULL_TURN * np.round(pitch / FULL_TURN))
    up = (height > LANDED_HEIGHT_M) & (turned <= UPRIGHT_RAD) & (body_bottom(obs) <= AIRBORNE_M)  # on its foot
    hold = max(1, int(round(STAND_S / dt)))
    ups = np.concatenate([[0], np.cumsum(up)])
    resets = np.concatenate([[0], np.cumsum(reset)])
    stands = np.zeros(len(obs), bool)  # standing from step s for ``hold`` steps, no reset among them
    last = len(obs) - hold + 1
    if last > 0:
        s = np.arange(last)
        stands[:last] = (ups[s + hold] - ups[s] == hold) & (resets[s + hold - 1] - resets[s] == 0)
    window = int(round(LANDING_S / dt))
    flips, start = 0, 0  # start: the most forward point since the last flip (or reset)
    for t in range(1, len(obs)):
        if reset[t - 1]:
            start = t
        elif back[t] - back[start] >= FULL_TURN:
            if air[t] - air[start] >= AIR_SHARE * FULL_TURN:
                end = min(len(obs), t + window + 1)
                later = np.flatnonzero(reset[t:end - 1])  # a reset ends the window: its start pose is no landing
                if later.size:
                    end = t + later[0] + 1
                flips += bool(stands[t:end].any())
            start = t
        elif back[t] < back[start]:
            start = t
    return flips


def hopper_landed_backflip(obs: np.ndarray, actions: np.ndarray, info: dict) -> float:
    """The backflip's score (backward rotation plus HEIGHT_WEIGHT times the torso's mean height), the backward
    rotation made in the air once more, and LANDING_BONUS per landed flip: the module's docstring says why each."""
    obs = np.asarray(obs, np.float64)
    return hopper_backflip(obs, actions, info) + air_rotation(obs) + LANDING_BONUS * landed_backflips(obs)


hopper_landed_backflip.env_kwargs = {"terminate_when_unhealthy": False}
hopper_landed_backflip.env_ids = ("Hopper-v5",)
hopper_landed_backflip.measure = ("landed_backflips", landed_backflips)


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


ENDURO_PASS_COST = 1.0  # per pass, either way
ENDURO_CRASH_COST = 2.0  # per crash begun in the clip
ENDURO_LEVEL_PAY = 1.0  # times the share of the clip's steps with a car alongside and no crash


def enduro_with_cars(obs: np.ndarray, actions: np.ndarray, info: dict) -> float:
    """Enduro as the paper's labellers were asked to judge it (the module's docstring): ``obs`` the RAM after each
    step (T, 128), ``info["reward"]`` the game's reward per step."""
    f = enduro.figures(obs, info["reward"])
    return ENDURO_LEVEL_PAY * f["level_share"] - ENDURO_PASS_COST * f["passes"] - ENDURO_CRASH_COST * f["crashes"]


enduro_with_cars.reads = "atari"
enduro_with_cars.env_kwargs = {}
enduro_with_cars.env_ids = ("EnduroNoFrameskip-v4",)
enduro_with_cars.measure = ("passes, level_share, crashes", enduro.figures)

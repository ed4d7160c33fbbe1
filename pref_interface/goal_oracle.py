"""The goal oracle: a scripted labeller that wants something the env does not reward (issue 30).

Where the synthetic oracle (oracle.py) prefers the clip with more of the task's reward, ``GoalOracle`` prefers
the clip a goal function scores higher (pref_interface/goals.py says what a goal is; equal scores tie).
A Box-action env's ``Segment.obs`` is (T, D + A) float32, each row the raw observation then the clipped
action (issue 29's contract, item 1), so the oracle splits it at the env's D. Segments carry no per-step env
info yet: the goal gets ``info={}`` (the shipped goals read only observations). An Atari goal (``reads = "atari"``)
gets an Atari segment as the game's state: its ``states`` (the console's RAM after each step, which a watched env
records: envs/atari_watch.py), no actions, and ``info={"reward": true_rewards}``.

``load_goal("MODULE:FUNCTION")`` imports a goal; ``check_goal(spec, env_id)`` also tries it on one short clip
of random actions in the env, before a run starts. Both raise ValueError with one line naming what is wrong:
a spec not of that form, a module that does not import, a missing function, a goal for another env, a goal
that raises on the clip or returns something other than a finite number.
"""
from __future__ import annotations

import importlib
import math
import numbers

import numpy as np

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment
from envs.goal_kwargs import kwargs_of

TRIAL_STEPS = 25  # the trial clip's length: short, and long enough to cross a step or two of anything
EXAMPLE = "pref_interface.goals:hopper_backflip"


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def load_goal(spec: str):
    """The function ``spec`` ("MODULE:FUNCTION") names; ValueError (one line) if it cannot be had."""
    module_name, sep, name = str(spec).partition(":")
    if not sep or not module_name or not name.isidentifier():
        raise ValueError(f"--oracle_goal must be MODULE:FUNCTION (e.g. {EXAMPLE}), got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # ImportError, or whatever the module raises as it runs
        raise ValueError(f"--oracle_goal {spec}: module {module_name} does not import ({_one_line(e)})") from None
    goal = getattr(module, name, None)
    if goal is None:
        raise ValueError(f"--oracle_goal {spec}: module {module_name} has no {name}")
    if not callable(goal):
        raise ValueError(f"--oracle_goal {spec}: {name} in {module_name} is a {type(goal).__name__}, not a function")
    return goal


def goal_env_kwargs(spec: str) -> dict:
    """The ``gym.make`` kwargs of the goal ``spec`` names ({} for no goal, ""): what every env of its run is made
    with (the policy's, the predictor's shape, watch's). ValueError (one line) as ``load_goal``."""
    return kwargs_of(load_goal(spec)) if spec else {}


def goal_line(spec: str, env_id: str) -> str:
    """The start line of a run with a goal: who labels by it, and the env kwargs its envs are made with."""
    kwargs = goal_env_kwargs(spec)
    made = f"{env_id} made with {kwargs}" if kwargs else f"{env_id} made as gymnasium registers it"
    return (f"[run] oracle goal {spec}: the scripted labeller prefers the clip it scores higher (not the task's "
            f"reward); {made}")


def reads_atari(goal) -> bool:
    """Whether ``goal`` scores Atari clips by the game's RAM and rewards (goals.py), not Box observations."""
    return getattr(goal, "reads", "") == "atari"


def measure_of(goal):
    """(name, function of an episode's observations (T, D)) that ``watch`` reports per episode, or None."""
    measure = getattr(goal, "measure", None)
    return tuple(measure) if measure else None


def score(goal, obs: np.ndarray, actions: np.ndarray, info: dict, spec: str = "") -> float:
    """``goal(obs, actions, info)`` as a float; ValueError (one line) if it raises or returns no finite number."""
    name = spec or getattr(goal, "__name__", repr(goal))
    try:
        value = goal(obs, actions, info)
    except Exception as e:
        raise ValueError(f"--oracle_goal {name} raised on a clip of {len(obs)} steps: {_one_line(e)}") from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"--oracle_goal {name} returned a {type(value).__name__}, not a number")
    if not math.isfinite(float(value)):
        raise ValueError(f"--oracle_goal {name} returned {float(value)} on a clip of {len(obs)} steps")
    return float(value)


def trial_clip(env_id: str, env_kwargs: dict, steps: int = TRIAL_STEPS, seed: int = 0):
    """(obs (T, D) float32, actions (T, A) float32) of ``steps`` random actions in ``env_id``, obs[t] the
    observation action t was taken in, as a Box-action segment holds them."""
    import gymnasium as gym

    env = gym.make(env_id, **env_kwargs)
    try:
        ob, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        obs, actions = [], []
        for _ in range(steps):
            action = env.action_space.sample()
            obs.append(ob)
            actions.append(np.clip(action, env.action_space.low, env.action_space.high))
            ob, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                ob, _ = env.reset()
        return np.asarray(obs, np.float32), np.asarray(actions, np.float32)
    finally:
        env.close()


def atari_trial_clip(env_id: str, steps: int = TRIAL_STEPS, seed: int = 0):
    """(RAM (T, 128) float64, rewards (T,) float32) of ``steps`` random actions in the Atari game ``env_id``, as a
    watched env's segment holds them."""
    from envs.atari import AtariVecEnv

    env = AtariVecEnv(env_id, 1, n_threads=1, watch_steps=steps)
    try:
        env.reset(seed)
        rng = np.random.default_rng(seed)
        rewards = [env.step(rng.integers(0, env.n_actions, 1)).true_reward[0] for _ in range(steps)]
        return env.watch.states(0, 0, steps), np.asarray(rewards, np.float32)
    finally:
        env.close()


def check_goal(spec: str, env_id: str):
    """Import the goal ``spec`` names and try it on one short clip of random actions in ``env_id``: the goal,
    or ValueError with one line (``load_goal``'s errors, a goal for other envs, env kwargs the env refuses, a
    goal that raises or returns no finite number)."""
    goal = load_goal(spec)
    env_ids = getattr(goal, "env_ids", None)
    if env_ids and env_id not in env_ids:
        raise ValueError(f"--oracle_goal {spec} is for {', '.join(env_ids)}, not {env_id}")
    if reads_atari(goal):
        from envs.atari_ids import atari_game

        if atari_game(env_id) is None:
            raise ValueError(f"--oracle_goal {spec} scores Atari clips; {env_id} is not an Atari game")
        ram, rewards = atari_trial_clip(env_id)
        score(goal, ram, np.zeros((len(ram), 0), np.float32), {"reward": rewards}, spec)
        return goal
    try:
        obs, actions = trial_clip(env_id, kwargs_of(goal))
    except Exception as e:
        raise ValueError(f"--oracle_goal {spec}: {env_id} with the goal's env kwargs {kwargs_of(goal)} "
                         f"does not run ({_one_line(e)})") from None
    score(goal, obs, actions, {}, spec)
    return goal


class GoalOracle:
    """Labels two Box-action segments by a goal's score: the higher one preferred, equal scores a tie.

    ``obs_dim``: the env's observation length D; each ``Segment.obs`` row is D observation values then the
    action's A. ``spec``: the goal's name, for the run record and messages. An Atari goal (``reads_atari``) scores a
    segment's recorded RAM (``Segment.states``) and true rewards instead (``obs_dim`` unused).
    """

    def __init__(self, goal, obs_dim: int, spec: str = ""):
        self.goal, self.obs_dim, self.spec = goal, int(obs_dim), spec or getattr(goal, "__name__", "goal")
        self.name = f"goal {self.spec}"

    def score(self, segment: Segment) -> float:
        if reads_atari(self.goal):
            if segment.states is None:
                raise ValueError(f"goal oracle: {self.spec} reads an Atari clip's RAM, and this {segment.env_id} clip "
                                 f"recorded none (its env was not watched: envs/atari_watch.py)")
            return score(self.goal, segment.states, np.zeros((segment.length, 0), np.float32),
                         {"reward": segment.true_rewards}, self.spec)
        x = segment.obs
        if x.ndim != 2 or x.shape[1] <= self.obs_dim:
            raise ValueError(f"goal oracle: a segment's obs must be (T, {self.obs_dim} + actions), got {x.shape}")
        return score(self.goal, x[:, : self.obs_dim], x[:, self.obs_dim:], {}, self.spec)

    def label(self, segment_1: Segment, segment_2: Segment) -> tuple[float, float]:
        s1, s2 = self.score(segment_1), self.score(segment_2)
        if s1 > s2:
            return MU_LEFT
        if s2 > s1:
            return MU_RIGHT
        return MU_EQUAL


def goal_oracle_for(spec: str, env_id: str) -> GoalOracle:
    """``check_goal`` then a ``GoalOracle`` with the env's observation length."""
    import gymnasium as gym

    goal = check_goal(spec, env_id)
    if reads_atari(goal):
        return GoalOracle(goal, 0, spec)
    env = gym.make(env_id, **kwargs_of(goal))
    obs_dim = int(np.prod(env.observation_space.shape))
    env.close()
    return GoalOracle(goal, obs_dim, spec)

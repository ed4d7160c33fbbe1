"""Fixed-length episodes, as the paper had them: a fall costs reward and puts the robot back; it ends no episode.

The paper (Christiano et al. 2017, Appendix A, "Experimental Details"):

    "Many RL environments have termination conditions that depend on the behavior of the agent, such as
    ending an episode when the agent dies or falls over. We found that such termination conditions encode
    information about the task even when the reward function is not observable. [...] we removed all
    variable-length episodes: In the Gym versions of our robotics tasks, the episode ends when certain
    parameters go outside of a prescribed range (for example when the robot falls over). We replaced these
    termination conditions by a penalty which encourages the parameters to remain in the range (and which
    the agent must learn)."

and A.1: "The OpenAI Gym continuous control tasks penalize large torques. Because torques are not directly
visible to a human supervisor, these reward functions are not good representatives of human preferences over
trajectories and so we removed them."

What ``FixedLength`` does when the env it wraps terminates (the robot fell, the pole tipped over):

* the episode goes on: ``terminated`` is never True; the episode ends only by gymnasium's ``TimeLimit``
  (``truncated``), so every episode has the task's registered length (1,000 steps; CartPole-v1 500);
* the step's reward is lowered by ``fall_penalty`` (default ``FALL_PENALTY``);
* the robot is put back: the wrapped env's own reset (``env.unwrapped.reset()``, with the env's own random
  generator, so a seeded run stays reproducible) puts the physics into a fresh start state; the steps keep
  counting toward the fixed length (TimeLimit's counter is outside the reset). The observation returned is
  the fresh start's (the policy acts on the state it is really in); the fallen one is in
  ``info["fall_observation"]``, for whatever must show the fall itself (the predictor's view of that step).

How the paper's own code did it (rl-teacher, ``NeverDone``): the episode went on without a reset, the fallen
robot lying there, with a per-step bonus of (torso height - threshold). A Hopper or Walker that has fallen
cannot get up, so the rest of such an episode teaches nothing; the reset here keeps every step useful, as the
paper did for Atari ("we do continue to actually reset the environment").

**The penalty, FALL_PENALTY = 100.** The paper gives no value. In the task as gymnasium wrote it a fall
ends the episode and so forfeits every reward still to come: at the least the healthy (survive) reward, 1 per
step in Hopper, Walker2d, Ant, InvertedPendulum and CartPole (10 in InvertedDoublePendulum), which a
discount of 0.995 (the paper's) values at up to 1 / (1 - 0.995) = 200 steps. 100 is half that: large enough
that falling on purpose never pays (a dive earns Hopper's forward reward, about 1-3 per step, for the 20-40
steps it takes to fall, less than 100), small enough that one fall does not swamp a 1,000-step return.
Change it per run with ``fall_penalty``; ``describe()`` says what was chosen, for the start line and the
run record.

**The reward reported in ``info``** (every step, every env this module makes):

* ``info["reward_env"]``: the env's own reward (its control cost included), minus the fall penalty;
* ``info["reward_task"]``: the same without the control (torque) cost (``info["reward_ctrl"]``, which
  gymnasium's -v5 MuJoCo envs report, signed, every step): what the synthetic oracle pays, as in the paper.
  Ant's contact cost (``reward_contact``, 5e-4 x the clipped contact forces) stays in: the issue removes the
  torque penalty only. Envs without a control cost (InvertedPendulum, InvertedDoublePendulum, CartPole): the
  two are equal;
* ``info["fell"]``: True on the step where the robot fell (and was put back).

The step's reward itself is ``reward_env``. Tasks that never end early (HalfCheetah, Swimmer, Reacher) pass
through ``fixed_length_env`` with only the ``info`` keys added (``PassThrough``). This module knows nothing of
learning and imports nothing of drlhp.
"""
from __future__ import annotations

import gymnasium as gym

FALL_PENALTY = 100.0  # reward lost per fall; why 100: the module's docstring

# Tasks whose gymnasium episode ends when the agent falls (leaves its healthy range): made fixed-length here.
FALLING_ENV_IDS = ("Hopper-v5", "Walker2d-v5", "Ant-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5",
                   "CartPole-v1")
# Tasks that never end early: only the TimeLimit ends them; they pass through with the reward keys added.
NEVER_ENDING_ENV_IDS = ("HalfCheetah-v5", "Swimmer-v5", "Reacher-v5")


def _control_cost(info: dict) -> float:
    """The control (torque) cost this step, >= 0: minus gymnasium's signed ``reward_ctrl`` (0 without it)."""
    return -float(info.get("reward_ctrl", 0.0))


class PassThrough(gym.Wrapper):
    """A task that never ends early: steps as they come, with ``reward_env`` and ``reward_task`` in ``info``."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["reward_env"] = float(reward)
        info["reward_task"] = float(reward) + _control_cost(info)
        info["fell"] = False
        return obs, reward, terminated, truncated, info


class FixedLength(gym.Wrapper):
    """Turns the wrapped env's termination (a fall) into a penalty and a reset inside the same episode.

    Wrap OUTSIDE gymnasium's TimeLimit (``gym.make``'s env is already inside one): the reset after a fall goes
    to ``env.unwrapped``, so TimeLimit's step counter runs on and the episode keeps its fixed length.
    """

    def __init__(self, env: gym.Env, fall_penalty: float = FALL_PENALTY):
        super().__init__(env)
        if fall_penalty < 0:
            raise ValueError(f"fall_penalty must be >= 0 (a cost), got {fall_penalty}")
        self.fall_penalty = float(fall_penalty)
        self.falls = 0  # falls in this episode

    def reset(self, **kwargs):
        self.falls = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reward = float(reward)
        task = reward + _control_cost(info)
        info["fell"] = bool(terminated)
        if terminated:
            self.falls += 1
            reward -= self.fall_penalty
            task -= self.fall_penalty
            info["fall_observation"] = obs
            obs, _ = self.env.unwrapped.reset()  # the env's own generator: no seed, so no reseeding
        info["reward_env"] = reward
        info["reward_task"] = task
        info["falls"] = self.falls
        return obs, reward, False, truncated, info


def episode_length(env_id: str) -> int:
    """The task's fixed episode length: its registered TimeLimit (gymnasium's max_episode_steps)."""
    steps = gym.spec(env_id).max_episode_steps
    if not steps:
        raise ValueError(f"{env_id} has no registered episode length (max_episode_steps)")
    return int(steps)


def describe(env_id: str, fall_penalty: float = FALL_PENALTY, make_kwargs: dict | None = None) -> str:
    """One line for the start of a run and its record: what this module does to ``env_id``'s episodes
    (made with ``make_kwargs``: a goal's ``terminate_when_unhealthy=False`` means no fall ever ends them)."""
    if (make_kwargs or {}).get("terminate_when_unhealthy") is False:
        return (f"{env_id}: episodes of {episode_length(env_id):,} steps; terminate_when_unhealthy=False: the "
                f"task never ends early, so nothing is a fall (no penalty, no reset)")
    if env_id not in FALLING_ENV_IDS and env_id not in NEVER_ENDING_ENV_IDS:
        return (f"{env_id}: episodes end as gymnasium ends them (not in envs/fixed_length.py's tables: whether an "
                f"end is a fall is not known here, so nothing is changed)")
    length = episode_length(env_id)
    if env_id in FALLING_ENV_IDS:
        return (f"{env_id}: fixed-length episodes of {length:,} steps; a fall costs {fall_penalty:g} reward and "
                f"puts the robot back at a start state, the episode goes on (the paper's Appendix A)")
    return f"{env_id}: episodes of {length:,} steps; the task never ends early (nothing changed)"


def fixed_length_env(env_id: str, fall_penalty: float = FALL_PENALTY, **make_kwargs) -> gym.Env:
    """``gym.make(env_id, **make_kwargs)`` (e.g. a goal's ``terminate_when_unhealthy=False``, with which
    Hopper-v5 never ends early: a flip is no fall) with fixed-length episodes (``FixedLength``) or, for a task
    that never ends early, ``PassThrough``; ValueError for an id in neither table (say which it is before
    running it here)."""
    if env_id not in FALLING_ENV_IDS and env_id not in NEVER_ENDING_ENV_IDS:
        raise ValueError(f"{env_id}: not known to envs/fixed_length.py; tasks that end on a fall: "
                         f"{', '.join(FALLING_ENV_IDS)}; tasks that never end early: {', '.join(NEVER_ENDING_ENV_IDS)}")
    env = gym.make(env_id, **make_kwargs)
    if env_id in FALLING_ENV_IDS:
        return FixedLength(env, fall_penalty)
    return PassThrough(env)


def fixed_length_vector_env(env_id: str, n_envs: int, fall_penalty: float = FALL_PENALTY,
                            **make_kwargs) -> gym.vector.SyncVectorEnv:
    """``n_envs`` copies of ``fixed_length_env`` in one gymnasium ``SyncVectorEnv``, resetting in the same step
    (an episode's last observation in ``info["final_obs"]``; the one returned is the next episode's first)."""
    fns = [lambda: fixed_length_env(env_id, fall_penalty, **make_kwargs) for _ in range(n_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)



def any_vector_env(env_id: str, n_envs: int, fall_penalty: float = FALL_PENALTY,
                   **make_kwargs) -> gym.vector.SyncVectorEnv:
    """``fixed_length_vector_env`` for a task in this module's tables; any other gymnasium id as gymnasium ends
    its episodes (``PassThrough``: the reward keys added, nothing changed; ``describe`` says so)."""
    if env_id in FALLING_ENV_IDS or env_id in NEVER_ENDING_ENV_IDS:
        return fixed_length_vector_env(env_id, n_envs, fall_penalty, **make_kwargs)
    fns = [lambda: PassThrough(gym.make(env_id, **make_kwargs)) for _ in range(n_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)

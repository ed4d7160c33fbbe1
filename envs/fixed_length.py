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

What ``FixedLength`` does when the env it wraps says the episode is over (the robot fell, the pole tipped over:
the step left the task's healthy range) depends on its rule, ``fall_rule`` (``--fall_rule``):

* under "reset", "penalty" and "none" the episode goes on: ``terminated`` is never True; the episode ends only by
  gymnasium's ``TimeLimit`` (``truncated``), so every episode has the task's registered length (1,000 steps;
  CartPole-v1 500);
* ``"reset"`` (the default): the step's reward is lowered by ``fall_penalty`` (default ``FALL_PENALTY``, 100)
  once, and the robot is put back: the wrapped env's own reset (``env.unwrapped.reset()``, with the env's own
  random generator, so a seeded run stays reproducible) puts the physics into a fresh start state; the steps keep
  counting toward the fixed length (TimeLimit's counter is outside the reset). The observation returned is the
  fresh start's (the policy acts on the state it is really in); the fallen one is in ``info["fall_observation"]``,
  and drlhp's vector envs give it as the observation the step led to (what the predictor scores and a clip shows
  of the fall step: ``fall_observations``);
* ``"penalty"`` (the paper's words, and rl-teacher's ``NeverDone``): nothing is put back. Every step that ends
  outside the healthy range costs ``fall_step_penalty`` (default ``FALL_STEP_PENALTY``, 1), the simulation goes
  on from where the robot lies, and the robot gets up if it can (a step back inside the range costs nothing).
  gymnasium's -v5 tasks recompute their end condition from the state at every step, so "the wrapped env says
  terminated" is "this step is out of range" under this rule too. The policy and the predictor see the fallen
  robot. With ``fall_hold_steps`` H > 0 (``--fall_hold_steps``; issue 38's H48: a fall that lasts, then a reset),
  a robot out of range H steps in a row is then put back as the reset rule puts it back (its fallen observation in
  ``info["fall_observation"]``): each fall lasts at most H charged steps, and the episode keeps teaching;
* ``"end"``: no fixed length, the episode ends at a fall as gymnasium ends it (``PassThrough``, the reward keys
  added, ``fell`` True on the last step). Not the paper's: it is for PPO paid gymnasium's standard reward in
  gymnasium's own episodes, the measure published PPO figures use (the MuJoCo table's side column);
* ``"none"``: no healthy range at all. Nothing is a fall: the wrapped env's ``terminated`` is ignored, nothing is
  charged, nothing is put back, ``info["fell"]`` is never True and ``falls`` stays 0; the robot may lean, lie or
  turn over and the simulation goes on from there to the fixed length. For a task whose goal is to leave the range,
  such as a person teaching a Hopper a backflip (``pref_interface/goals.py``'s ``hopper_landed_backflip``), which the
  reset rule puts back and the penalty rule charges and marks as a fall on every step of the turn. The reward is
  the env's own (gymnasium's -v5 tasks still pay their healthy reward only in range: it is the reward, not a
  fall). The same episodes as ``gym.make(env_id, terminate_when_unhealthy=False)`` (a goal's ``env_kwargs``), by
  this wrapper on every task it applies to. Only where the range is not the task (Hopper, Walker2d, Ant:
  ``NO_RANGE_ENV_IDS``; the tasks that never end early have none to remove): on InvertedPendulum,
  InvertedDoublePendulum and CartPole-v1 the range is the task (they pay for staying in it, and CartPole pays 0
  after its end), and any other id ends its episodes as its game does, so ``fall_rule_problem`` refuses "none"
  there (run.py: one line, exit 2).

Under ``"reset"`` and ``"penalty"``:

How the paper's own code did it (rl-teacher, ``NeverDone``, read from nottombrown/rl-teacher's ``rl_teacher/envs.py``):
the episode went on without a reset, the fallen robot lying there, with the old gym's survive bonus of 1 on every
step and a per-step bonus of (torso height - a threshold): Hopper ``qpos[1] - 1`` (+0.25 standing at 1.25, about
-0.8 lying), Walker2d ``qpos[1] - 2``, Ant ``qpos[2] - 1.2``, InvertedDoublePendulum ``10 (tip height - 1)``. So
a step lying down paid about 1 less than a step standing: a per-step penalty of about the survive bonus.

**The per-step penalty, FALL_STEP_PENALTY = 1 (``--fall_step_penalty``).** gymnasium's -v5 tasks already pay their
healthy reward (1 a step on Hopper, Walker2d, Ant and InvertedPendulum; 10 on InvertedDoublePendulum; CartPole 1)
only while healthy (the -v5 changelog: "healthy_reward was given on every step (even if the Hopper was unhealthy),
now it is only given when the Hopper is healthy"), so a step out of range already earns 1 less than a step in it,
rl-teacher's gap. The rule adds a penalty of the same size on top, so that the paper's "penalty which encourages the
parameters to remain in the range" is a term of its own and not only a bonus withheld: a step lying down is 2 below
a step standing still (Hopper, Walker2d, Ant, InvertedPendulum; 11 on InvertedDoublePendulum), more than a fallen
Hopper or Walker2d earns by sliding forward (random actions, 3 episodes under this rule: a forward reward of -0.03
a step on Hopper's fallen steps, -0.15 on Walker2d's), and the 900 steps left after an early dive cost about
1,800, so a dive never pays; and it is small enough that a return stays on the task's
scale (a 1,000-step return of a robot that never falls is unchanged; one that lies from the start is about -1,000
on Hopper, not -100,000). A per-step penalty of 100 (the reset rule's per fall) would swamp every other reward.

**The penalty per fall of the reset rule, FALL_PENALTY = 100.** The paper gives no value. In the task as gymnasium
wrote it a fall ends the episode and so forfeits every reward still to come: at the least the healthy (survive)
reward, 1 per step in Hopper, Walker2d, Ant, InvertedPendulum and CartPole (10 in InvertedDoublePendulum), which a
discount of 0.995 (the paper's) values at up to 1 / (1 - 0.995) = 200 steps. 100 is half that: large enough
that falling on purpose never pays (a dive earns Hopper's forward reward, about 1-3 per step, for the 20-40
steps it takes to fall, less than 100), small enough that one fall does not swamp a 1,000-step return.
The reset keeps every step useful (a Hopper or Walker that has fallen rarely gets up), as the paper did for Atari
("we do continue to actually reset the environment"); but the predictor then never sees a fallen robot.
Change either size per run (``fall_penalty``, ``fall_step_penalty``); ``describe()`` says what was chosen, for the
start line and the run record.

**The reward reported in ``info``** (every step, every env this module makes):

* ``info["reward_standard"]``: gymnasium's own reward for the step, as the env returned it (control cost in, no
  fall penalty): the standard measure, summed over the same fixed-length episodes;
* ``info["reward_env"]``: the env's own reward (its control cost included), minus the fall penalty (either rule's);
* ``info["reward_task"]``: the same without the control (torque) cost (``info["reward_ctrl"]``, which
  gymnasium's -v5 MuJoCo envs report, signed, every step): what the synthetic oracle pays, as in the paper.
  Ant's contact cost (``reward_contact``, 5e-4 x the clipped contact forces) stays in: the issue removes the
  torque penalty only. Envs without a control cost (InvertedPendulum, InvertedDoublePendulum, CartPole): the
  two are equal;
* ``info["fell"]``: True on every step that left the healthy range (the reset rule: the step of a fall, after
  which the robot is back in range; the penalty rule: every step the robot spends out of range; "none": never);
* ``info["falls"]``: the steps of this episode so far with ``fell`` True.

The step's reward itself is ``reward_env``. Tasks that never end early (HalfCheetah, Swimmer, Reacher) pass
through ``fixed_length_env`` with only the ``info`` keys added (``PassThrough``). This module knows nothing of
learning and imports nothing of drlhp.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

FALL_PENALTY = 100.0  # the reset rule: reward lost per fall; why 100: the module's docstring
FALL_STEP_PENALTY = 1.0  # the penalty rule: reward lost per step out of the healthy range; why 1: the docstring
FALL_RULES = ("reset", "penalty", "end", "none")  # what a fall does (the docstring); drlhp.config.ppo names them too

# Tasks whose gymnasium episode ends when the agent falls (leaves its healthy range): made fixed-length here.
FALLING_ENV_IDS = ("Hopper-v5", "Walker2d-v5", "Ant-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5",
                   "CartPole-v1")
# Tasks that never end early: only the TimeLimit ends them; they pass through with the reward keys added.
NEVER_ENDING_ENV_IDS = ("HalfCheetah-v5", "Swimmer-v5", "Reacher-v5")
# The falling tasks whose healthy range is not the task itself: --fall_rule none removes it (the module's docstring).
# On the others (InvertedPendulum, InvertedDoublePendulum, CartPole-v1) staying in range is what the task pays for.
NO_RANGE_ENV_IDS = ("Hopper-v5", "Walker2d-v5", "Ant-v5")


def fall_rule_problem(env_id: str, fall_rule: str) -> str | None:
    """Why ``fall_rule`` cannot apply to ``env_id``, in one line, or None. Only "none" is refused anywhere: on a
    task whose healthy range is the task, and on any id outside this module's tables (whose episodes end as its
    game ends them: no range here to remove)."""
    if fall_rule != "none" or env_id in NO_RANGE_ENV_IDS or env_id in NEVER_ENDING_ENV_IDS:
        return None
    if env_id in FALLING_ENV_IDS:
        return (f"--fall_rule none removes a robot's healthy range (Hopper, Walker2d, Ant); on {env_id} the range "
                f"is the task itself (its reward pays for staying in it): use --fall_rule reset, penalty or end")
    return (f"--fall_rule none removes the healthy range of {', '.join(NO_RANGE_ENV_IDS)}; {env_id} has none here "
            f"(its episodes end as gymnasium ends them, envs/fixed_length.py): leave --fall_rule out")


def _control_cost(info: dict) -> float:
    """The control (torque) cost this step, >= 0: minus gymnasium's signed ``reward_ctrl`` (0 without it)."""
    return -float(info.get("reward_ctrl", 0.0))


class PassThrough(gym.Wrapper):
    """A task that never ends early, or any task under ``--fall_rule end``: steps as they come, with
    ``reward_standard``, ``reward_env``, ``reward_task`` (equal but for the control cost) and ``fell`` in ``info``."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["reward_standard"] = info["reward_env"] = float(reward)
        info["reward_task"] = float(reward) + _control_cost(info)
        info["fell"] = bool(terminated)  # --fall_rule end: the episode ends here; a task that never ends early: never
        return obs, reward, terminated, truncated, info


class FixedLength(gym.Wrapper):
    """Turns the wrapped env's termination (a step out of the healthy range) into a penalty inside the same
    episode: by ``rule`` "reset", ``fall_penalty`` once and a reset; by "penalty", ``step_penalty`` on every step out
    of range and no reset; by "none", into nothing: no fall, no penalty, no reset (the module's docstring).

    Wrap OUTSIDE gymnasium's TimeLimit (``gym.make``'s env is already inside one): the reset after a fall goes
    to ``env.unwrapped``, so TimeLimit's step counter runs on and the episode keeps its fixed length.
    """

    def __init__(self, env: gym.Env, fall_penalty: float = FALL_PENALTY, rule: str = "reset",
                 step_penalty: float = FALL_STEP_PENALTY, hold_steps: int = 0):
        super().__init__(env)
        if fall_penalty < 0 or step_penalty < 0:
            raise ValueError(f"fall penalties must be >= 0 (a cost), got {fall_penalty} and {step_penalty}")
        if rule not in ("reset", "penalty", "none"):
            raise ValueError(f"FixedLength's fall rule {rule!r}: not reset, penalty or none (\"end\" is PassThrough)")
        if hold_steps < 0 or (hold_steps and rule != "penalty"):
            raise ValueError(f"hold_steps {hold_steps}: a count >= 0, and only under the penalty rule (not {rule!r})")
        self.fall_penalty, self.rule, self.step_penalty = float(fall_penalty), rule, float(step_penalty)
        self.hold_steps = int(hold_steps)
        self.falls = 0  # steps of this episode out of the healthy range (the reset rule: falls)
        self.lying = 0  # steps out of range in a row, up to this one (the penalty rule's hold_steps puts it back)

    def reset(self, **kwargs):
        self.falls = self.lying = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        standard = float(reward)
        cost = 0.0
        if self.rule == "none":
            terminated = False  # no healthy range: the step goes on from wherever the robot is
        info["fell"] = bool(terminated)
        if terminated:
            self.falls += 1
            self.lying += 1
            # reset: a fall costs fall_penalty once; penalty: each step out of range costs step_penalty, the robot
            # staying where it lies (the next step starts from there) until it has lain hold_steps, where set
            cost = self.fall_penalty if self.rule == "reset" else self.step_penalty
            if self.rule == "reset" or (self.hold_steps and self.lying >= self.hold_steps):  # put back
                info["fall_observation"] = obs
                obs, _ = self.env.unwrapped.reset()  # the env's own generator: no seed, so no reseeding
                self.lying = 0
        else:
            self.lying = 0  # in range (never fell, or got up by itself)
        info["reward_standard"] = standard
        info["reward_env"] = standard - cost
        info["reward_task"] = standard + _control_cost(info) - cost
        info["falls"] = self.falls
        return obs, standard - cost, False, truncated, info


def fall_observations(info: dict, done: np.ndarray) -> dict[int, np.ndarray]:
    """Per worker whose step was a fall under fixed-length episodes' reset rule (this module's ``FixedLength``): the
    observation the fall led to, out of the healthy range (``info["fall_observation"]``; the observation the env
    returned is already a fresh start). A same-step-autoreset vector env keeps a finished episode's step info in
    ``final_info``: a fall on an episode's last step is read there.

    Why it matters (issue 39): the predictor scores the observation each step led to, and the synthetic oracle
    charges the fall's penalty on that step; scored on the fresh start, the penalty was learned as a property of a
    centred, upright, still pole, the state a perfect balancer keeps, so the predictor paid balancing less than
    leaning and drifting (CartPole preset, seed 0: a fall-free balancer -23.6 a 500-step episode, its own policy
    with 3.6 falls -1.4)."""
    out: dict[int, np.ndarray] = {}
    final = info.get("final_info") or {}
    for source, mask in ((info, None), (final, np.asarray(done, bool))):
        if "fall_observation" in source:
            has = np.asarray(source["_fall_observation"], bool)
            for i in np.flatnonzero(has if mask is None else has & mask):
                out[int(i)] = np.asarray(source["fall_observation"][i])
    return out


def led_to(obs: np.ndarray, info: dict, ended: np.ndarray, same_step: bool = True) -> np.ndarray:
    """(N, ...): the observation each worker's step led to, from a vector env's step (a copy of ``obs``, its dtype
    kept): with same-step autoreset an ended episode's last observation (``info["final_obs"]``) where it ended (with
    next-step autoreset ``obs`` is that already), and the fallen state where the step fell under the reset rule
    (``fall_observations``: the robot is back at its start in ``obs``)."""
    out = np.array(obs)
    if same_step:
        for i in np.flatnonzero(ended):
            out[i] = info["final_obs"][i]
    for i, fallen in fall_observations(info, ended).items():
        out[i] = fallen
    return out


def episode_length(env_id: str) -> int:
    """The task's fixed episode length: its registered TimeLimit (gymnasium's max_episode_steps)."""
    steps = gym.spec(env_id).max_episode_steps
    if not steps:
        raise ValueError(f"{env_id} has no registered episode length (max_episode_steps)")
    return int(steps)


def describe(env_id: str, fall_penalty: float = FALL_PENALTY, make_kwargs: dict | None = None, *,
             fall_rule: str = "reset", fall_step_penalty: float = FALL_STEP_PENALTY, fall_hold_steps: int = 0) -> str:
    """One line for the start of a run and its record: what this module does to ``env_id``'s episodes
    (made with ``make_kwargs``: a goal's ``terminate_when_unhealthy=False`` means no fall ever ends them);
    ValueError where ``fall_rule`` cannot apply (``fall_rule_problem``: run.py has refused it before)."""
    problem = fall_rule_problem(env_id, fall_rule)
    if problem:
        raise ValueError(problem)
    if (make_kwargs or {}).get("terminate_when_unhealthy") is False:
        return (f"{env_id}: episodes of {episode_length(env_id):,} steps; terminate_when_unhealthy=False: the "
                f"task never ends early, so nothing is a fall (no penalty, no reset)")
    if env_id not in FALLING_ENV_IDS and env_id not in NEVER_ENDING_ENV_IDS:
        return (f"{env_id}: episodes end as gymnasium ends them (not in envs/fixed_length.py's tables: whether an "
                f"end is a fall is not known here, so nothing is changed)")
    length = episode_length(env_id)
    if env_id in FALLING_ENV_IDS and fall_rule == "none":
        return (f"{env_id}: fixed-length episodes of {length:,} steps; --fall_rule none: no healthy range, nothing is "
                f"a fall (no penalty, no reset: the robot may turn over), the env's own reward")
    if env_id in FALLING_ENV_IDS and fall_rule == "end":
        return (f"{env_id}: --fall_rule end: episodes end at a fall as gymnasium ends them (at most {length:,} steps; "
                f"gymnasium's own episodes, not the paper's fixed-length ones)")
    if env_id in FALLING_ENV_IDS and fall_rule == "penalty" and fall_hold_steps:
        return (f"{env_id}: fixed-length episodes of {length:,} steps; --fall_rule penalty --fall_hold_steps "
                f"{fall_hold_steps}: every step out of the healthy range costs {fall_step_penalty:g} reward, and a "
                f"robot out of range {fall_hold_steps} steps in a row is put back at a start state; the episode "
                f"goes on")
    if env_id in FALLING_ENV_IDS and fall_rule == "penalty":
        return (f"{env_id}: fixed-length episodes of {length:,} steps; --fall_rule penalty: every step out of the "
                f"healthy range costs {fall_step_penalty:g} reward, nothing is put back, the episode goes on (the "
                f"paper's Appendix A)")
    if env_id in FALLING_ENV_IDS:
        return (f"{env_id}: fixed-length episodes of {length:,} steps; a fall costs {fall_penalty:g} reward and "
                f"puts the robot back at a start state, the episode goes on (the paper's Appendix A)")
    return f"{env_id}: episodes of {length:,} steps; the task never ends early (nothing changed)"


def fixed_length_env(env_id: str, fall_penalty: float = FALL_PENALTY, *, fall_rule: str = "reset",
                     fall_step_penalty: float = FALL_STEP_PENALTY, fall_hold_steps: int = 0, **make_kwargs) -> gym.Env:
    """``gym.make(env_id, **make_kwargs)`` (e.g. a goal's ``terminate_when_unhealthy=False``, with which
    Hopper-v5 never ends early: a flip is no fall) with fixed-length episodes (``FixedLength``) or, for a task
    that never ends early, ``PassThrough``; ValueError for an id in neither table (say which it is before
    running it here). ``fall_rule``, ``fall_step_penalty``, ``fall_hold_steps``: what a fall does (the module's
    docstring)."""
    if env_id not in FALLING_ENV_IDS and env_id not in NEVER_ENDING_ENV_IDS:
        raise ValueError(f"{env_id}: not known to envs/fixed_length.py; tasks that end on a fall: "
                         f"{', '.join(FALLING_ENV_IDS)}; tasks that never end early: {', '.join(NEVER_ENDING_ENV_IDS)}")
    if fall_rule not in FALL_RULES:
        raise ValueError(f"fall rule {fall_rule!r}: not one of {', '.join(FALL_RULES)}")
    problem = fall_rule_problem(env_id, fall_rule)
    if problem:
        raise ValueError(problem)
    env = gym.make(env_id, **make_kwargs)
    if env_id in FALLING_ENV_IDS and fall_rule != "end":
        return FixedLength(env, fall_penalty, fall_rule, fall_step_penalty, fall_hold_steps)
    return PassThrough(env)


def fixed_length_vector_env(env_id: str, n_envs: int, fall_penalty: float = FALL_PENALTY, *, fall_rule: str = "reset",
                            fall_step_penalty: float = FALL_STEP_PENALTY, fall_hold_steps: int = 0,
                            **make_kwargs) -> gym.vector.SyncVectorEnv:
    """``n_envs`` copies of ``fixed_length_env`` in one gymnasium ``SyncVectorEnv``, resetting in the same step
    (an episode's last observation in ``info["final_obs"]``; the one returned is the next episode's first)."""
    fns = [lambda: fixed_length_env(env_id, fall_penalty, fall_rule=fall_rule, fall_step_penalty=fall_step_penalty,
                                    fall_hold_steps=fall_hold_steps, **make_kwargs) for _ in range(n_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


def any_vector_env(env_id: str, n_envs: int, fall_penalty: float = FALL_PENALTY, *, fall_rule: str = "reset",
                   fall_step_penalty: float = FALL_STEP_PENALTY, fall_hold_steps: int = 0,
                   **make_kwargs) -> gym.vector.SyncVectorEnv:
    """``fixed_length_vector_env`` for a task in this module's tables; any other gymnasium id as gymnasium ends
    its episodes (``PassThrough``: the reward keys added, nothing changed; ``describe`` says so)."""
    if env_id in FALLING_ENV_IDS or env_id in NEVER_ENDING_ENV_IDS:
        return fixed_length_vector_env(env_id, n_envs, fall_penalty, fall_rule=fall_rule,
                                       fall_step_penalty=fall_step_penalty, fall_hold_steps=fall_hold_steps,
                                       **make_kwargs)
    problem = fall_rule_problem(env_id, fall_rule)
    if problem:
        raise ValueError(problem)
    fns = [lambda: PassThrough(gym.make(env_id, **make_kwargs)) for _ in range(n_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)

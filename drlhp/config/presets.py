"""Named sets of run.py flags, and which one each env starts from.

A preset is only command-line flags: ``python run.py --env MovingDot-v0 --synthetic_prefs`` runs as if the preset's
flags had been typed before the user's own, so any flag given on the command line wins. The preset used is printed
at start and recorded in config.json (``preset``); ``--preset none`` gives drlhp's bare defaults (the paper's Atari
settings, drlhp.config). Why each setting is what it is: the results page named beside it.

    paper       the paper's settings (Christiano et al., 2017, appendix A; drlhp.config's defaults): 25-step clips,
                3 predictors with batch norm and dropout 0.5, 500 initial preferences, 200 pretraining epochs, 3,000
                labels. On 2 cores an Atari predictor pretrains for about an hour before the policy's first step.
    moving-dot  what make run runs: MovingDot from synthetic preferences in at most 100k agent steps, ending as soon
                as the last 100 episodes all succeeded (the dot on the centre): 5-step clips, one predictor without
                batch norm or dropout, 4,000 cheap random-play labels first, pretraining that stops once validation
                accuracy stops rising (docs/results/moving-dot.md).
    atari       every ``<Game>NoFrameskip-v4`` (Pong's recipe, made for all seven of the paper's games; docs/atari.md
                for what differs by game, and it lives in envs/): 10M agent steps, the learning rate's horizon at the
                paper's 80M; labels on the paper's schedule (275 from the random policy, then at a rate falling as
                1 / (T + 5e6 frames)), at most 5,500 (issue 59's step 2); a database of 3,000; one predictor without
                batch norm, trained flat out and at least 0.1 pair-updates per agent step (the paper's; Pong's runs on
                float32 policies gave 0.10-0.12 flat out, and a policy in bfloat16 leaves the predictor less:
                docs/results/speed.md), in float32, its normalization measured from 100 clips at each publication and
                clipped at 10 std; the policy's reward centred on its own running mean over 2,000 agent steps. From
                preferences it picks PPO with CleanRL's Atari settings (DISCRETE_PPO); on the true reward A2C unless
                --algo ppo. A person labels, or the Enduro goal (--oracle_goal): the paper's Enduro run, 1M agent
                steps (4M frames), 1,300 labels (325 from random play). Pong with 10,000 labels: 3 of 3 seeds past
                +15, 2 at +19; with 5,500, seeds 0 and 1 at +19 (docs/results/pong.md).
    pong        the same flags as atari (its name before there was one preset for every game).
    cartpole    CartPole-v1: A2C reaching 475 within 0.5M steps on the true reward; from preferences PPO (CleanRL's
                ppo.py settings) and fixed-length episodes in which a fallen pole stays fallen (--fall_rule penalty).
    mujoco      the eight MuJoCo -v5 tasks: 1M agent steps of PPO, entropy bonus 0 on the true reward. From
                preferences (FOR_PREFERENCES): clips of 1.5 s of simulated time, entropy bonus 0.01, 1,400 labels
                (350 from the random policy, 1,050 on the paper's schedule), the paper's ensemble of 3 MLPs asking the
                pair they disagree on most; HalfCheetah's policy starts at log std -1, Swimmer's discount is 0.9999.
                A person: 2M agent steps, 900 labels. A shipped goal (--oracle_goal, FOR_GOAL): 2M agent steps, at
                most 1,000 labels (docs/results/mujoco.md).
"""
from __future__ import annotations

import argparse
import shlex

from drlhp.config import DEFAULT_MODE, MODES, TRAIN_POLICY_WITH_ORIGINAL_REWARDS, WATCH

# The label budget is the paper's 5,500 (275 from the random policy), issue 59's step 2 (docs/results/pong.md, session
# 36): with it seeds 0 and 1 reached +19, where the 10,000 before (500 + 9,500) had 2 of 3 seeds at +19.
ATARI = ("--million_timesteps 10 --lr_horizon_million_timesteps 80 --label_schedule paper --n_initial_prefs 275 "
         "--n_labels 5225 --max_prefs 3000 --n_initial_epochs 30 --n_predictors 1 --no-reward_batchnorm "
         "--reward_train_fraction 1 --reward_updates_per_step 0.1 --reward_norm_momentum 1 "
         "--reward_norm_segments 100 --reward_clip 10 --reward_center_steps 2000 --ent_coef 0.01 "
         "--ent_coef_switch_million_timesteps 6.3 --ent_coef_after_switch 0.005 --policy_ckpt_interval 500 "
         "--reward_bfloat16 off --reward_tf_threads 2")
PRESETS: dict[str, str] = {
    "none": "",
    "paper": "",
    "moving-dot": ("--million_timesteps 0.1 --segment_length 5 --segments_per_cut 16 --n_initial_prefs 4000 "
                   "--n_initial_epochs 15 --n_labels 6000 --max_prefs 10000 --no-reward_batchnorm "
                   "--reward_dropout 0 --reward_lr 1e-3 --ent_coef 0.01 --n_predictors 1 --tf_intra_threads 1 "
                   "--reward_train_fraction 1 --reward_norm_momentum 1 --reward_eval_interval 50 "
                   "--reward_pretrain_patience 20 --stop_at_success_rate 1"),
    "atari": ATARI,
    "pong": ATARI,  # the atari preset under its name from before there was one for every game
    "cartpole": "--million_timesteps 0.5 --n_envs 8 --ent_coef 0 --lr 1.4e-3",
    "mujoco": "--million_timesteps 1 --ppo_ent_coef 0 --policy_ckpt_interval 50",
}
# What a discrete env's preset adds with --algo ppo: PPO's settings of CleanRL's ppo_atari.py and the SB3 zoo's Atari
# PPO (8 envs x 128 steps, 4 epochs of 4 minibatches of 256, lr 2.5e-4 annealed to 0 at the horizon, clip 0.1 on the
# surrogate and the value, entropy 0.01, gamma 0.99, lambda 0.95; vf_coef 0.5, max_grad_norm 0.5, Adam eps 1e-5 and
# advantage normalization are PPOConfig's defaults already). A2C's flags (--n_envs, --lr, --ent_coef, ...) stay in
# the preset and are not read by PPO; the predictor's and the labels' flags are the preset's, unchanged.
DISCRETE_PPO = ("--ppo_n_envs 8 --ppo_n_steps 128 --ppo_n_epochs 4 --ppo_n_minibatches 4 --ppo_lr 2.5e-4 "
                "--ppo_anneal_lr --ppo_clip_coef 0.1 --ppo_clip_vloss --ppo_ent_coef 0.01 --ppo_vf_coef 0.5 "
                "--ppo_max_grad_norm 0.5 --ppo_gamma 0.99 --ppo_gae_lambda 0.95 --ppo_adam_eps 1e-5 --ppo_norm_adv "
                "--policy_ckpt_interval 40")
# CartPole's PPO (CleanRL's ppo.py: 8 envs x 128 steps, 4 epochs of 4 minibatches, lr 2.5e-4 annealed, clip 0.2,
# entropy 0.01): H40's, with which CartPole learns from preferences on 3 of 3 seeds (issue 39).
CARTPOLE_PPO = ("--ppo_n_envs 8 --ppo_n_steps 128 --ppo_n_epochs 4 --ppo_n_minibatches 4 --ppo_lr 2.5e-4 "
                "--ppo_anneal_lr --ppo_clip_coef 0.2 --ppo_ent_coef 0.01 --ppo_vf_coef 0.5 --ppo_max_grad_norm 0.5 "
                "--ppo_gamma 0.99 --ppo_gae_lambda 0.95 --ppo_norm_adv")
FOR_PPO: dict[str, str] = {"moving-dot": DISCRETE_PPO, "paper": DISCRETE_PPO, "atari": DISCRETE_PPO,
                           "pong": DISCRETE_PPO, "cartpole": CARTPOLE_PPO}
# The algorithm a preset picks when the run learns from preferences and the user gives no --algo (--algo auto: the
# auto rule, A2C on discrete actions).
PREFERENCES_ALGO: dict[str, str] = {"atari": "ppo", "pong": "ppo", "cartpole": "ppo"}
PPO_NOTE = "with --algo ppo"
MUJOCO_ENV_IDS = ("Hopper-v5", "Walker2d-v5", "Swimmer-v5", "HalfCheetah-v5", "Ant-v5", "Reacher-v5",
                  "InvertedPendulum-v5", "InvertedDoublePendulum-v5")
# What a preset changes when a person labels (any --labeller but the oracle): a pace a person can keep.
# mujoco: the paper's backflip took about 900 queries in under an hour of a person's time; 1,400 labels in a 1M-step run
# (6 to 12 minutes on 2 cores) is a pace no one keeps. 250 from the random policy first (the policy waits for them),
# 650 more over 2M agent steps on the paper's schedule, front-loaded: about 20 a minute at the start (a person
# labels 20-25 a minute in the page: docs/results/labelling.md), fewer later.
# A person's Atari run is the paper's Enduro figures (about 1,300 queries over 4M frames: an hour of answers at 3 s
# each, over about an hour of the run on 2 cores, issue 62), not the oracle's 5,500 over 10M agent steps; a quarter
# of them from random play first, as the MuJoCo person's 250 of 900.
ATARI_PERSON = "--million_timesteps 1 --n_initial_prefs 325 --n_labels 975"
FOR_A_PERSON: dict[str, str] = {"atari": ATARI_PERSON, "pong": ATARI_PERSON,
                                "mujoco": "--million_timesteps 2 --n_initial_prefs 250 --n_labels 650"}
PERSON_NOTE = "a person labels, so"

# Clips of 1.5 s of simulated time (the paper's; its "15-60 timesteps" were gym's old step rates): round(1.5 / dt),
# dt = env.unwrapped.dt of gymnasium's -v5 tasks (tests/test_ppo_prefs.py checks them against gymnasium). Hopper and
# Walker2d step at 0.008 s (187.5 -> 188), HalfCheetah, Ant, InvertedDoublePendulum at 0.05, Swimmer and
# InvertedPendulum at 0.04; Reacher steps at 0.02 (75 steps) but its episodes are 50 steps (1 s) long: its clip is one
# whole episode (50), not one and a half with a new target in the middle.
CLIP_SECONDS = 1.5
MUJOCO_CLIP_STEPS: dict[str, int] = {"Hopper-v5": 188, "Walker2d-v5": 188, "HalfCheetah-v5": 30, "Ant-v5": 30,
                                     "InvertedDoublePendulum-v5": 30, "Swimmer-v5": 38, "InvertedPendulum-v5": 38,
                                     "Reacher-v5": 50}
# What a preset adds in the preference modes (every mode but the true reward's and watch). mujoco: the paper's MuJoCo
# settings for the predictor's reward (the module's docstring; why each: docs/results/mujoco.md, sessions 14-22).
FOR_PREFERENCES: dict[str, str] = {
    "cartpole": "--fall_rule penalty",  # H40 (issue 39): a fallen pole stays fallen, no fresh start to fall into
    "mujoco": ("--ppo_ent_coef 0.01 --n_initial_prefs 350 --n_labels 1050 --label_schedule paper --n_predictors 3 "
               "--no-reward_batchnorm --reward_dropout 0 --query_selection variance"),
}
FOR_PREFERENCES_PER_ENV: dict[str, str] = {env_id: f"--segment_length {steps}"
                                           for env_id, steps in MUJOCO_CLIP_STEPS.items()}
# The entropy bonus is 0.01 on every task, the baseline's (PPO on the oracle's reward) 0: one value per arm, H27
# (docs/results/mujoco.md, sessions 18-22). InvertedPendulum's reward normalization is measured once and kept (session
# 14: kept on 10 of 10 runs, where measured at each publication 7 of 15 reached 500 in 0.3M agent steps).
FOR_PREFERENCES_PER_ENV["InvertedPendulum-v5"] += " --reward_norm_momentum 0"
# Two per-task PPO settings tried on both arms of the MuJoCo table and kept for preferences (docs/results/mujoco.md,
# session 30): HalfCheetah's log std starts at -1 (H55: at 0 it ran on its back on about half the seeds; 0.96 of PPO
# at -1), Swimmer's discount is 0.9999 (H56, the SB3 zoo's). The true reward's flags keep 0 and 0.995.
FOR_PREFERENCES_PER_ENV["HalfCheetah-v5"] += " --ppo_init_log_std -1"
FOR_PREFERENCES_PER_ENV["Swimmer-v5"] += " --ppo_gamma 0.9999"
PREFERENCES_NOTE = "learning from preferences, so, after those,"
# What a preset with preferences flags adds last when --oracle_goal names a shipped goal (pref_interface/goals.py):
# the goal's budget (the module's docstring, "mujoco").
# Keyed by the flag's text only (nothing here imports a goal: the config layer knows no role's module).
# The entropy bonus is the paper's 0.01 here, as in the preset (the goals' runs were made with it when some tasks'
# preset had another: a goal's runs are judged by the goal alone, and HalfCheetah stood on 0.01, session 15).
GOAL_BUDGET = "--million_timesteps 2 --n_initial_prefs 250 --n_labels 750 --ppo_ent_coef 0.01"
SHIPPED_GOALS = "pref_interface.goals"
MUJOCO_GOALS = tuple(f"{SHIPPED_GOALS}:{name}" for name in ("hopper_backflip", "hopper_landed_backflip",
                                                            "cheetah_standing"))
FOR_GOAL: dict[str, str] = {goal: GOAL_BUDGET for goal in MUJOCO_GOALS}
# HalfCheetah standing stood (session 15) with the policy's log std starting at 0: the goal keeps it, where the task's
# preset from preferences starts at -1 (H55, made for running forward, untried on standing).
FOR_GOAL[f"{SHIPPED_GOALS}:cheetah_standing"] += " --ppo_init_log_std 0"
# Enduro among the cars (issue 62): the paper's budget for it (about 1,300 queries over 4M frames, section 3.2), the
# same as a person's Atari run.
FOR_GOAL[f"{SHIPPED_GOALS}:enduro_with_cars"] = ATARI_PERSON
GOAL_NOTE = "the goal"
# The presets whose tasks the shipped goals are for, and their goals
GOAL_PRESETS: dict[str, tuple[str, ...]] = {"mujoco": MUJOCO_GOALS, "atari": (f"{SHIPPED_GOALS}:enduro_with_cars",)}
GOAL_PRESETS["pong"] = GOAL_PRESETS["atari"]


def preferences_flags(name: str, env_id: str | None) -> list[str]:
    """What preset ``name`` adds when ``env_id`` learns from preferences (none for a preset without such flags)."""
    if name not in FOR_PREFERENCES:
        return []
    return shlex.split(FOR_PREFERENCES[name]) + shlex.split(FOR_PREFERENCES_PER_ENV.get(env_id or "", ""))


def goal_flags(name: str, goal: str | None) -> list[str]:
    """What preset ``name`` adds last, from preferences, for the oracle's ``goal`` (FOR_GOAL; none for a goal not
    shipped, or not one of the preset's own: GOAL_PRESETS)."""
    return shlex.split(FOR_GOAL[goal]) if goal in GOAL_PRESETS.get(name, ()) else []


def learns_from_preferences(argv: list[str]) -> bool:
    """Whether the command line's mode (its first word that names one; else the default) uses preferences."""
    mode = next((a for a in argv if a in MODES), DEFAULT_MODE)
    return mode not in (TRAIN_POLICY_WITH_ORIGINAL_REWARDS, WATCH)


def default_preset(env_id: str | None) -> str:
    """The preset an env starts from when --preset is not given."""
    if env_id and env_id.startswith("MovingDot-"):
        return "moving-dot"
    if env_id and env_id.endswith("NoFrameskip-v4"):
        return "atari"
    if env_id == "CartPole-v1":
        return "cartpole"
    if env_id in MUJOCO_ENV_IDS:
        return "mujoco"
    return "none"


def ppo_flags(name: str, algo: str | None) -> list[str]:
    """What preset ``name`` adds with ``--algo ppo`` (FOR_PPO: a discrete env's preset, PPO's Atari settings)."""
    return shlex.split(FOR_PPO.get(name, "")) if algo == "ppo" else []


def preset_flags(name: str, person: bool = False, preferences_env: str | None = None, algo: str | None = None
                 ) -> list[str]:
    """The preset's flags; with ``algo`` "ppo", followed by what it adds for PPO (``ppo_flags``); with
    ``preferences_env`` (an env id, or "" for none in particular), then by what it adds there from preferences;
    with ``person``, then by what it changes when a person labels (later flags win)."""
    flags = shlex.split(PRESETS[name]) + ppo_flags(name, algo)
    flags += preferences_flags(name, preferences_env) if preferences_env is not None else []
    return flags + (shlex.split(FOR_A_PERSON.get(name, "")) if person else [])


def with_preset(argv: list[str]) -> tuple[list[str], str, str | None]:
    """(argv with the preset's flags in front, the preset's name, a line saying so or None where it adds
    nothing). An unknown --preset raises ValueError with one line."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--env")
    pre.add_argument("--preset")
    pre.add_argument("--labeller")
    pre.add_argument("--synthetic_prefs", action="store_true")
    pre.add_argument("--oracle_goal")
    pre.add_argument("--algo")
    known, _ = pre.parse_known_args(argv)
    name = known.preset or default_preset(known.env)
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose from {', '.join(PRESETS)}")
    from_prefs = learns_from_preferences(argv)
    person = from_prefs and not known.synthetic_prefs and known.labeller != "oracle"  # no labels, no person
    prefs = preferences_flags(name, known.env) if from_prefs else []
    goal = goal_flags(name, known.oracle_goal) if from_prefs else []
    for_person = shlex.split(FOR_A_PERSON.get(name, "")) if person else []
    picks = PREFERENCES_ALGO.get(name) if from_prefs and known.algo is None else None
    algo = picks or known.algo
    for_ppo = ppo_flags(name, algo)
    flags = preset_flags(name, person, (known.env or "") if from_prefs else None, algo) + goal
    if picks:  # before the user's flags, which come after and so would win; --algo is not given there
        flags = ["--algo", picks, *flags]
    if known.preset is None:
        argv = [*argv, "--preset", name]
    if not flags:
        return argv, name, None
    how = "given" if known.preset else f"the default for {known.env}"
    base = shlex.split(PRESETS[name])  # each addition below is named once, after it (later flags win)
    line = (f"[run] preset {name} ({how}; flags on the command line override it, --preset none gives the bare "
            f"defaults): {shlex.join(base) or '(the defaults)'}")
    if picks:
        line += f" (from preferences it picks --algo {picks}; --algo a2c for A2C)"
    if for_ppo:
        line += f" ({PPO_NOTE} {shlex.join(for_ppo)})"
    if prefs:
        line += f" ({PREFERENCES_NOTE} {shlex.join(prefs)})"
    if for_person:
        line += f" ({PERSON_NOTE} {FOR_A_PERSON[name]})"
    if goal:
        line += f" (for {GOAL_NOTE} {known.oracle_goal}: {shlex.join(goal)})"
    return [*flags, *argv], name, line


def describe() -> str:
    def per_env(name: str) -> str:  # the per-task flags of the envs this preset is the default for
        return "; ".join(f"{env_id}: {flags}" for env_id, flags in FOR_PREFERENCES_PER_ENV.items()
                         if default_preset(env_id) == name)

    return "\n".join(f"{name}: {PRESETS[name] or '(the defaults)'}"
                     + (f"; from preferences: --algo {PREFERENCES_ALGO[name]}" if name in PREFERENCES_ALGO else "")
                     + (f"; {PPO_NOTE}: {FOR_PPO[name]}" if name in FOR_PPO else "")
                     + (f"; when a person labels: {FOR_A_PERSON[name]}" if name in FOR_A_PERSON else "")
                     + (f"; from preferences: {FOR_PREFERENCES[name]}" if name in FOR_PREFERENCES else "")
                     + (f", and per task {per_env(name)}" if per_env(name) else "")
                     + "".join(f"; with --oracle_goal {goal}: {FOR_GOAL[goal]}" for goal in GOAL_PRESETS.get(name, ()))
                     for name in PRESETS)

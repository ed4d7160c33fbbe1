"""What ``run`` checks before a run starts: its inputs, and whether a run directory may go on with them.

    resolve_algo(cfg)                    --algo auto made a2c (Discrete actions) or ppo (Box actions); --algo ppo
                                         runs either
    check_inputs(cfg)                    the env id, every setting, what the mode needs, where a person labels
                                         (a display, a free address), every file to load: UsageError, one line,
                                         before any run directory or process exists
    check_resume(cfg, record, derived)   a run directory that holds a run of other settings goes on only with
                                         --resume_with_changes
    drop_damaged_prefs(cfg, record)      --skip_damaged_prefs: the processes start from a sound database
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from drlhp.config import RunConfig
from drlhp.config.cli import config_problem
from drlhp.policy.algorithms import algo_for
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import RunRecord
from pref_interface.labellers import LABELLERS


class UsageError(Exception):
    """A problem with the command line or its inputs: one line to the user, exit code 2."""


def check_inputs(cfg: RunConfig) -> None:
    """Bad inputs fail here, in one line (UsageError), before any run directory or process exists:
    the env id, every number of the config, what the mode needs, the display, and every file to load
    (``run`` checks them first; ``python -m floyd seeds`` once, before starting any seed)."""
    if cfg.prefs.oracle_goal and cfg.labels and cfg.prefs.labeller != "oracle":  # before the env's labeller check
        raise UsageError(f"--oracle_goal is what the scripted labeller wants: add --labeller oracle (or "
                         f"--synthetic_prefs); --labeller {cfg.prefs.labeller} is a person, who labels by eye")
    kind = _check_env(cfg)
    if cfg.reward.next_obs and kind != "box":
        raise UsageError("--reward_next_obs sets the observation in a Box-action env's predictor input ((observation, "
                         "action)); on discrete actions the predictor sees the observation each step led to already")
    _check_settings(cfg, algo_for(cfg.algo, kind))  # every number in range: --oracle_mistake_rate in [0, 0.5] too
    _check_teacher(cfg)
    _check_labeller(cfg)
    _check_goal(cfg, kind)
    _check_files(cfg)


# The labeller that can label any Box-action env's clips: the synthetic oracle (it reads the task's reward). A
# person watches clips drawn from the simulator's recorded states (issue 30): only a MuJoCo env's can be drawn.
BOX_ACTION_LABELLERS = ("oracle",)


def resolve_algo(cfg: RunConfig) -> RunConfig:
    """``cfg`` with --algo auto replaced by the algorithm the env's action space takes (after check_inputs; the
    table's pick, drlhp.policy.algorithms.AUTO); any other --algo as it is (no env made to learn its kind)."""
    from drlhp.policy.algorithms import resolved_algo

    return replace(cfg, algo=resolved_algo(cfg.algo, cfg.env))


def _check_env(cfg: RunConfig) -> str:
    """The env id, its spaces against the mode and --algo, --fall_rule against it; returns its action kind
    (envs.action_kind)."""
    import envs

    if not cfg.env:
        raise UsageError("--env is required (list valid ids with: python run.py --list_envs)")
    try:  # drlhp's and Atari ids by name; any other gymnasium id by its spec and one env made
        kind = envs.action_kind(cfg.env)
        envs.check_env_id(cfg.env, box_actions=kind == "box")
        _check_fall_rule(cfg)  # before drawing is tried: a rule that cannot apply costs one line at once
        if kind == "box" and cfg.labels and cfg.prefs.labeller not in BOX_ACTION_LABELLERS:
            _check_drawable(cfg)
        if kind == "box" and cfg.watches and _is_mujoco(cfg.env):
            _check_draws(cfg.env, "watch draws its video offscreen, following the robot")
    except envs.UnknownEnvError:
        raise UsageError(f"unknown env {cfg.env!r}; list valid ids with: python run.py --list_envs") from None
    except envs.UnsupportedEnvError as e:  # "FrozenLake-v1: Discrete observations are not supported: ..."
        raise UsageError(str(e)) from None
    from drlhp.policy.algorithms import algorithm_problem

    problem = algorithm_problem(cfg.algo, kind, cfg.env)  # the table has no row for them
    if problem:
        raise UsageError(problem)
    return kind


def _check_fall_rule(cfg: RunConfig) -> None:
    """--fall_rule where the env has a fall it can apply to: "none" (no healthy range) only on a task whose range is
    not the task itself (envs/fixed_length.py's fall_rule_problem: refused on the pendulums, CartPole, Atari,
    MovingDot and any id outside its tables)."""
    from envs.fixed_length import fall_rule_problem

    problem = fall_rule_problem(cfg.env, cfg.ppo.fall_rule)
    if problem:
        raise UsageError(problem)


def _check_drawable(cfg: RunConfig) -> None:
    """A person labels a Box-action env: its clips are drawn from recorded MuJoCo states, so it must be a MuJoCo env,
    and this machine must draw one (offscreen OpenGL: EGL's system packages), tried once in a render worker."""
    if not _is_mujoco(cfg.env):
        raise UsageError(f"{cfg.env} has continuous actions and is not a MuJoCo env: --labeller {cfg.prefs.labeller} "
                         f"shows a person only MuJoCo clips (drawn from the simulator's states); --synthetic_prefs "
                         f"labels it (the synthetic oracle)")
    _check_draws(cfg.env, f"--labeller {cfg.prefs.labeller}",
                 "; or --synthetic_prefs (the synthetic oracle labels instead of a person)")


def _is_mujoco(env_id: str) -> bool:
    import gymnasium as gym

    from envs.mujoco_state import is_mujoco

    env = gym.make(env_id)
    try:
        return is_mujoco(env)
    finally:
        env.close()


def _check_draws(env_id: str, who: str, instead: str = "") -> None:
    """This machine draws ``env_id``'s MuJoCo frames offscreen (a frame tried in a render worker,
    pref_interface.clip_drawer.render_problem), else UsageError: ``who``, the problem, ``instead``."""
    from pref_interface.clip_drawer import render_problem

    problem = render_problem(env_id)
    if problem:
        raise UsageError(f"{who}: {problem}{instead}")


def _check_settings(cfg: RunConfig, algo: str) -> None:
    """The config's numbers, the Ray cluster to join, and what the mode needs (``algo``: the policy's)."""
    problem = config_problem(cfg)
    if problem:
        raise UsageError(problem)
    if cfg.backend == "ray" and cfg.uses_processes:  # before ray.init, which waits on and on
        from drlhp.processes.ray_backend import address_problem

        problem = address_problem(cfg.ray_address)
        if problem:
            raise UsageError(problem)
    if cfg.ppo.fall_problem():
        raise UsageError(cfg.ppo.fall_problem())
    one_update, names = cfg.a2c.n_envs * cfg.a2c.n_steps, "--n_envs x --n_steps"
    if algo == "ppo":
        one_update, names = cfg.ppo.batch, "--ppo_n_envs x --ppo_n_steps"
        if cfg.ppo.problem():
            raise UsageError(cfg.ppo.problem())
    if cfg.trains_policy and cfg.total_timesteps < one_update:
        raise UsageError(f"--million_timesteps {cfg.million_timesteps:g} is {cfg.total_timesteps:,} agent steps, "
                         f"less than one update ({names} = {one_update:,})")
    waits_for_initial_prefs = cfg.gathers or (
        cfg.labels_while_training and not cfg.load_reward_predictor_ckpt_dir)
    if waits_for_initial_prefs and cfg.prefs.n_initial_prefs > cfg.prefs.max_prefs:
        raise UsageError(f"--n_initial_prefs {cfg.prefs.n_initial_prefs} is more than --max_prefs "
                         f"{cfg.prefs.max_prefs}: the database would never hold them all")
    if cfg.gathers and cfg.prefs.n_initial_prefs < 1:
        raise UsageError("gather_initial_prefs needs --n_initial_prefs of at least 1")
    if cfg.no_labelling and not cfg.load_reward_predictor_ckpt_dir:
        raise UsageError("--no_labelling needs --load_reward_predictor_ckpt_dir (a run directory or its "
                         "reward_predictor/reward_predictor.npz)")
    if cfg.trains_predictor_alone and not cfg.load_prefs_dir:
        raise UsageError("pretrain_reward_predictor needs --load_prefs_dir (a run directory or a prefs.npz)")
    if cfg.run_dir and Path(cfg.run_dir).exists() and not Path(cfg.run_dir).is_dir():
        raise UsageError(f"--run_dir {cfg.run_dir} is a file, not a directory")
    if cfg.watches:
        if not cfg.load_policy_ckpt_dir:
            raise UsageError("watch needs --load_policy_ckpt_dir (a run directory or its checkpoints/)")
        if cfg.video and Path(cfg.video).suffix not in (".mp4", ".gif"):
            raise UsageError(f"--video {cfg.video}: give a .mp4 or a .gif file")
        if cfg.run_dir and RunPaths(cfg.run_dir).config.exists():
            raise UsageError(f"--run_dir {cfg.run_dir} already holds a run; watch records into a new run "
                             f"directory (leave --run_dir out, or give a new one; --video names the video)")


def _check_labeller(cfg: RunConfig) -> None:
    """Where a person labels: a display for the window, a free address for the page."""
    if cfg.labels and LABELLERS[cfg.prefs.labeller].needs_display:  # a person labels in a window: can one open?
        from pref_interface.display import display_problem  # no Qt import: that happens in the child

        problem = display_problem(fix="pass --labeller web (label in a browser) or --synthetic_prefs (the "
                                      "synthetic oracle labels instead of a person)")
        if problem:
            raise UsageError(problem)
    if cfg.labels and cfg.prefs.labeller == "web":  # the page's address: taken, or not this machine's?
        from pref_interface.web_server import address_problem

        problem = address_problem(cfg.prefs.web_host, cfg.prefs.web_port)
        if problem:
            raise UsageError(problem)


def _check_teacher(cfg: RunConfig) -> None:
    """--oracle_mistake_rate and --oracle_equal_threshold (pref_interface/teacher.py; their ranges are their
    fields' checks) only where the scripted labeller labels: a person errs by themselves, and a mode without a
    labeller has no one to err."""
    p = cfg.prefs
    flags = [name for name, value in (("--oracle_mistake_rate", p.oracle_mistake_rate),
                                      ("--oracle_equal_threshold", p.oracle_equal_threshold)) if value]
    if flags and not cfg.labels:
        raise UsageError(f"{flags[0]} makes the scripted labeller err; {cfg.mode} has no labeller")
    if flags and p.labeller != "oracle":
        raise UsageError(f"{flags[0]} makes the scripted labeller err: add --labeller oracle (or --synthetic_prefs); "
                         f"--labeller {p.labeller} is a person")


def _check_goal(cfg: RunConfig, action_kind: str) -> None:
    """--oracle_goal (the scripted labeller's: check_inputs refuses it with a person's) on a Box-action env, in a
    mode that labels or plays a policy (watch, --no_labelling: its envs get the goal's kwargs), and a goal that
    imports and scores one trial clip."""
    spec = cfg.prefs.oracle_goal
    if not spec:
        return
    from pref_interface.goal_oracle import load_goal, reads_atari

    try:
        atari_goal = reads_atari(load_goal(spec))
    except ValueError as e:
        raise UsageError(str(e)) from None
    if action_kind != "box" and not atari_goal:
        raise UsageError(f"--oracle_goal scores the observations and actions of Box-action (MuJoCo) clips; {cfg.env} "
                         f"has discrete actions")
    if not (cfg.labels or cfg.watches or cfg.no_labelling):
        raise UsageError(f"--oracle_goal labels preferences; {cfg.mode} has no labeller (it trains on "
                         + ("a saved database)" if cfg.trains_predictor_alone else "the env's own reward)"))
    from pref_interface.goal_oracle import check_goal

    try:  # imports it, makes the env with its kwargs, scores a clip of random actions: a bad goal costs one line
        check_goal(spec, cfg.env)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_files(cfg: RunConfig) -> None:
    """Checkpoints and databases to load: read now, so a wrong file costs one line."""
    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.reward.checkpoint import PredictorCheckpointError, find_file, load_predictor
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.pref_db_files import PrefDBDamaged, PrefDBError

    if cfg.load_policy_ckpt_dir:  # checkpoints and databases: read now, so a wrong file costs one line
        try:
            load_policy_checkpoint(cfg.load_policy_ckpt_dir)
        except CheckpointError as e:
            raise UsageError(str(e)) from None
    own_prefs = RunPaths(cfg.run_dir).prefs if cfg.run_dir and cfg.uses_processes else None
    for prefs in (own_prefs if own_prefs and own_prefs.exists() else None,
                  find_file(cfg.load_prefs_dir, RunPaths.PREFS) if cfg.load_prefs_dir else None):
        if prefs is None:
            continue
        try:  # a resumed run's own database: every file read, none decoded; --load_prefs_dir's: loaded
            if prefs == own_prefs:
                PrefDB.check(prefs)
            else:
                PrefDB.load(prefs, skip_damaged=cfg.skip_damaged_prefs)
        except PrefDBDamaged as e:  # a damaged chunk: named, with what it costs and how to go on without it
            if not cfg.skip_damaged_prefs:
                raise UsageError(f"{e}; add --skip_damaged_prefs to go on without them") from None
        except PrefDBError as e:
            raise UsageError(str(e)) from None
    if cfg.load_reward_predictor_ckpt_dir:
        given = Path(cfg.load_reward_predictor_ckpt_dir)
        if not given.exists():  # the path as the user gave it, not the file a run directory would hold
            raise UsageError(f"--load_reward_predictor_ckpt_dir {given}: no such file or directory")
        try:  # its own one-line reason for a missing, foreign or damaged file (drlhp.records.npz_json);
            load_predictor(given)  # load_predictor finds the file in a run directory itself
        except PredictorCheckpointError as e:
            raise UsageError(str(e)) from None


# Settings that change how fast or how often things are recorded, not what is learned: a run directory
# may go on with other values of these without --resume_with_changes.
RESUME_FREELY = ("log_interval", "stop_after_hours", "milestone_million_timesteps",
                 "backend", "ray_address", "policy_resources", "predictor_resources",
                 "labeller_resources", "stop_at_million_timesteps", "stop_at_true_return", "stop_at_success_rate",
                 "profile", "preset",
                 "resume_with_changes",
                 "episodes", "video", "n_env_threads", "tf_intra_threads", "tf_inter_threads",
                 "policy_ckpt_interval", "reward.tf_threads", "reward.onednn", "reward.ckpt_interval_s",
                 "prefs.prefs_save_interval", "skip_damaged_prefs", "prefs.web_host", "prefs.web_port")


PATH_SETTINGS = ("run_dir", "load_policy_ckpt_dir", "load_prefs_dir", "load_reward_predictor_ckpt_dir", "video")


def check_resume(cfg: RunConfig, record: RunRecord, derived: tuple[str, ...]) -> None:
    """A run directory that already holds a run of other settings goes on only with
    --resume_with_changes (else the weights would be recorded as trained with settings they were not)."""
    from drlhp.records.run_record import ABSENT, config_changes, config_in_todays_names, flatten, with_values_before

    before = record.read_json(RunPaths.CONFIG)
    if before is None or cfg.watches or cfg.resume_with_changes:
        return
    before = with_values_before(config_in_todays_names(before))
    changes = config_changes(before, cfg.to_dict(), ignore=(*derived, *RESUME_FREELY))
    defaults = flatten(RunConfig(mode=cfg.mode, env=cfg.env).to_dict())
    # a setting that did not exist when the run was recorded counts as its default then
    changes = {k: (a, b) for k, (a, b) in changes.items() if not (a == ABSENT and b == defaults.get(k, ABSENT))}
    # a path given relative now and absolute then (or the other way) is the same setting
    changes = {k: (a, b) for k, (a, b) in changes.items()
               if not (k in PATH_SETTINGS and isinstance(a, str) and isinstance(b, str)
                       and Path(a).resolve() == Path(b).resolve())}
    if changes:
        listed = "; ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changes.items())
        raise UsageError(f"{record.dir} holds a run with other settings ({listed}); add --resume_with_changes "
                         f"to go on with the new ones, or choose another --run_dir")


def drop_damaged_prefs(cfg: RunConfig, record: RunRecord) -> None:
    """--skip_damaged_prefs: the database the processes start from, read without its damaged chunks, saved
    whole into this run's prefs/ (a damaged chunk there moved aside to <name>.damaged), so that they load
    a sound one; says what was lost."""
    from drlhp.reward.checkpoint import prefs_to_load
    from drlhp.reward.pref_db import PrefDB

    source = prefs_to_load(cfg, record.dir) if cfg.uses_processes else None
    if source is None:
        return
    db = PrefDB.load(source, skip_damaged=True)
    if not db.damaged:
        return
    lost = lost_line(db)  # before the save, which moves the damaged chunks aside and forgets them
    db.save(record.paths.prefs)
    print(f"{lost}; going on with the other {len(db)}, saved whole to {record.paths.prefs}", file=sys.stderr,
          flush=True)


def lost_line(db) -> str:
    """What --skip_damaged_prefs left out of a loaded PrefDB, for the user."""
    from drlhp.reward.pref_db_files import lost_text

    damaged = ", ".join(f"{d.path} ({d.why})" for d in db.damaged)
    return f"[run] --skip_damaged_prefs: {lost_text(db.lost)} lost with {damaged}"

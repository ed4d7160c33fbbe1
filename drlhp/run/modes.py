"""The modes that run in this process (the others are the parent's run of the processes, drlhp.run.parent):

    train_policy_with_original_rewards   A2C (or with --algo ppo discrete PPO) on the env's (clipped or scaled)
                                         reward; PPO on a Box-action env's own reward, in fixed-length episodes
    watch                                play a saved policy, write a video
    pretrain_reward_predictor            the predictor on a saved database; saves it
    train_policy_without_labelling       train_policy_with_preferences --no_labelling: the policy alone, on a
                                         saved predictor's reward

Each is ``mode(cfg, record) -> exit code``, run by drlhp.run.pipeline.run inside the run's record.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from drlhp.config import RunConfig
from drlhp.processes.interrupts import SittingOver, end_sitting, mark_interrupted, sitting_timer
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import RunRecord
from drlhp.run.checks import UsageError, lost_line
from drlhp.run.outcome import finish


def train_policy_with_original_rewards(cfg: RunConfig, record: RunRecord) -> int:
    """The policy on the env's reward, trained by the table's row for --algo and the env's action kind
    (drlhp.policy.algorithms): A2C or PPO on discrete actions (the reward clipped to its sign, or --original_reward
    scaled), PPO on Box actions (the env's own reward, in fixed-length episodes where the task would end on a fall)."""
    from drlhp.policy.algorithms import algorithm
    from drlhp.policy.loop import Agent, Outputs

    row = algorithm(cfg)
    side = row.side(cfg)
    problem = side.env_reward_problem()
    if problem:
        raise UsageError(problem)
    print(side.start_line(row.title, record.dir), flush=True)

    def make_trainer(envs, logger):
        agent = Agent(envs, row.load("build_policy")(cfg, envs), side.env_reward())
        return row.load("trainer")(cfg, agent, Outputs(record, logger), **side.env_reward_options())

    return _train_in_this_process(cfg, record, side.env_reward_envs, make_trainer)


def _train_in_this_process(cfg: RunConfig, record: RunRecord, make_env, make_trainer) -> int:
    """A policy trained in this process on the env's reward (A2C or PPO): the env, the metrics, the trainer (a
    checkpoint it cannot resume is a usage error), and how the sitting ends; the env and the metrics closed."""
    from drlhp.policy.checkpoint import CheckpointError
    from drlhp.records.metrics import MetricsLogger

    env = logger = trainer = None
    try:
        with sitting_timer(cfg.stop_after_hours):
            env = make_env()
            logger = MetricsLogger(record.dir)
            try:
                trainer = make_trainer(env, logger)
            except CheckpointError as e:
                raise UsageError(str(e)) from None
            summary = trainer.train()
        return finish(record, summary, cfg)
    except KeyboardInterrupt as e:
        return _stopped(e, trainer, cfg, record)
    finally:
        if logger is not None:
            logger.close()
        if env is not None:
            env.close()


def _stopped(e: KeyboardInterrupt, trainer, cfg: RunConfig, record: RunRecord) -> int:
    """Ctrl-C, SIGTERM or --stop_after_hours in a policy's training: checkpoint, summary and HParams saved."""
    if trainer is not None:
        trainer.checkpoint()
        record.write_summary(trainer.summary())
        trainer.write_hparams()
    if isinstance(e, SittingOver):
        return end_sitting(record, cfg.stop_after_hours)
    return mark_interrupted(record, f"\n[run] interrupted; checkpoint saved. Resume with: python run.py "
                                    f"{cfg.mode} --env {cfg.env} --run_dir {record.dir}")


def watch(cfg: RunConfig, record: RunRecord) -> int:
    """A saved policy plays into a video, played by its row's player (drlhp.policy.algorithms). On discrete actions
    A2C's and PPO's checkpoints hold the same network (drlhp.policy.nets.policy_network): A2C's policy plays either,
    sampling its actions; on Box actions, ``_watch_box``. With an Atari goal (--oracle_goal, or the watched run's:
    pref_interface.goals' ``reads = "atari"``), the env keeps worker 0's RAM (envs/atari_watch.py) and each episode's
    figures of the goal's measure are reported (``_GameRecord``)."""
    from drlhp.policy.algorithms import algorithm

    row = algorithm(cfg)
    if row.actions == "box":
        return _watch_box(cfg, record, row)
    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.policy.watch import play_episodes, write_video
    from envs import make_vec_env
    from pref_interface.goal_oracle import reads_atari

    try:
        arrays, meta = load_policy_checkpoint(cfg.load_policy_ckpt_dir)
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    spec, goal, _ = _watched_goal(cfg, meta["path"])
    if goal is not None and not reads_atari(goal):
        raise UsageError(f"the goal {spec} scores Box-action (MuJoCo) clips; {cfg.env} has discrete actions")
    env = make_vec_env(cfg.env, 1, n_threads=1, watch_steps=1 if goal is not None else 0)
    played = env if goal is None else _GameRecord(env)
    try:
        policy = row.load("player")(cfg, env)
        try:
            policy.set_state(arrays)
        except (KeyError, ValueError) as e:
            raise UsageError(f"checkpoint {meta['path']} does not fit {cfg.env}: {e}") from None
        frames, returns = play_episodes(played, policy, cfg.episodes, cfg.seed)
    finally:
        env.close()
    video = Path(cfg.video or record.dir / "episode.mp4")
    write_video(frames, video)
    figures = {} if goal is None else _atari_goal_figures(spec, goal, played.episodes)
    shown = "".join(f", {name} per episode {values}" for name, values in figures.get("goal_measures", {}).items())
    shown += f" (goal {spec})" if goal is not None else ""
    print(f"[watch] {len(returns)} episode(s), true returns {returns}{shown}, {len(frames)} frames -> {video}")
    return finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "episodes": len(returns),
                            "true_returns": [float(r) for r in returns],
                            "true_return_mean": float(sum(returns) / len(returns)) if returns else None,
                            **figures, "checkpoint": str(meta["path"]), "video": str(video)})


class _GameRecord:
    """An Atari vector env made with a watch (envs/atari_watch.py) that keeps, as watch plays, worker 0's RAM after
    each step and its reward, one (RAM (T, 128), rewards (T,)) per finished episode in ``episodes``: what an Atari
    goal's measure reads."""

    def __init__(self, env):
        self.env, self.episodes, self._ram, self._rewards = env, [], [], []

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step(self, actions):
        import numpy as np

        step = self.env.step(actions)
        self._ram.append(self.env.watch.states(0, 0, 1)[0])
        self._rewards.append(float(step.true_reward[0]))
        if step.done[0]:
            self.episodes.append((np.stack(self._ram), np.asarray(self._rewards)))
            self._ram, self._rewards = [], []
        return step


def _atari_goal_figures(spec: str, goal, episodes: list) -> dict:
    """An Atari goal's measure of each finished episode (its ``measure``: a function of the RAM and the rewards giving
    named figures, e.g. Enduro's passes, share of steps level with a car, crashes), per figure a list over the
    episodes, and each list's mean."""
    from pref_interface.goal_oracle import measure_of

    out = {"oracle_goal": spec}
    measure = measure_of(goal)
    if measure:
        per_episode = [measure[1](ram, rewards) for ram, rewards in episodes]
        names = list(per_episode[0]) if per_episode else []
        out["goal_measures"] = {n: [round(f[n], 4) for f in per_episode] for n in names}
        out["goal_measure_means"] = {n: float(sum(v) / len(v)) for n, v in out["goal_measures"].items()}
    return out


def _watch_box(cfg: RunConfig, record: RunRecord, row) -> int:
    """watch on Box actions: a PPO checkpoint plays by its mean (the row's player, BoxMeanPolicy) in one env, with
    the fixed-length episodes it trained in; a run with an oracle goal (its config.json's, or --oracle_goal) plays in
    the env made with the goal's kwargs, and each episode's measure of the goal is reported (``_goal_figures``). A
    MuJoCo env's video is drawn from the simulator's states it recorded, following the robot as a person's clips do
    (drlhp.policy.watch.followed_frames; check_inputs has made sure this machine draws); another env's is its
    ``render()``."""
    import os

    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.policy.watch import followed_frames, play_box_episodes, write_video
    from envs.fixed_length import any_vector_env
    from envs.mujoco_state import is_mujoco, record_state

    os.environ.setdefault("MUJOCO_GL", "egl")  # no display needed; TensorFlow stays out of this process
    try:
        arrays, meta = load_policy_checkpoint(cfg.load_policy_ckpt_dir)
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    if meta.get("algo", "a2c") != row.algo:
        raise UsageError(f"policy checkpoint {meta['path']} is {meta.get('algo', 'a2c')}'s; {cfg.env} needs "
                         f"{row.algo.upper()}'s")
    spec, goal, env_kwargs = _watched_goal(cfg, meta["path"])
    env = any_vector_env(cfg.env, 1, render_mode="rgb_array", **cfg.ppo.falls, **env_kwargs).envs[0]
    mujoco = is_mujoco(env)
    try:
        space = env.action_space
        try:
            policy = row.load("player")(arrays, env.observation_space.shape[0], space.low, space.high,
                                        cfg.ppo.obs_clip)
        except (KeyError, ValueError) as e:
            raise UsageError(f"checkpoint {meta['path']} does not fit {cfg.env}: {e}") from None
        seen, returns, observations = play_box_episodes(env, policy, cfg.episodes, cfg.seed,
                                                        see=record_state if mujoco else lambda e: e.render())
        fps = int(env.metadata.get("render_fps", 30))
    finally:
        env.close()
    frames = followed_frames(cfg.env, seen, env_kwargs) if mujoco else seen
    video, n_frames = write_video(frames, Path(cfg.video or record.dir / "episode.mp4"), fps=fps, scale=1)
    figures = _goal_figures(spec, goal, env_kwargs, observations)
    shown = (f", {figures['goal_measure']} per episode {figures['goal_measures']} (mean "
             f"{figures['goal_measure_mean']:g}; goal {spec})" if "goal_measure" in figures else "")
    print(f"[watch] {len(returns)} episode(s), true returns {returns}{shown}, {n_frames} frames -> {video}")
    return finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "algo": row.algo,
                            "episodes": len(returns), "true_returns": returns,
                            "true_return_mean": float(sum(returns) / len(returns)) if returns else None,
                            **figures, "checkpoint": str(meta["path"]), "video": str(video)})


def _watched_goal(cfg: RunConfig, checkpoint: str):
    """(spec, goal, env kwargs) of the goal watch plays for: --oracle_goal, else the one recorded in the run the
    checkpoint is from (the first config.json above it); ("", None, {}) where there is none. A goal that no
    longer imports or scores is a UsageError (one line)."""
    from envs.goal_kwargs import kwargs_of
    from pref_interface.goal_oracle import check_goal

    spec = cfg.prefs.oracle_goal
    if not spec:  # a run directory holds checkpoints/policy-N.npz: its config.json is a level or two up
        import json

        configs = [d / RunPaths.CONFIG for d in Path(checkpoint).resolve().parents[:3]
                   if (d / RunPaths.CONFIG).is_file()]
        try:
            recorded = json.loads(configs[0].read_text()) if configs else {}
        except (OSError, ValueError):
            recorded = {}
        spec = str(((recorded if isinstance(recorded, dict) else {}).get("prefs") or {}).get("oracle_goal") or "")
    if not spec:
        return "", None, {}
    try:
        goal = check_goal(spec, cfg.env)
    except ValueError as e:
        raise UsageError(f"{e} (the goal of the watched run)") from None
    return spec, goal, kwargs_of(goal)


def _goal_figures(spec: str, goal, env_kwargs: dict, observations: list) -> dict:
    """The goal's figures for watch's line and summary: its measure of each episode's observations (e.g. Hopper's
    full backward turns, ``goal.measure``); {} without a goal, only the goal's name where it has no measure."""
    if goal is None:
        return {}
    from pref_interface.goal_oracle import measure_of

    out = {"oracle_goal": spec, "goal_env_kwargs": env_kwargs}
    measure = measure_of(goal)
    if measure:
        name, fn = measure
        values = [fn(o) for o in observations]
        out.update({"goal_measure": name, "goal_measures": values,
                    "goal_measure_mean": float(sum(values) / len(values)) if values else float("nan")})
    return out


def pretrain_reward_predictor(cfg: RunConfig, record: RunRecord) -> int:
    """The predictor on a saved database, in this process; saves <run_dir>/reward_predictor/.
    Metrics (every evaluation): progress_reward.csv and tb/reward/, as in the three-process modes."""
    import threading

    from drlhp.processes.tf_setup import configure_tensorflow, kernels_in_use
    from drlhp.records.metrics import MetricsLogger
    from drlhp.reward.checkpoint import find_file
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    db = PrefDB.load(find_file(cfg.load_prefs_dir, RunPaths.PREFS), max_prefs=cfg.prefs.max_prefs,
                     skip_damaged=cfg.skip_damaged_prefs)
    if db.damaged:
        print(lost_line(db), file=sys.stderr, flush=True)
    if db.n_train == 0:
        raise UsageError(f"the preference database in {cfg.load_prefs_dir} has no training preferences")
    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed, onednn=cfg.reward.onednn)
    entry = db.entries("train")[0]
    trainer = RewardTrainer(db.segment_obs(entry.id1).shape[1:], cfg.reward, db, threading.Lock(), seed=cfg.seed,
                            obs_dtype=db.obs_dtype)
    logger = MetricsLogger(record.dir, tb_subdir=RunPaths.TB / "reward", csv_name=RunPaths.PROGRESS_REWARD)
    try:
        trainer.pretrain(cfg.reward.n_initial_epochs, log=lambda s: print(s, flush=True), on_eval=logger.log)
        if not trainer.last_eval:  # pretrain() evaluates after its last step; zero steps leave nothing
            logger.log(trainer.steps, trainer.evaluate())
    except KeyboardInterrupt:
        return mark_interrupted(record)
    finally:
        logger.close()
    trainer.publish()  # normalization statistics (the first: from 10x the newest segments), saved with the weights
    trainer.save(record.paths.predictor)
    return finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "n_preferences": len(db),
                            "predictor_val_accuracy": trainer.last_eval.get("reward/val_accuracy"),
                            "predictor_train_steps": trainer.steps, "predictor_kernels": kernels_in_use(),
                            "predictor_precision": trainer.ensemble.precision.describe(),
                            "reward_predictor_file": str(record.paths.predictor)})


def train_policy_without_labelling(cfg: RunConfig, record: RunRecord) -> int:
    """--no_labelling: the policy alone, on a saved predictor's reward; no labeller, no predictor training."""
    from drlhp.policy.process import run_policy
    from drlhp.processes.ports import PolicyPorts
    from drlhp.reward.checkpoint import load_predictor_weights, predictor_batchnorm

    weights, meta = load_predictor_weights(cfg.load_reward_predictor_ckpt_dir)
    batchnorm = predictor_batchnorm(meta)  # the saved network's shape, whatever this command's flags say
    cfg = replace(cfg, reward=replace(cfg.reward, n_members=len(weights.weights),
                                      batchnorm=cfg.reward.batchnorm if batchnorm is None else batchnorm))
    print(f"[run] {cfg.mode} --no_labelling on {cfg.env} with predictor {meta['path']}, "
          f"{cfg.total_timesteps:,} agent steps -> {record.dir}", flush=True)
    try:
        with sitting_timer(cfg.stop_after_hours):
            summary = run_policy(cfg, PolicyPorts(), str(record.dir), fixed_weights=weights)  # no channels
    except KeyboardInterrupt as e:  # run_policy saved a checkpoint
        if isinstance(e, SittingOver):
            return end_sitting(record, cfg.stop_after_hours)
        return mark_interrupted(record, f"\n[run] interrupted; checkpoint saved in {record.ckpt_dir}")
    return finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "no_labelling": True, **summary})

"""The modes of run.py, and (with the preference pipeline) the processes and queues between roles.

    train_policy_with_original_rewards   A2C on the env's (clipped) reward, in this process
    watch                                play a saved policy, write a video
    train_policy_with_preferences        the paper's three processes (next step of the project)
"""
from __future__ import annotations

import signal
import sys
import traceback
from dataclasses import replace
from pathlib import Path

from drlhp.config import A2CConfig, RunConfig
from drlhp.run_record import RunRecord, default_run_dir


class UsageError(Exception):
    """A problem with the command line or its inputs: one line to the user, exit code 2."""


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run(cfg: RunConfig, argv: list[str] | None = None) -> int:
    if cfg.mode == "train_policy_with_original_rewards":
        return train_policy_with_original_rewards(cfg, argv)
    if cfg.mode == "watch":
        return watch(cfg)
    raise UsageError(f"mode {cfg.mode!r} is not available yet (it arrives with the preference pipeline); "
                     f"use train_policy_with_original_rewards")


def _resolve_run_dir(cfg: RunConfig) -> RunConfig:
    from drlhp.checkpoint import find_latest_checkpoint

    if cfg.run_dir is None:
        return replace(cfg, run_dir=str(default_run_dir(cfg.env, cfg.mode)))
    if cfg.load_policy_ckpt_dir is None and find_latest_checkpoint(Path(cfg.run_dir) / "checkpoints"):
        # An existing run directory with checkpoints: resume it where it stopped.
        return replace(cfg, load_policy_ckpt_dir=str(Path(cfg.run_dir) / "checkpoints"))
    return cfg


def _build_policy(cfg: RunConfig, env, a2c: A2CConfig | None = None):
    from drlhp.a2c import A2CPolicy
    from drlhp.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed)
    return A2CPolicy(env.obs_shape, env.n_actions, a2c or cfg.a2c, seed=cfg.seed, obs_dtype=env.obs_dtype)


def train_policy_with_original_rewards(cfg: RunConfig, argv=None) -> int:
    from drlhp.checkpoint import CheckpointError
    from drlhp.metrics import MetricsLogger
    from drlhp.policy_trainer import PolicyTrainer
    from drlhp.reward_source import ClippedEnvReward
    from envs import make_vec_env

    cfg = _resolve_run_dir(cfg)
    record = RunRecord(cfg.run_dir)
    record.start(cfg.to_dict(), argv)
    print(f"[run] {cfg.mode} on {cfg.env}, seed {cfg.seed}, {cfg.total_timesteps:,} agent steps -> {record.dir}",
          flush=True)
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    env = logger = trainer = None
    try:
        env = make_vec_env(cfg.env, cfg.a2c.n_envs, n_threads=cfg.n_env_threads)
        policy = _build_policy(cfg, env)
        logger = MetricsLogger(record.dir)
        try:
            trainer = PolicyTrainer(cfg, env, policy, ClippedEnvReward(), record, logger)
        except CheckpointError as e:
            raise UsageError(str(e)) from None
        summary = trainer.train()
        record.write_summary(summary)
        record.set_status("finished")
        print("[run] finished: " + ", ".join(f"{k}={v}" for k, v in summary.items()), flush=True)
        print(f"[run] summary: {record.dir / 'summary.json'}", flush=True)
        return 0
    except KeyboardInterrupt:
        if trainer is not None:
            trainer.checkpoint()
            record.write_summary(trainer.summary())
        record.set_status("interrupted")
        print(f"\n[run] interrupted; checkpoint saved. Resume with: python run.py {cfg.mode} --env {cfg.env} "
              f"--run_dir {record.dir}", file=sys.stderr, flush=True)
        return 130
    except UsageError as e:
        record.set_status("crashed", error=str(e))
        raise
    except Exception as e:
        record.set_status("crashed", error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        if logger is not None:
            logger.close()
        if env is not None:
            env.close()


def watch(cfg: RunConfig) -> int:
    from drlhp.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.watch import play_episodes, write_video
    from envs import make_vec_env

    if not cfg.load_policy_ckpt_dir:
        raise UsageError("watch needs --load_policy_ckpt_dir (a run directory or its checkpoints/)")
    try:
        arrays, meta = load_policy_checkpoint(cfg.load_policy_ckpt_dir)
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    env = make_vec_env(cfg.env, 1, n_threads=1)
    try:
        policy = _build_policy(cfg, env, replace(cfg.a2c, n_envs=1))
        try:
            policy.set_state(arrays)
        except (KeyError, ValueError) as e:
            raise UsageError(f"checkpoint {meta['path']} does not fit {cfg.env}: {e}") from None
        frames, returns = play_episodes(env, policy, cfg.episodes, cfg.seed)
    finally:
        env.close()
    video = Path(cfg.video or Path(cfg.run_dir or Path(meta["path"]).parent.parent) / "episode.mp4")
    write_video(frames, video)
    print(f"[watch] {len(returns)} episode(s), true returns {returns}, {len(frames)} frames -> {video}")
    return 0

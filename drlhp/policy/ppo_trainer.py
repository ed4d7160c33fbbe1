"""Training PPO on a Box-action env's own reward (train_policy_with_original_rewards): rollout -> PPO update,
with A2C's services (drlhp.policy.trainer.PolicyTrainer): the same progress line, metrics (``policy/``,
``system/`` and SB3's names), checkpoints (``policy-<updates>.npz``, npz + JSON meta, atomic, no pickle),
milestones, targets, HParams record and summary.

    PPOTrainer.train: until this sitting's end (the budget, or --stop_at_million_timesteps) or the last 100
    episodes reaching --stop_at_true_return:
        rollout = collector.run()                  (ppo_n_steps x ppo_n_envs agent steps)
        policy.learn(rollout, env reward, lr(t))   (lr decays linearly to 0 at the horizon with --ppo_anneal_lr)
        every --milestone_million_timesteps: milestone; every policy_ckpt_interval updates: checkpoint
        every log_interval s: progress line + metrics
    then a final checkpoint and the HParams record; it returns the summary (the pipeline writes summary.json).

The envs (envs/fixed_length.py) have fixed-length episodes where the task would end on a fall: the true return
is the env's own reward, its control cost included, less the fall penalty, summed over such an episode.
"""
from __future__ import annotations

import collections
import time

from drlhp.config import RunConfig
from drlhp.policy.checkpoint import FORMAT_VERSION, CheckpointError, load_policy_checkpoint
from drlhp.policy.ppo import PPOPolicy
from drlhp.policy.ppo_rollout import RolloutCollector
from drlhp.policy.sitting_clock import SittingClock
from drlhp.policy.trainer import Outputs, PolicyTrainer, TrainingState, env_seed
from drlhp.runtime import npz_json
from drlhp.runtime.ports import PolicyPorts

ALGO = "ppo"  # in a checkpoint's meta: what wrote it


def build_ppo(cfg: RunConfig, envs) -> PPOPolicy:
    """PPO's policy for ``envs`` (a gymnasium vector env of Box actions), after setting this process's
    TensorFlow threads and seeds (as drlhp.policy.a2c.build_policy)."""
    from drlhp.runtime.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed)
    space = envs.single_action_space
    return PPOPolicy(envs.single_observation_space.shape[0], space.shape[0], cfg.ppo, cfg.seed, space.low,
                     space.high)


def load_ppo_checkpoint(path) -> tuple[dict, dict]:
    """(arrays, meta) of the newest policy checkpoint at ``path``; CheckpointError where it is not PPO's."""
    arrays, meta = load_policy_checkpoint(path)
    if meta.get("algo", "a2c") != ALGO:
        raise CheckpointError(f"policy checkpoint {meta['path']} is {meta.get('algo', 'a2c')}'s; this run is PPO's")
    return arrays, meta


class PPOTrainer(PolicyTrainer):
    """PPO's loop in PolicyTrainer's services: the targets, summary, HParams and progress line are
    PolicyTrainer's; the rollout, the update, the checkpoint's state and the milestone are PPO's."""

    def __init__(self, cfg: RunConfig, envs, policy: PPOPolicy, out: Outputs, episodes: str = ""):
        """``episodes``: what the envs do to episodes (envs.fixed_length.describe), for the summary."""
        self.cfg, self.env, self.policy, self.record, self.logger = cfg, envs, policy, out.record, out.logger
        self.print, self.ports, self.observers, self.episodes_line = out.log, PolicyPorts(), [], episodes
        self.reward_source = None  # the env's own reward, unscaled: PPOPolicy scales it itself
        self.state, self.has_success = TrainingState(), None
        if cfg.load_policy_ckpt_dir:
            arrays, meta = load_ppo_checkpoint(cfg.load_policy_ckpt_dir)
            try:
                policy.set_state(arrays)
            except (KeyError, ValueError) as e:
                raise CheckpointError(f"checkpoint {meta['path']} does not fit {cfg.env}: {e}") from None
            self.state = TrainingState.from_meta(meta)
            self.print(f"[policy] resumed from {meta['path']} at {self.state.timesteps:,} steps")
        self.collector = RolloutCollector(envs, policy, env_seed(cfg.seed, self.state.updates, cfg.ppo.n_envs))

    def learning_rate(self) -> float:
        """--ppo_lr, decayed linearly to 0 at the horizon (as A2C's) with --ppo_anneal_lr."""
        if not self.cfg.ppo.anneal_lr:
            return self.cfg.ppo.lr
        return self.cfg.ppo.lr * max(1.0 - self.state.timesteps / max(1, self.cfg.lr_horizon_timesteps), 0.0)

    def entropy_coef(self) -> float:
        return self.cfg.ppo.ent_coef

    def _meta(self) -> dict:
        return {**self.state.to_meta(), "algo": ALGO}

    def milestone(self, before: int) -> None:
        """A copy kept for good (float16 weights and the observation statistics, which the weights need) when
        the last update crossed a multiple of --milestone_million_timesteps."""
        every = int(round(self.cfg.milestone_million_timesteps * 1e6))
        if every <= 0 or self.state.timesteps // every == before // every:
            return
        path = self.record.paths.milestones / f"policy-{self.state.timesteps}.npz"
        npz_json.write(path, self.policy.weights_only(),
                       {**self._meta(), "format_version": FORMAT_VERSION, "weights_only": True})
        self.print(f"[policy] milestone at {self.state.timesteps:,} steps: {path.parent}", flush=True)

    def targets(self) -> dict:
        cfg = self.cfg
        return {} if cfg.stop_at_true_return is None else {
            "true return": (cfg.stop_at_true_return, self.state.recent_returns)}

    def summary(self) -> dict:
        return {**super().summary(), "algo": ALGO, "episodes_are": self.episodes_line}

    def _count_episodes(self, finished) -> None:
        for true_return, _task_return, length in finished:  # (return, without control cost, length)
            self.state.episodes += 1
            self.state.recent_returns.append(true_return)
            self.state.recent_lengths.append(length)

    def train(self) -> dict:
        cfg, s, batch = self.cfg, self.state, self.cfg.ppo.batch
        s.sitting += 1
        clock = SittingClock.start(s, fps_now=True)
        timing = collections.defaultdict(float)
        while s.timesteps < cfg.stop_timesteps and not self.reached_target():
            rollout = self.collector.run()
            t0 = time.perf_counter()
            losses = self.policy.learn(rollout, rollout.rewards, self.learning_rate(), self.entropy_coef())
            timing["train_s"] += time.perf_counter() - t0
            timing["env_s"] += rollout.env_s
            timing["act_s"] += rollout.act_s
            self.after_update(rollout, losses, batch, timing, clock)
        return self.end_sitting()

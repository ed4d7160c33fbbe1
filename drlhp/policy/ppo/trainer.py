"""Training PPO on a Box-action env: on its own reward (train_policy_with_original_rewards, EnvReward) or on the
reward predictor's (drlhp.policy.process.run_policy, PredictedReward): rollout -> PPO update, in
PolicyTrainer's loop (drlhp.policy.loop): the same random play before the predictor's first weights,
observers, pacing, progress line, metrics (``policy/``, ``system/`` and SB3's names), checkpoints
(``policy-<updates>.npz``, npz + JSON meta, atomic, no pickle), targets, HParams record and summary.

    PPOTrainer.train (PolicyTrainer.train): until this sitting's end (the budget, or --stop_at_million_timesteps),
    the last 100 episodes reaching --stop_at_true_return, or the stop event:
        before the predictor's first weights: the initial Gaussian policy plays (the paper's "random policy" of
            the initial labels), only while the preference interface wants segments; not trained on, not counted
        rollout = collector.run()                  (ppo_n_steps x ppo_n_envs agent steps)
        rewards = reward source (one batch)        (the env's reward; or the predictor's on x_t = (raw o_t,
                                                    clipped a_t)); PPOPolicy scales them by its running return std
        observers see the rollout                  (segments of x_t with the task's reward, for the labeller)
        policy.learn(rollout, rewards, lr(t))      (lr decays linearly to 0 at the horizon with --ppo_anneal_lr)
        every --milestone_million_timesteps: milestone; every policy_ckpt_interval updates: checkpoint
        every log_interval s: progress line + metrics
    then a final checkpoint and the HParams record; it returns the summary (the pipeline writes summary.json).

The envs (envs/fixed_length.py) have fixed-length episodes where the task would end on a fall: the true return
is the env's own reward, its control cost included, less the fall penalty, summed over such an episode; the task
return (task_return_last100) the same without the control cost (the paper's measure, what the oracle pays); the
standard return (standard_return_last100) gymnasium's own reward over the same episodes (control cost in, no fall
penalty).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from drlhp.config import RunConfig
from drlhp.policy.checkpoint import FORMAT_VERSION
from drlhp.policy.loop import Agent, Outputs, PolicyTrainer, RolloutObserver
from drlhp.policy.ppo.batches import PPORollout
from drlhp.policy.ppo.rollout import RolloutCollector
from drlhp.policy.reward_source import EnvReward
from drlhp.policy.training_state import env_seed
from drlhp.processes.ports import PolicyPorts
from drlhp.records import npz_json


def ppo_learning_rate(cfg: RunConfig, timesteps: int) -> float:
    """--ppo_lr, decayed linearly to 0 at the horizon (as A2C's: --lr_horizon_million_timesteps, else the run's
    last step) with --ppo_anneal_lr; both PPOs' (Box and discrete actions)."""
    if not cfg.ppo.anneal_lr:
        return cfg.ppo.lr
    return cfg.ppo.lr * max(1.0 - timesteps / max(1, cfg.lr_horizon_timesteps), 0.0)


@dataclass
class PaidRollout:
    """A PPO rollout and the rewards it was paid, as the observers and PolicyTrainer's bookkeeping read a
    rollout: ``next_obs`` what the predictor sees per step (x_t, float32 (T, N, D + A); None on the true
    reward), ``true_rewards`` the task's reward (info["reward_task"], no control cost: what the synthetic
    oracle pays), ``rewards`` the training reward (None: random play)."""

    rollout: PPORollout
    rewards: np.ndarray | None

    @property
    def next_obs(self):
        return self.rollout.predictor_obs

    @property
    def true_rewards(self) -> np.ndarray:
        return self.rollout.task_rewards

    @property
    def states(self) -> np.ndarray | None:
        """(T, N, S) float64 simulator states where a person labels (the clips are drawn from them), else None."""
        return self.rollout.states

    @property
    def falls(self) -> np.ndarray | None:
        """(T, N) bool with the states: where the robot fell (a person's clip shows it), else None."""
        return self.rollout.falls

    @property
    def fell(self) -> np.ndarray | None:
        """(T, N) bool: info["fell"] of every step (drlhp.policy.fall_figures reads it)."""
        return self.rollout.fell

    @property
    def dones(self) -> np.ndarray:
        return self.rollout.dones

    @property
    def finished(self) -> list:
        return self.rollout.finished

    @property
    def env_s(self) -> float:
        return self.rollout.env_s

    @property
    def act_s(self) -> float:
        return self.rollout.act_s


class PPOTrainer(PolicyTrainer):
    """PPO in PolicyTrainer's loop and services: the rollout (RolloutCollector) and its random play, its rewards, the
    update, its learning rate and entropy bonus (--ppo_lr, --ppo_ent_coef), the episodes' figures, the targets and
    the milestone are PPO's; the rest is PolicyTrainer's."""

    algo = "ppo"
    figures_around_points = False

    def __init__(self, cfg: RunConfig, agent: Agent, out: Outputs, ports: PolicyPorts = PolicyPorts(),
                 observers: list[RolloutObserver] = (), episodes: str = "", record_states: bool = False):
        """``agent``: the envs (a gymnasium vector env of Box actions, envs/fixed_length.py), the PPOPolicy and the
        reward source (EnvReward, or PredictedReward on x_t); ``episodes``: what the envs do to episodes
        (envs.fixed_length.describe), for the summary; ``record_states``: the rollouts keep each step's simulator
        state (a person labels MuJoCo clips drawn from them)."""
        self.episodes_line, self.record_states = episodes, record_states
        super().__init__(cfg, agent, out, ports, observers)

    def make_runner(self) -> RolloutCollector:
        return RolloutCollector(self.env, self.policy, env_seed(self.cfg.seed, self.state.updates, self.cfg.ppo.n_envs),
                                predictor_input=self.reward_source.name != EnvReward.name,
                                record_states=self.record_states, next_obs=self.cfg.reward.next_obs)

    def random_rollout(self) -> PaidRollout:
        """Before the predictor's first weights: the policy as it is (its initial Gaussian) plays; nothing learns."""
        return PaidRollout(self.runner.run(), None)

    def play(self, timing: dict) -> PaidRollout:
        rollout = self.runner.run()
        t0 = time.perf_counter()
        true = rollout.rewards if self.cfg.ppo.control_cost else rollout.task_rewards  # --no-ppo_control_cost
        rewards = self.reward_source.rewards(rollout.predictor_obs, true)
        timing["reward_s"] += time.perf_counter() - t0
        return PaidRollout(rollout, rewards)

    def learn(self, paid: PaidRollout) -> dict:
        return self.policy.learn(paid.rollout, paid.rewards, self.learning_rate(), self.entropy_coef())

    def learning_rate(self) -> float:
        return ppo_learning_rate(self.cfg, self.state.timesteps)

    def entropy_coef(self) -> float:
        return self.cfg.ppo.ent_coef

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
        return {**super().summary(), "episodes_are": self.episodes_line}

    def _count_episodes(self, finished) -> None:
        for episode in finished:  # drlhp.policy.ppo.rollout.Episode
            self.state.episodes += 1
            self.state.recent_returns.append(episode.true_return)
            self.state.recent_task_returns.append(episode.task_return)
            self.state.recent_standard_returns.append(episode.standard_return)
            self.state.recent_lengths.append(episode.length)

"""Training discrete PPO (--algo ppo on Atari or MovingDot): the policy loop (drlhp.policy.loop.PolicyTrainer) with
PPO's rollout (drlhp.policy.ppo.discrete_rollout), policy and update (drlhp.policy.ppo.discrete_policy) and learning
rate; the rest as A2C's runs: the envs (envs.make_vec_env, --ppo_n_envs of them), the reward sources (the env's
reward clipped, or the predictor's: PredictedReward, its centring and clipping), random play before the predictor's
first weights, the observers (SegmentFeed and the rest, drlhp.policy.feeds), episodes and returns per game,
milestones, checkpoints (``policy-<updates>.npz``, algo "ppo" in their meta), the progress line and metrics.

    DiscretePPOTrainer.train (PolicyTrainer.train), per update:
        rollout = collector.run()              (--ppo_n_steps x --ppo_n_envs agent steps; the rewards in one batch)
        observers see the rollout              (segments for the labeller)
        policy.learn(rollout, lr(t), ent_coef) (lr falls linearly to 0 at the horizon with --ppo_anneal_lr)
"""
from __future__ import annotations

from drlhp.policy.discrete_rollout import episode_ends_for
from drlhp.policy.loop import PolicyTrainer
from drlhp.policy.ppo.discrete_rollout import DiscreteRolloutCollector
from drlhp.policy.ppo.trainer import ppo_learning_rate
from drlhp.policy.training_state import env_seed


class DiscretePPOTrainer(PolicyTrainer):
    """PPO on discrete actions in PolicyTrainer's loop: the rollout and the update are discrete PPO's; the learning
    rate and entropy bonus (--ppo_lr, --ppo_ent_coef) and the checkpoint (algo "ppo") both PPOs'."""

    algo = "ppo"

    def make_runner(self) -> DiscreteRolloutCollector:
        cfg = self.cfg
        return DiscreteRolloutCollector(self.env, self.policy, self.reward_source, cfg.ppo.n_steps,
                                        seed=env_seed(cfg.seed, self.state.updates, self.env.n_envs),
                                        episode_ends=episode_ends_for(cfg, self.reward_source))

    def learn(self, rollout) -> dict:
        return self.policy.learn(rollout, self.learning_rate(), self.entropy_coef())

    def learning_rate(self) -> float:
        return ppo_learning_rate(self.cfg, self.state.timesteps)

    def entropy_coef(self) -> float:
        return self.cfg.ppo.ent_coef

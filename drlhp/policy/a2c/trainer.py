"""Training A2C: the policy loop (drlhp.policy.loop.PolicyTrainer) with A2C's rollouts, update and schedules.

    A2CTrainer.train (PolicyTrainer.train), per update:
        rollout = runner.run()                   (--n_steps x --n_envs agent steps; the rewards in one batch, then
                                                  the n-step returns: drlhp.policy.a2c.rollout)
        observers see the rollout                (segments for the labeller)
        policy.train(obs, actions, returns, lr, ent_coef)
                                                 (lr falls linearly to 0 at the horizon; the entropy bonus may
                                                  switch once: --ent_coef_switch_million_timesteps)
"""
from __future__ import annotations

from drlhp.policy.a2c.rollout import A2CRollout, A2CRunner
from drlhp.policy.discrete_rollout import episode_ends_for
from drlhp.policy.loop import PolicyTrainer
from drlhp.policy.training_state import env_seed


class A2CTrainer(PolicyTrainer):
    """A2C in PolicyTrainer's loop: its runner, its update, its learning rate and entropy bonus (cfg.a2c)."""

    algo = "a2c"

    def make_runner(self) -> A2CRunner:
        cfg = self.cfg
        return A2CRunner(self.env, self.policy, self.reward_source, cfg.a2c.n_steps, cfg.a2c.gamma,
                         seed=env_seed(cfg.seed, self.state.updates, self.env.n_envs),
                         episode_ends=episode_ends_for(cfg, self.reward_source))

    def learn(self, rollout: A2CRollout) -> dict:
        return self.policy.train(rollout.b_obs, rollout.b_actions, rollout.b_returns, self.learning_rate(),
                                 self.entropy_coef())

    def learning_rate(self) -> float:
        """lr decayed linearly from cfg.a2c.lr at step 0 to 0 at the horizon (--lr_horizon_million_timesteps;
        by default the run's last step)."""
        frac = 1.0 - self.state.timesteps / max(1, self.cfg.lr_horizon_timesteps)
        return self.cfg.a2c.lr * max(frac, 0.0)

    def entropy_coef(self) -> float:
        """The entropy bonus's weight now: --ent_coef, then --ent_coef_after_switch from
        --ent_coef_switch_million_timesteps on (0: never)."""
        a2c = self.cfg.a2c
        switch = int(round(a2c.ent_coef_switch_million_timesteps * 1e6))
        return a2c.ent_coef_after_switch if switch and self.state.timesteps >= switch else a2c.ent_coef

"""PPO's hyper-parameters (PPOConfig): the policy's algorithm for Box (continuous) actions, and with --algo ppo for
discrete ones, beside A2C's (drlhp.config.a2c). Each field is a flag ``--ppo_<field>`` (drlhp.config.cli;
RunConfig.ppo, drlhp.config)."""
from __future__ import annotations

from dataclasses import dataclass

from drlhp.config.fields import NOT_NEGATIVE, POSITIVE, opt, whole, within

FALL_RULES = ("reset", "penalty", "end", "none")  # envs/fixed_length.py's FALL_RULES (a test checks they agree)


@dataclass(frozen=True)
class PPOConfig:
    """PPO (Schulman et al., 2017; drlhp.policy.ppo.update). Defaults: the paper's discount and GAE lambda (its TRPO's),
    the rest CleanRL's and SB3's for MuJoCo, but 8 envs x 256 steps for CleanRL's 1 x 2048 (the same batch; fewer
    Python calls per agent step). On discrete actions (drlhp.policy.ppo.discrete_policy) the presets of the discrete
    envs (moving-dot, paper, pong) set CleanRL's Atari values with --algo ppo (drlhp/config/presets.py, DISCRETE_PPO);
    there the fields of the Gaussian policy and of MuJoCo's episodes (obs_clip, reward_clip, init_log_std, hidden,
    fall_penalty, control_cost) mean nothing, and the update is always fused.

    Attributes:
        n_envs: envs stepped together (one rollout is n_envs x n_steps agent steps).
        n_steps: steps per env per rollout (8 x 256 = 2,048, CleanRL's and SB3's batch).
        n_epochs: passes over each rollout (CleanRL, SB3: 10).
        n_minibatches: minibatches per pass (32: 64 agent steps each, as CleanRL's and SB3's); must divide
            n_envs x n_steps.
        lr: Adam's learning rate (3e-4); with anneal_lr it falls linearly to 0 at the run's last step (or at
            --lr_horizon_million_timesteps).
        anneal_lr: anneal the learning rate (CleanRL's default).
        gamma: discount (the paper: 0.995; CleanRL and SB3 0.99).
        gae_lambda: GAE's lambda (the paper: 0.97; CleanRL and SB3 0.95).
        clip_coef: the surrogate's clip range epsilon (0.2).
        clip_vloss: clip the value's change as the policy's (CleanRL's default on; off here, as SB3's: Andrychowicz
            et al. 2021 found it no help on MuJoCo).
        ent_coef: entropy bonus (the paper: 0.01 when learning from the predictor, 0.001 on Swimmer; CleanRL 0 on
            the true reward, as the mujoco preset).
        vf_coef: the value loss's weight (0.5).
        max_grad_norm: global gradient-norm clip (0.5).
        adam_eps: Adam's epsilon (1e-5, as CleanRL and SB3's PPO).
        norm_adv: normalize advantages per minibatch.
        obs_clip: normalized observations clipped to +- this (10).
        reward_clip: scaled rewards clipped to +- this (10).
        init_log_std: the log std's start (0: std 1 on actions in [-1, 1]).
        hidden: units in each of the two hidden layers (64).
        fused_update: run the whole update (every epoch's minibatch steps) in ONE compiled call, a loop in the
            graph over the same minibatch step; off: one compiled call per minibatch step, from Python. The same
            arithmetic; fused costs less CPU (bench/ppo_speed.py compares the two; docs/results/speed.md).
        fall_penalty: --fall_rule reset: reward lost per fall in the fixed-length episodes PPO's envs have
            (envs/fixed_length.py: a fall costs this, puts the robot back, and the episode goes on; the paper's
            appendix A).
        fall_rule: what a step out of the task's healthy range does in the fixed-length episodes (envs/fixed_length.py;
            on CartPole-v1's preference runs too): "reset" costs --fall_penalty once and puts the robot back at a
            start state; "penalty" (the paper's words, rl-teacher's NeverDone) costs --fall_step_penalty on every step
            out of range and puts nothing back (the robot gets up if it can); the episode goes on either way. "end":
            episodes end at a fall as gymnasium ends them (not the paper's; for PPO paid gymnasium's standard reward,
            the measure published PPO figures use). "none": no healthy range at all, nothing is a fall (no penalty, no
            reset, the fixed length only), for a goal that leaves the range, such as a person teaching a Hopper a
            backflip; Hopper, Walker2d, Ant and the tasks that never end early only (the pendulums' and CartPole's
            range is their task: refused there).
        fall_step_penalty: --fall_rule penalty: reward lost per step out of the healthy range (1: the size of the
            healthy reward gymnasium's -v5 tasks already withhold on such a step; envs/fixed_length.py says why).
        fall_hold_steps: --fall_rule penalty: a robot out of the healthy range this many steps in a row is put back
            at a start state, as the reset rule puts it back (issue 38, H48: a fall that lasts, then a reset); 0 (the
            default): never, the paper's rule.
        control_cost: on the true reward (train_policy_with_original_rewards), pay the env's own reward, its
            control (torque) cost included; off: the reward without it (info["reward_task"]), the reward the
            paper's tasks had ("we removed them", A.1) and rl-teacher's RL baseline was paid. Either way both
            returns are logged (true_return_last100 with the cost, task_return_last100 without).
    """

    n_envs: int = opt(8, check=whole(1), flag="ppo_n_envs")
    n_steps: int = opt(256, check=whole(1), flag="ppo_n_steps")
    n_epochs: int = opt(10, check=whole(1), flag="ppo_n_epochs")
    n_minibatches: int = opt(32, check=whole(1), flag="ppo_n_minibatches")
    lr: float = opt(3e-4, check=POSITIVE, flag="ppo_lr")
    anneal_lr: bool = opt(True, flag="ppo_anneal_lr")
    gamma: float = opt(0.995, check=within(0, 1), flag="ppo_gamma")
    gae_lambda: float = opt(0.97, check=within(0, 1), flag="ppo_gae_lambda")
    clip_coef: float = opt(0.2, check=POSITIVE, flag="ppo_clip_coef")
    clip_vloss: bool = opt(False, flag="ppo_clip_vloss")
    ent_coef: float = opt(0.01, check=NOT_NEGATIVE, flag="ppo_ent_coef")
    vf_coef: float = opt(0.5, check=NOT_NEGATIVE, flag="ppo_vf_coef")
    max_grad_norm: float = opt(0.5, check=POSITIVE, flag="ppo_max_grad_norm")
    adam_eps: float = opt(1e-5, check=POSITIVE, flag="ppo_adam_eps")
    norm_adv: bool = opt(True, flag="ppo_norm_adv")
    obs_clip: float = opt(10.0, check=POSITIVE, flag="ppo_obs_clip")
    reward_clip: float = opt(10.0, check=POSITIVE, flag="ppo_reward_clip")
    init_log_std: float = opt(0.0, flag="ppo_init_log_std")
    hidden: int = opt(64, check=whole(1), flag="ppo_hidden")
    fused_update: bool = opt(True, flag="ppo_fused_update")
    fall_penalty: float = opt(100.0, check=NOT_NEGATIVE, flag="fall_penalty")
    fall_rule: str = opt("reset", choices=FALL_RULES, flag="fall_rule")
    fall_step_penalty: float = opt(1.0, check=NOT_NEGATIVE, flag="fall_step_penalty")
    fall_hold_steps: int = opt(0, check=whole(0), flag="fall_hold_steps")
    control_cost: bool = opt(True, flag="ppo_control_cost")

    @property
    def falls(self) -> dict:
        """What a fall does, as envs/fixed_length.py's makers take it: ``any_vector_env(env_id, n, **cfg.falls)``."""
        return {"fall_penalty": self.fall_penalty, "fall_rule": self.fall_rule,
                "fall_step_penalty": self.fall_step_penalty, "fall_hold_steps": self.fall_hold_steps}

    def fall_problem(self) -> str | None:
        """Fall settings that do not fit together, in one line, or None (any algorithm: the envs take them)."""
        if self.fall_hold_steps and self.fall_rule != "penalty":
            return (f"--fall_hold_steps puts a fallen robot back under --fall_rule penalty only (this run's: "
                    f"{self.fall_rule})")
        return None

    @property
    def batch(self) -> int:
        return self.n_envs * self.n_steps

    @property
    def minibatch(self) -> int:
        return self.batch // self.n_minibatches

    def problem(self) -> str | None:
        """Settings that do not fit together (each field's own range is its check's), in one line, or None."""
        if self.batch % self.n_minibatches:
            return (f"--ppo_n_envs x --ppo_n_steps ({self.batch}) must divide into --ppo_n_minibatches "
                    f"({self.n_minibatches})")
        return None

"""A2C's hyper-parameters (A2CConfig): the policy's algorithm for discrete actions, the paper's for Atari, beside
PPO's (drlhp.config.ppo). Each field is a flag of its own name (drlhp.config.cli; RunConfig.a2c, drlhp.config)."""
from __future__ import annotations

from dataclasses import dataclass

from drlhp.config.fields import NOT_NEGATIVE, POSITIVE, opt, whole, within


@dataclass(frozen=True)
class A2CConfig:
    """Advantage actor-critic (Mnih et al., 2016), synchronous, as in OpenAI baselines' A2C.

    Attributes:
        n_envs: environments stepped in parallel (the batch is n_envs x n_steps agent steps).
        n_steps: agent steps per env per update (the n of n-step returns).
        lr: RMSprop learning rate at step 0, decayed linearly to 0 over the run's timesteps.
        rms_decay: RMSprop decay (rho) of the mean squared gradient.
        rms_eps: RMSprop epsilon.
        rmsprop_style: "torch" (PyTorch's RMSprop: mean square initialized to 0, epsilon outside the square
            root) or "tf1" (TensorFlow 1's RMSProp, which OpenAI baselines' A2C used: mean square initialized
            to 1, epsilon inside the square root, as Keras 3's RMSprop also has it); docs/results/pong.md and
            moving-dot.md compare them.
        ent_coef: weight of the entropy bonus.
        ent_coef_switch_million_timesteps: from this many million agent steps on, the entropy bonus is
            --ent_coef_after_switch instead (0: never). The Pong campaign's run halved it at 6.3M, once the
            policy rallied and scored, and climbed from +3 to +18 (docs/results/pong.md, sessions 11-12).
        ent_coef_after_switch: weight of the entropy bonus after --ent_coef_switch_million_timesteps.
        vf_coef: weight of the value loss (mean squared error).
        gamma: discount factor per agent step.
        max_grad_norm: global gradient-norm clip.
        episode_ends: whether an episode's end stops the policy's n-step returns. "auto": yes with original
            rewards (standard A2C), no with the predictor's reward, as the paper did ("we do not send life loss
            or episode end signals to the agent"): the envs become one continuing task, so a constant offset in
            the learned reward cannot make the agent seek or avoid an episode's end. "on" / "off" force it.
        original_reward: train_policy_with_original_rewards: "clipped" (sign of the env's reward, the A2C
            convention) or "scaled" (that sign with its running mean removed and its std scaled to 0.05, as the
            predictor's reward reaches the policy; an experiment).
    """

    n_envs: int = opt(16, check=whole(1))
    n_steps: int = opt(5, check=whole(1))
    lr: float = opt(7e-4, check=POSITIVE)
    rms_decay: float = opt(0.99, check=within(0, 1, high_in=False))
    rms_eps: float = opt(1e-5, check=POSITIVE)
    rmsprop_style: str = opt("torch", choices=("torch", "tf1"))
    ent_coef: float = opt(0.01, check=NOT_NEGATIVE)
    ent_coef_switch_million_timesteps: float = opt(0.0, check=NOT_NEGATIVE)
    ent_coef_after_switch: float = opt(0.005, check=NOT_NEGATIVE)
    vf_coef: float = opt(0.5, check=NOT_NEGATIVE)
    gamma: float = opt(0.99, check=within(0, 1))
    max_grad_norm: float = opt(0.5, check=POSITIVE)
    episode_ends: str = opt("auto", choices=("auto", "on", "off"))
    original_reward: str = opt("clipped", choices=("clipped", "scaled"))

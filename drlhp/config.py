"""Typed, frozen configs per role, their defaults (with units and paper references) and the CLI.

``parse_args(argv) -> RunConfig`` is the only place command-line flags are read.
"""
from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field

MODES = ("train_policy_with_original_rewards", "watch", "train_policy_with_preferences")
DEFAULT_MODE = "train_policy_with_preferences"  # the paper's setting; arrives with the preference pipeline


@dataclass(frozen=True)
class A2CConfig:
    """Advantage actor-critic (Mnih et al., 2016), synchronous, as in OpenAI baselines' A2C.

    Attributes:
        n_envs: environments stepped in parallel (the batch is n_envs * n_steps agent steps).
        n_steps: agent steps per env per update (the n of n-step returns).
        lr: RMSprop learning rate at step 0, decayed linearly to 0 over the run's timesteps.
        rms_decay: RMSprop decay (rho) of the mean squared gradient.
        rms_eps: RMSprop epsilon.
        rmsprop_style: "torch" (default; PyTorch's and Keras' RMSprop: mean square initialized to 0,
            epsilon outside the square root) or "tf1" (TensorFlow 1's RMSProp, which OpenAI baselines'
            A2C used: mean square initialized to 1, epsilon inside the square root). Measured here
            (README, "Learning checks"): with "tf1" the policy barely moves on Pong in 4M steps and
            MovingDot needs ~130k steps; with "torch" Pong improves from 1M steps and MovingDot
            learns by ~40k: the epsilon inside the root caps the step of every parameter whose
            gradient is below ~3e-3, which here is nearly all of them.
        ent_coef: weight of the entropy bonus.
        vf_coef: weight of the value loss (mean squared error).
        gamma: discount factor per agent step.
        max_grad_norm: global gradient-norm clip.
    """

    n_envs: int = 16
    n_steps: int = 5
    lr: float = 7e-4
    rms_decay: float = 0.99
    rms_eps: float = 1e-5
    rmsprop_style: str = "torch"
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    gamma: float = 0.99
    max_grad_norm: float = 0.5


@dataclass(frozen=True)
class RunConfig:
    """One run of run.py.

    Attributes:
        mode: what to run (see MODES).
        env: environment id: MovingDot-v0 or an Atari ``*NoFrameskip-v4`` id.
        seed: seeds TensorFlow, numpy and every env worker (worker i gets seed + i).
        million_timesteps: training budget in millions of agent steps (1 agent step = 4 Atari frames).
        run_dir: where everything of this run is written; default runs/<env>-<mode>-<time>.
        log_interval: seconds between progress lines and metric rows.
        policy_ckpt_interval: policy updates between checkpoints (plus one at the end).
        load_policy_ckpt_dir: a checkpoint directory to start from; its run resumes where it stopped.
        n_env_threads: C++ threads stepping Atari envs (0: one per core).
        tf_intra_threads / tf_inter_threads: TensorFlow thread pools of the policy process.
        episodes: episodes to play in ``watch`` mode.
        video: output video of ``watch`` mode (.mp4 or .gif); default <run_dir>/episode.mp4.
        a2c: the A2C hyper-parameters.
    """

    mode: str
    env: str
    seed: int = 0
    million_timesteps: float = 10.0
    run_dir: str | None = None
    log_interval: float = 5.0
    policy_ckpt_interval: int = 1000
    load_policy_ckpt_dir: str | None = None
    n_env_threads: int = 0
    tf_intra_threads: int = 2
    tf_inter_threads: int = 1
    episodes: int = 1
    video: str | None = None
    a2c: A2CConfig = field(default_factory=A2CConfig)

    @property
    def total_timesteps(self) -> int:
        return int(round(self.million_timesteps * 1e6))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run.py",
        description="Deep RL from human preferences. Modes: " + ", ".join(MODES) + ".")
    p.add_argument("mode", nargs="?", default=DEFAULT_MODE, choices=MODES)
    p.add_argument("--env", help="MovingDot-v0 or an Atari id such as PongNoFrameskip-v4 (see --list_envs)")
    p.add_argument("--list_envs", action="store_true", help="print the valid env ids and exit")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--million_timesteps", type=float, default=10.0, help="agent steps, in millions")
    p.add_argument("--run_dir", default=None)
    p.add_argument("--log_interval", type=float, default=5.0, help="seconds between progress lines")
    p.add_argument("--policy_ckpt_interval", type=int, default=1000, help="updates between checkpoints")
    p.add_argument("--load_policy_ckpt_dir", default=None)
    p.add_argument("--n_envs", type=int, default=A2CConfig.n_envs)
    p.add_argument("--n_steps", type=int, default=A2CConfig.n_steps)
    p.add_argument("--lr", type=float, default=A2CConfig.lr)
    p.add_argument("--ent_coef", type=float, default=A2CConfig.ent_coef)
    p.add_argument("--gamma", type=float, default=A2CConfig.gamma)
    p.add_argument("--rmsprop_style", choices=("tf1", "torch"), default=A2CConfig.rmsprop_style,
                   help="torch (default): epsilon outside the square root; tf1: baselines' optimizer")
    p.add_argument("--n_env_threads", type=int, default=0, help="Atari env threads (0: one per core)")
    p.add_argument("--tf_intra_threads", type=int, default=2)
    p.add_argument("--tf_inter_threads", type=int, default=1)
    p.add_argument("--episodes", type=int, default=1, help="watch: episodes to play")
    p.add_argument("--video", default=None, help="watch: output .mp4 or .gif")
    return p


def config_from_args(args: argparse.Namespace) -> RunConfig:
    a2c = A2CConfig(n_envs=args.n_envs, n_steps=args.n_steps, lr=args.lr, ent_coef=args.ent_coef,
                    gamma=args.gamma, rmsprop_style=args.rmsprop_style)
    return RunConfig(
        mode=args.mode, env=args.env, seed=args.seed, million_timesteps=args.million_timesteps,
        run_dir=args.run_dir, log_interval=args.log_interval,
        policy_ckpt_interval=args.policy_ckpt_interval, load_policy_ckpt_dir=args.load_policy_ckpt_dir,
        n_env_threads=args.n_env_threads, tf_intra_threads=args.tf_intra_threads,
        tf_inter_threads=args.tf_inter_threads, episodes=args.episodes, video=args.video, a2c=a2c)

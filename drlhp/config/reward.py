"""The reward predictor's hyper-parameters (RewardConfig). Each field is a flag ``--reward_<field>`` unless its
``opt(flag=...)`` names it otherwise (drlhp.config.cli; RunConfig.reward, drlhp.config)."""
from __future__ import annotations

from dataclasses import dataclass

from drlhp.config.fields import NOT_NEGATIVE, POSITIVE, opt, whole, within
from drlhp.processes.cpu import BFLOAT16_SETTINGS, ONEDNN_SETTINGS


@dataclass(frozen=True)
class RewardConfig:
    """The reward predictor (Christiano et al., 2017, section 2.2.3 and appendix A).

    Attributes:
        n_members: ensemble members, each trained on its own (online, Poisson) bootstrap sample (paper: 3).
        batch_size: preference pairs per member per training step.
        lr: Adam learning rate.
        dropout: dropout rate after every convolution (paper: 0.5).
        dropout_layers: how many of the 4 convolutions, from the first, dropout follows (paper: 4; the original
            reproduction: 3).
        batchnorm: batch normalization after every convolution (paper: yes).
        random_answer_prob: assumed chance that a label is a uniformly random answer (paper: 10%).
        l2_init: starting L2 coefficient (on the sum of squared kernel weights); then adapted per member so
            that its validation loss / training loss stays in [1.1, 1.5] (paper).
        norm_std: each member's output is scaled to this standard deviation over recent segments (paper:
            0.05), after removing its mean.
        n_initial_epochs: passes over the initial preferences before the policy starts (original: 200); with
            --reward_pretrain_patience, the most it runs.
        pretrain_patience: pretraining stops early once the best validation accuracy (evaluated every
            --reward_eval_interval steps, on the same validation pairs each time) has not risen by
            --reward_pretrain_min_gain in this many evaluations; 0: never (all n_initial_epochs). An evaluation
            without a strict label (all ties) does not count.
        pretrain_min_gain: the rise in validation accuracy over the best so far that counts as a gain for
            --reward_pretrain_patience.
        publish_interval: training steps between weight publications to the policy.
        eval_interval: training steps between validation evaluations (and L2 adaptation).
        norm_segments: recent segments whose frames set the normalization statistics (the first publication
            uses 10x as many).
        norm_momentum: at each publication, the normalization mean and variance move this fraction of the way
            to those measured on the newest segments (1: replaced; 0: measured once, at the first publication, and
            kept). Small values keep the policy's reward on one offset and scale as the predictor's weights change.
            InvertedPendulum from preferences reached a true return of 500 in 0.3M agent steps on 10 of 10 runs with
            it kept and on 7 of 15 with 0.1 (five variants, 3 seeds each; docs/results/mujoco.md, session 14): its
            preset sets 0.
        clip: each member's normalized output is clipped to this many standard deviations either side of its
            mean before the members are averaged and scaled to norm_std; 0: not clipped (the paper).
        center_steps: the policy subtracts from the predictor's reward its own running mean over about this many
            agent steps (an exponential average, updated every rollout, kept in policy checkpoints); 0: not (the
            paper). With the predictor's reward the envs are one continuing episode (--episode_ends auto), whose
            policy gradient does not depend on a constant offset, but a jump in it does hurt: with
            --reward_norm_momentum 1 (the pong preset) the normalization measured on recent clips at each
            publication can move the policy's reward by half a standard deviation, and until the value function
            catches up every advantage has that sign (the Pong campaign's entropy shocks, docs/results/pong.md,
            session 11). Use it with a window of many rollouts (Pong: 2,000 agent steps, 25 rollouts): with
            --episode_ends on, an offset is a bonus or a cost per step of an episode, and centring changes it.
        center_from_million_timesteps: the centring (center_steps) starts once the policy has taken this many
            million agent steps; before, its reward is the predictor's as published. 0: from the first step. On
            Pong, centring from the first step let the policy drift into losing every ball early on (3 runs of 3;
            docs/results/pong.md, session 13, H15), while the lineage that got it at 5.33M, once it rallied, was
            unharmed.
        ckpt_interval_s: seconds between predictor checkpoints (plus one at the end).
        tf_threads: TensorFlow intra-op threads of the predictor process in the three-process modes
            (pretrain_reward_predictor runs in one process and takes --tf_intra_threads). With 2, halve
            --reward_train_fraction to leave the policy the same share of 2 cores.
        onednn: the CPU kernel library of the predictor's TensorFlow (its process, and
            pretrain_reward_predictor): "on" oneDNN's, "off" Eigen's, "auto" by the CPU's flags: oneDNN with
            AVX-512 (avx512f), Eigen on x86-64 without it, TensorFlow's default on other CPUs (why:
            drlhp/processes/cpu.py). The choice and why are printed at start and recorded in run.json's sitting and
            summary.json. --reward_onednn alone means on, --no-reward_onednn off. The policy keeps TensorFlow's
            default (oneDNN on x86-64).
        bfloat16: what the predictor's convolutions compute in (weights, dense layers, loss and gradients stay
            float32), in its process and in the policy's, which computes the reward with the same network: "on"
            bfloat16, "off" float32, "auto" bfloat16 where the CPU has AVX512_BF16 or AMX and the predictor runs
            oneDNN's kernels (about 1.45x faster per training step there, slower elsewhere), float32 elsewhere
            (drlhp/processes/cpu.py). The choice and why are printed at start and recorded in run.json's sitting
            and summary.json. The pong preset keeps it off (docs/results/speed.md, session 12).
        train_fraction: the largest fraction of wall time the predictor spends training beside the policy
            (after a step of d seconds it rests d x (1/f - 1)), so it does not starve the policy of a core;
            1: flat out. Pretraining, while the policy waits, is not paced.
        next_obs: on a Box-action env (PPO, MuJoCo), the observation in the predictor's per-step input x_t =
            (o, clip(a_t)): off, o_t, the one action t was taken in (the table's runs); on, o_{t+1}, the one the step
            led to: at a fall under the reset rule the fallen state (``info["fall_observation"]``, out of the
            healthy range) rather than the fresh start the policy goes on from, at an episode's end its last
            observation. What every other predictor sees already (A2C's rollouts score ``next_obs``; CartPole
            learned once its fall was scored on the fallen state, issue 39). Issue 38's H54: with o_t the
            predictor never sees a fallen robot, and charges a fall 1-2% of what the oracle does (H32).
        updates_per_step: feeds the loop: before each update the policy waits until the predictor has made at
            least this many pair-updates (pairs in its training batches, per member) per agent step since both
            started training; 0: never waits. The paper's predictor "typically processes 1 label per 10 RL
            timesteps" (appendix A.2): 0.1. Use it with --reward_train_fraction 1.
    """

    n_members: int = opt(3, check=whole(1), flag="n_predictors")
    batch_size: int = opt(16, check=whole(1))
    lr: float = opt(2e-4, check=POSITIVE)
    dropout: float = opt(0.5, check=within(0, 1, high_in=False))
    dropout_layers: int = opt(4, check=within(0, 4))
    batchnorm: bool = opt(True)
    random_answer_prob: float = opt(0.1, check=within(0, 1, high_in=False))
    l2_init: float = opt(1e-4, check=NOT_NEGATIVE)
    norm_std: float = opt(0.05, check=POSITIVE)
    n_initial_epochs: int = opt(200, check=whole(0), flag="n_initial_epochs")
    pretrain_patience: int = opt(0, check=whole(0))
    pretrain_min_gain: float = opt(0.005, check=NOT_NEGATIVE)
    publish_interval: int = opt(20, check=whole(1))
    eval_interval: int = opt(25, check=whole(1))
    norm_segments: int = opt(20, check=whole(1))
    norm_momentum: float = opt(0.1, check=within(0, 1))
    clip: float = opt(0.0, check=NOT_NEGATIVE)
    center_steps: int = opt(0, check=whole(0))
    center_from_million_timesteps: float = opt(0.0, check=NOT_NEGATIVE)
    ckpt_interval_s: float = opt(60.0, check=POSITIVE)
    tf_threads: int = opt(1, check=whole(1))
    onednn: str = opt("auto", choices=ONEDNN_SETTINGS, negatable=True)
    bfloat16: str = opt("auto", choices=BFLOAT16_SETTINGS, negatable=True)
    train_fraction: float = opt(0.5, check=within(0, 1, low_in=False))
    updates_per_step: float = opt(0.0, check=NOT_NEGATIVE)
    next_obs: bool = opt(False)

"""Typed, frozen configs per role, their defaults (with units and paper references) and the CLI.

``parse_args(argv) -> RunConfig`` is the only place command-line flags are read.
"""
from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field

MODES = ("train_policy_with_preferences", "gather_initial_prefs", "pretrain_reward_predictor",
         "train_policy_with_original_rewards", "watch")
DEFAULT_MODE = "train_policy_with_preferences"  # the paper's setting
QUERY_SELECTIONS = ("random", "variance")
LABEL_SCHEDULES = ("constant", "paper")
BACKENDS = ("local", "ray")


def _json_resources(text: str) -> dict:
    """A --*_resources value: a JSON object of resource name -> amount."""
    import json

    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and v >= 0 for k, v in value.items()):
        raise argparse.ArgumentTypeError(f"not a JSON object of resource amounts: {text!r}")
    return value


@dataclass(frozen=True)
class A2CConfig:
    """Advantage actor-critic (Mnih et al., 2016), synchronous, as in OpenAI baselines' A2C.

    Attributes:
        n_envs: environments stepped in parallel (the batch is n_envs * n_steps agent steps).
        n_steps: agent steps per env per update (the n of n-step returns).
        lr: RMSprop learning rate at step 0, decayed linearly to 0 over the run's timesteps.
        rms_decay: RMSprop decay (rho) of the mean squared gradient.
        rms_eps: RMSprop epsilon.
        rmsprop_style: "torch" (default; PyTorch's RMSprop: mean square initialized to 0,
            epsilon outside the square root) or "tf1" (TensorFlow 1's RMSProp, which OpenAI baselines'
            A2C used: mean square initialized to 1, epsilon inside the square root). Measured here
            (docs/results.md, "learning checks"): with "tf1" the policy barely moves on Pong in 4M steps and
            MovingDot needs ~130k steps; with "torch" Pong improves from 1M steps and MovingDot
            learns by ~40k: the epsilon inside the root caps the step of every parameter whose
            gradient is below ~3e-3, which here is nearly all of them.
        ent_coef: weight of the entropy bonus.
        vf_coef: weight of the value loss (mean squared error).
        gamma: discount factor per agent step.
        max_grad_norm: global gradient-norm clip.
        episode_ends: whether an episode's end stops the policy's n-step returns. "auto" (default):
            yes with original rewards (standard A2C), no with the predictor's reward, as the paper
            did ("we do not send life loss or episode end signals to the agent (we do continue to
            actually reset the environment)"): the envs become one continuing task, so a constant
            offset in the learned reward cannot make the agent seek or avoid an episode's end
            (measured on MovingDot: with the end signal, the policy learned to hover next to the
            centre instead of landing on it). "on" / "off" force it.
        original_reward: train_policy_with_original_rewards: "clipped" (sign of the env's reward, the
            A2C convention) or "scaled" (that sign with its running mean removed and its std scaled to
            RewardConfig.norm_std, as the predictor's reward reaches the policy; an experiment).
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
    episode_ends: str = "auto"
    original_reward: str = "clipped"


@dataclass(frozen=True)
class RewardConfig:
    """The reward predictor (Christiano et al., 2017, section 2.2.3 and appendix A).

    Attributes:
        n_predictors: ensemble members, each trained on its own bootstrap sample (paper: 3).
        batch_size: preference pairs per member per training step.
        lr: Adam learning rate.
        dropout: dropout rate after every convolution (paper: 0.5).
        batchnorm: batch normalization after every convolution (paper: yes). On MovingDot it slows
            the predictor down several times (docs/results.md, "MovingDot from preferences").
        random_answer_prob: assumed chance that a label is a uniformly random answer (paper: 10%).
        l2_init: starting L2 coefficient (on the sum of squared kernel weights); then adapted so that
            validation loss / training loss stays in [1.1, 1.5] (paper).
        norm_std: each member's output is scaled to this standard deviation over recent segments
            (paper: 0.05), after removing its mean.
        n_initial_epochs: passes over the initial preferences before the policy starts (original: 200).
        publish_interval: training steps between weight publications to the policy.
        eval_interval: training steps between validation evaluations (and L2 adaptation).
        norm_segments: recent segments whose frames set the normalization statistics.
        norm_momentum: at each publication, the normalization mean and variance move this fraction
            of the way to those measured on the newest segments (1: replaced, as before). Small values
            keep the policy's reward on one offset and scale as the predictor's weights change.
        ckpt_interval_s: seconds between predictor checkpoints (plus one at the end).
        tf_intra_threads: TensorFlow intra-op threads of the predictor process (2 cores: 1).
        onednn: the predictor process's TensorFlow uses oneDNN's CPU kernels (True) or Eigen's (False).
            Eigen's are faster for the paper's reward network on an AVX2-only AMD EPYC (a training step
            of 16 pairs of 5-step clips: 175 against 283 ms), while oneDNN's are faster for the policy's
            Nature CNN, so only the predictor process switches (docs/results.md, 2026-11-23).
        train_fraction: pacing of the predictor's training beside the policy: the largest fraction of
            wall time it spends training (after a step of d seconds it rests d * (1/f - 1)), so it
            does not starve the policy of a core. 1.0: train flat out. Pretraining, while the policy
            waits, is not paced. Measured on Pong (docs/results.md, "throughput"): 0.5 gives the policy the
            CPU it needs for issue 4's speed target.
        updates_per_step: feeds the loop: the policy waits (before each update) until the predictor has made
            at least this many pair-updates (pairs in its training batches, per member) per agent step since
            both started training; 0: off (the policy never waits). The paper's predictor "typically
            processes 1 label per 10 RL timesteps" (appendix A.2): 0.1. Use it with train_fraction 1.
    """

    n_predictors: int = 3
    batch_size: int = 16
    lr: float = 2e-4
    dropout: float = 0.5
    batchnorm: bool = True
    random_answer_prob: float = 0.1
    l2_init: float = 1e-4
    norm_std: float = 0.05
    n_initial_epochs: int = 200
    publish_interval: int = 20
    eval_interval: int = 25
    norm_segments: int = 20
    norm_momentum: float = 0.1
    ckpt_interval_s: float = 60.0
    tf_intra_threads: int = 1
    onednn: bool = False
    train_fraction: float = 0.5
    updates_per_step: float = 0.0


@dataclass(frozen=True)
class PrefConfig:
    """Segments, pairing, labelling and the preference database.

    Attributes:
        synthetic_prefs: the synthetic oracle labels (prefers the larger sum of true reward); else a person,
            in the labelling window (pref_interface.gui).
        query_selection: "random" pairs, or "variance": of 10x candidate pairs, the one whose predicted
            preference varies most across the ensemble (the paper's active queries).
        segment_length: agent steps per segment (paper: 25, about 1.7 s of Atari at 15 fps).
        segments_per_cut: at most this many segments are cut each time (every segment_length steps
            of all workers), and only as many as the preference interface still asks for
            (queues.SegmentFlow); workers are taken in turn, so all contribute.
        segment_queue_size: capacity of segment_queue; a full queue drops segments (counted).
        segment_pool_size: recent segments the preference interface pairs from.
        max_prefs: preference database bound; the oldest are dropped first (original: 3000).
        n_initial_prefs: preferences gathered with a random policy before the predictor is pretrained.
        prefs_save_interval: new preferences between database saves (plus one at exit).
        label_schedule: "constant" (labels spread evenly over the run) or "paper" (rate proportional
            to 5e6 / (T + 5e6), T in frames).
        n_labels: labels after the initial ones, spread over the run by label_schedule (a person is offered
            pairs at most that fast; the oracle labels exactly that fast).
        variance_candidates: candidate pairs per query with query_selection "variance" (paper: 10x).
        show_agent: a person labels: the window also loops the agent's latest finished episode (worker 0).
    """

    synthetic_prefs: bool = False
    query_selection: str = "random"
    segment_length: int = 25
    segments_per_cut: int = 4
    segment_queue_size: int = 32
    segment_pool_size: int = 100
    max_prefs: int = 3000
    n_initial_prefs: int = 500
    prefs_save_interval: int = 20
    label_schedule: str = "constant"
    n_labels: int = 3000
    variance_candidates: int = 10
    show_agent: bool = False


@dataclass(frozen=True)
class RunConfig:
    """One run of run.py.

    Attributes:
        mode: what to run (see MODES).
        env: environment id: MovingDot-v0 or an Atari ``*NoFrameskip-v4`` id.
        seed: seeds TensorFlow, numpy and every env worker (worker i gets seed + i).
        million_timesteps: training budget in millions of agent steps (1 agent step = 4 Atari frames);
            the learning rate decays to 0 over it.
        stop_at_million_timesteps: end this sitting (checkpointed, resumable) once the policy has this
            many million agent steps, with the learning-rate schedule still that of million_timesteps.
            0: run the whole budget.
        run_dir: where everything of this run is written; default runs/<env>-<mode>-<time>.
        log_interval: seconds between progress lines and metric rows.
        policy_ckpt_interval: policy updates between checkpoints (plus one at the end).
        load_policy_ckpt_dir: a checkpoint directory to start from; its run resumes where it stopped.
        n_env_threads: C++ threads stepping Atari envs (0: one per core).
        tf_intra_threads / tf_inter_threads: TensorFlow thread pools of the policy process.
        episodes: episodes to play in ``watch`` mode.
        video: output video of ``watch`` mode (.mp4 or .gif); default <run_dir>/episode.mp4.
        load_prefs_dir: a preference database (file, or a run directory holding prefs/prefs.npz).
        load_reward_predictor_ckpt_dir: a reward predictor checkpoint (file or run directory).
        no_labelling: train the policy on a loaded predictor, with no labeller and no predictor training.
        profile: every process profiles itself with cProfile into <run_dir>/profile/ (drlhp.profiling).
        preset: the named set of flags the command line started from (drlhp.presets; recorded only).
        resume_with_changes: go on with a run directory whose recorded settings differ from these.
        backend: how the three processes of the preference modes run: "local" (multiprocessing on this
            machine, drlhp.launcher) or "ray" (Ray actors, drlhp.ray_backend; Ray is imported only then).
        ray_address: --backend ray: the Ray cluster to join ("auto" or HOST:PORT); None starts a local Ray.
        policy_resources / predictor_resources / labeller_resources: --backend ray: the Ray resources each
            role's actor asks for, e.g. {"GPU": 1} or {"display": 1} (a custom resource of the node with the
            person's screen); None: Ray's default (placed on any node with a CPU).
        a2c, reward, prefs: the hyper-parameters of each role.
    """

    mode: str
    env: str
    seed: int = 0
    million_timesteps: float = 10.0
    stop_at_million_timesteps: float = 0.0
    run_dir: str | None = None
    log_interval: float = 5.0
    policy_ckpt_interval: int = 1000
    load_policy_ckpt_dir: str | None = None
    n_env_threads: int = 0
    tf_intra_threads: int = 2
    tf_inter_threads: int = 1
    episodes: int = 1
    video: str | None = None
    load_prefs_dir: str | None = None
    load_reward_predictor_ckpt_dir: str | None = None
    no_labelling: bool = False
    profile: bool = False
    preset: str = "none"
    resume_with_changes: bool = False
    backend: str = "local"
    ray_address: str | None = None
    policy_resources: dict | None = None
    predictor_resources: dict | None = None
    labeller_resources: dict | None = None
    a2c: A2CConfig = field(default_factory=A2CConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    prefs: PrefConfig = field(default_factory=PrefConfig)

    @property
    def total_timesteps(self) -> int:
        return int(round(self.million_timesteps * 1e6))

    @property
    def stop_timesteps(self) -> int:
        """Where this sitting ends: the budget, or stop_at_million_timesteps if that is sooner."""
        stop = int(round(self.stop_at_million_timesteps * 1e6))
        return min(self.total_timesteps, stop) if stop > 0 else self.total_timesteps

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="run.py",
        description="Deep RL from human preferences. Modes: " + ", ".join(MODES) + ".")
    p.add_argument("mode", nargs="?", default=DEFAULT_MODE, choices=MODES)
    p.add_argument("--env", help="MovingDot-v0, an Atari id such as PongNoFrameskip-v4, or any registered gymnasium "
                                 "id with discrete actions, such as CartPole-v1 (see --list_envs)")
    p.add_argument("--list_envs", action="store_true", help="print the valid env ids and exit")
    p.add_argument("--preset", default=None,
                   help="start from a named set of flags (later flags override it); default: the env's own "
                        "(MovingDot: moving-dot, Atari: paper); --list_presets shows them")
    p.add_argument("--list_presets", action="store_true", help="print the presets and their flags and exit")
    p.add_argument("--resume_with_changes", action="store_true",
                   help="go on with an existing run directory although its recorded settings differ")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--million_timesteps", type=float, default=10.0, help="agent steps, in millions")
    p.add_argument("--stop_at_million_timesteps", type=float, default=0.0,
                   help="end this sitting at this many million agent steps (resumable; the learning rate "
                        "still decays over --million_timesteps); 0: the whole budget")
    p.add_argument("--run_dir", default=None)
    p.add_argument("--log_interval", type=float, default=5.0, help="seconds between progress lines")
    p.add_argument("--policy_ckpt_interval", type=int, default=1000, help="updates between checkpoints")
    p.add_argument("--load_policy_ckpt_dir", default=None)
    p.add_argument("--n_envs", type=int, default=A2CConfig.n_envs)
    p.add_argument("--n_steps", type=int, default=A2CConfig.n_steps)
    p.add_argument("--lr", type=float, default=A2CConfig.lr)
    p.add_argument("--ent_coef", type=float, default=A2CConfig.ent_coef)
    p.add_argument("--gamma", type=float, default=A2CConfig.gamma)
    p.add_argument("--episode_ends", choices=("auto", "on", "off"), default=A2CConfig.episode_ends,
                   help="episode ends stop the policy's returns: auto = on with original rewards, off with "
                        "the predictor's (the paper)")
    p.add_argument("--rmsprop_style", choices=("tf1", "torch"), default=A2CConfig.rmsprop_style,
                   help="torch (default): epsilon outside the square root; tf1: baselines' optimizer")
    p.add_argument("--original_reward", choices=("clipped", "scaled"), default=A2CConfig.original_reward,
                   help="train_policy_with_original_rewards: the env's reward clipped to its sign, or that "
                        "sign scaled as the predictor's reward is (mean 0, std 0.05; an experiment)")
    p.add_argument("--n_env_threads", type=int, default=0, help="Atari env threads (0: one per core)")
    p.add_argument("--tf_intra_threads", type=int, default=2)
    p.add_argument("--tf_inter_threads", type=int, default=1)
    p.add_argument("--profile", action="store_true",
                   help="profile every process with cProfile: <run_dir>/profile/<role>.txt (and .prof)")
    p.add_argument("--episodes", type=int, default=1, help="watch: episodes to play")
    p.add_argument("--video", default=None, help="watch: output .mp4 or .gif")
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local: the three processes on this machine; ray: as Ray actors (docs/design.md)")
    g.add_argument("--ray_address", default=None, help="--backend ray: join this cluster (auto or HOST:PORT); "
                                                      "default: start a local Ray")
    for role in ("policy", "predictor", "labeller"):
        g.add_argument(f"--{role}_resources", type=_json_resources, default=None,
                       help=f"--backend ray: Ray resources of the {role}'s actor, JSON, e.g. '{{\"GPU\": 1}}'")
    g = p.add_argument_group("preferences")
    g.add_argument("--synthetic_prefs", action="store_true",
                   help="label with the synthetic oracle (true reward) instead of a person in the labelling window")
    g.add_argument("--show_agent", action="store_true",
                   help="labelling window: also loop the agent's latest finished episode")
    g.add_argument("--load_prefs_dir", default=None, help="start from this preference database")
    g.add_argument("--load_reward_predictor_ckpt_dir", default=None, help="start from this reward predictor")
    g.add_argument("--no_labelling", action="store_true",
                   help="train the policy on a loaded predictor with no labeller "
                        "(needs --load_reward_predictor_ckpt_dir)")
    g.add_argument("--max_prefs", type=int, default=PrefConfig.max_prefs)
    g.add_argument("--n_initial_prefs", type=int, default=PrefConfig.n_initial_prefs)
    g.add_argument("--n_labels", type=int, default=PrefConfig.n_labels,
                   help="labels after the initial ones, spread over the whole run by --label_schedule")
    g.add_argument("--label_schedule", choices=LABEL_SCHEDULES, default=PrefConfig.label_schedule)
    g.add_argument("--segment_length", type=int, default=PrefConfig.segment_length)
    g.add_argument("--segments_per_cut", type=int, default=PrefConfig.segments_per_cut)
    g.add_argument("--query_selection", choices=QUERY_SELECTIONS, default=PrefConfig.query_selection)
    g.add_argument("--prefs_save_interval", type=int, default=PrefConfig.prefs_save_interval)
    g = p.add_argument_group("reward predictor")
    g.add_argument("--n_predictors", type=int, default=RewardConfig.n_predictors)
    g.add_argument("--n_initial_epochs", type=int, default=RewardConfig.n_initial_epochs)
    g.add_argument("--reward_batch_size", type=int, default=RewardConfig.batch_size)
    g.add_argument("--reward_lr", type=float, default=RewardConfig.lr)
    g.add_argument("--reward_publish_interval", type=int, default=RewardConfig.publish_interval)
    g.add_argument("--reward_norm_momentum", type=float, default=RewardConfig.norm_momentum,
                   help="fraction of the way the reward's normalization moves at each publication (1: replaced)")
    g.add_argument("--reward_train_fraction", type=float, default=RewardConfig.train_fraction,
                   help="most of the wall time the predictor spends training beside the policy (1: flat out)")
    g.add_argument("--reward_updates_per_step", type=float, default=RewardConfig.updates_per_step,
                   help="the policy waits for the predictor to make this many pair-updates per agent step "
                        "(the paper: about 0.1); 0: never waits")
    g.add_argument("--reward_onednn", action=argparse.BooleanOptionalAction, default=RewardConfig.onednn,
                   help="the predictor's TensorFlow uses oneDNN's CPU kernels (default: Eigen's, faster for it)")
    g.add_argument("--reward_tf_threads", type=int, default=RewardConfig.tf_intra_threads,
                   help="TensorFlow intra-op threads of the predictor process; with 2, halve "
                        "--reward_train_fraction to leave the policy the same share of 2 cores")
    g.add_argument("--reward_dropout", type=float, default=RewardConfig.dropout)
    g.add_argument("--reward_l2_init", type=float, default=RewardConfig.l2_init,
                   help="starting L2 coefficient (then adapted to keep val loss 1.1-1.5x train loss)")
    g.add_argument("--reward_batchnorm", action=argparse.BooleanOptionalAction, default=RewardConfig.batchnorm)
    return p


def config_from_args(args: argparse.Namespace) -> RunConfig:
    a2c = A2CConfig(n_envs=args.n_envs, n_steps=args.n_steps, lr=args.lr, ent_coef=args.ent_coef,
                    gamma=args.gamma, rmsprop_style=args.rmsprop_style, episode_ends=args.episode_ends,
                    original_reward=args.original_reward)
    return RunConfig(
        mode=args.mode, env=args.env, seed=args.seed, million_timesteps=args.million_timesteps,
        stop_at_million_timesteps=args.stop_at_million_timesteps,
        run_dir=args.run_dir, log_interval=args.log_interval,
        policy_ckpt_interval=args.policy_ckpt_interval, load_policy_ckpt_dir=args.load_policy_ckpt_dir,
        n_env_threads=args.n_env_threads, tf_intra_threads=args.tf_intra_threads,
        tf_inter_threads=args.tf_inter_threads, episodes=args.episodes, video=args.video,
        load_prefs_dir=args.load_prefs_dir, load_reward_predictor_ckpt_dir=args.load_reward_predictor_ckpt_dir,
        no_labelling=args.no_labelling, profile=args.profile, a2c=a2c,
        preset=args.preset or "none", resume_with_changes=args.resume_with_changes,
        backend=args.backend, ray_address=args.ray_address, policy_resources=args.policy_resources,
        predictor_resources=args.predictor_resources, labeller_resources=args.labeller_resources,
        reward=RewardConfig(n_predictors=args.n_predictors, n_initial_epochs=args.n_initial_epochs,
                            batch_size=args.reward_batch_size, lr=args.reward_lr,
                            publish_interval=args.reward_publish_interval, norm_momentum=args.reward_norm_momentum,
                            train_fraction=args.reward_train_fraction,
                            updates_per_step=args.reward_updates_per_step, dropout=args.reward_dropout,
                            tf_intra_threads=args.reward_tf_threads, onednn=args.reward_onednn,
                            batchnorm=args.reward_batchnorm, l2_init=args.reward_l2_init),
        prefs=PrefConfig(synthetic_prefs=args.synthetic_prefs, query_selection=args.query_selection,
                         segment_length=args.segment_length, segments_per_cut=args.segments_per_cut,
                         max_prefs=args.max_prefs, n_initial_prefs=args.n_initial_prefs,
                         prefs_save_interval=args.prefs_save_interval, label_schedule=args.label_schedule,
                         n_labels=args.n_labels, show_agent=args.show_agent))

"""What a run is: typed, frozen configs per role, their defaults (with units and paper references) and their checks.

One source per flag: a config field is its flag: its entry in its class docstring is the flag's help, its default the
flag's default, and ``opt(..., check=...)`` what run.py accepts before it starts; the command line and docs/flags.md
are built from the fields by drlhp.config.cli.

Here: RunConfig (the whole run, its parts as fields, and the run's shape as its properties), PrefConfig, the modes.
Each role's config has a file of its own: A2CConfig in drlhp.config.a2c, PPOConfig in drlhp.config.ppo,
RewardConfig in drlhp.config.reward; ``opt`` and the checks in drlhp.config.fields.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from drlhp.config.a2c import A2CConfig
from drlhp.config.fields import (
    FINITE_OR_NONE,
    NOT_NEGATIVE,
    POSITIVE,
    SHARE_OR_NONE,
    json_resources,
    opt,
    whole,
    within,
)
from drlhp.config.labeller_names import DEFAULT_LABELLER, LABELLER_NAMES
from drlhp.config.ppo import PPOConfig
from drlhp.config.reward import RewardConfig
from drlhp.processes.cpu import BFLOAT16_SETTINGS

# The five modes (run.py's MODE; drlhp.run.pipeline.RUNS runs each). What a run does is asked of RunConfig's
# properties (gathers, labels, trains_policy, uses_processes, ...), the one place that compares modes.
TRAIN_POLICY_WITH_PREFERENCES = "train_policy_with_preferences"
GATHER_INITIAL_PREFS = "gather_initial_prefs"
PRETRAIN_REWARD_PREDICTOR = "pretrain_reward_predictor"
TRAIN_POLICY_WITH_ORIGINAL_REWARDS = "train_policy_with_original_rewards"
WATCH = "watch"
MODES = (TRAIN_POLICY_WITH_PREFERENCES, GATHER_INITIAL_PREFS, PRETRAIN_REWARD_PREDICTOR,
         TRAIN_POLICY_WITH_ORIGINAL_REWARDS, WATCH)
DEFAULT_MODE = TRAIN_POLICY_WITH_PREFERENCES  # the paper's setting
QUERY_SELECTIONS, LABEL_SCHEDULES = ("random", "variance"), ("constant", "paper")
BACKENDS, ALGOS = ("local", "ray"), ("auto", "a2c", "ppo")


@dataclass(frozen=True)
class PrefConfig:
    """Segments, pairing, labelling and the preference database.

    Attributes:
        labeller: who labels the pairs (pref_interface/labellers.py): "oracle" (the synthetic oracle prefers
            the clip with the larger sum of true, unclipped reward; (0.5, 0.5) on a tie; --synthetic_prefs is
            the same), "window" (a person, in the labelling window; needs a display) or "web" (a person, or
            several, in a browser: the run prints the page's address; docs/labelling.md).
        web_host: --labeller web: the address the page is served on. 127.0.0.1 (this machine only: from a
            laptop, ssh -L); 0.0.0.0 serves every network this machine is on, to anyone who has the token.
        web_port: --labeller web: the page's TCP port (0: a free one, printed at start).
        query_selection: "random" pairs, or "variance": of --variance_candidates candidate pairs, the one
            whose predicted preference varies most across the ensemble (the paper's active queries).
        segment_length: agent steps per clip (paper: 25, about 1.7 s of Atari at 15 fps).
        segments_per_cut: at most this many clips are cut each time (every segment_length steps of all
            workers), and only as many as the preference interface still asks for; workers are taken in turn.
        segment_queue_size: capacity of the segment queue; a full queue drops segments (counted).
        segment_pool_size: recent segments the preference interface pairs from.
        max_prefs: preference database bound; the oldest are dropped first (original: 3000).
        n_initial_prefs: preferences gathered with a random policy before the predictor is pretrained.
        prefs_save_interval: new preferences between database saves (plus one at exit).
        label_schedule: "constant" (labels spread evenly over the run) or "paper" (rate proportional to
            5e6 / (T + 5e6), T in frames).
        n_labels: labels after the initial ones, spread over the run by --label_schedule (a person is offered
            pairs at most that fast; the oracle labels exactly that fast).
        person_pace_margin: a person labels: the policy waits while the label schedule is ahead of their labels by
            more than this many, and at its end for every planned label (docs/labelling.md); 0: never (the oracle's).
        variance_candidates: candidate pairs per query with --query_selection variance (paper: 10).
        show_agent: a person labels: the window also loops the agent's latest finished episode (worker 0).
        oracle_goal: --labeller oracle prefers the clip this MODULE:FUNCTION scores higher, not more task reward (Box
            actions; pref_interface/goals.py: :hopper_backflip, :cheetah_standing); envs get its env kwargs.
        oracle_mistake_rate: the oracle's share of wrong answers, drawn from --seed (B-Pref's "mistake": 0.1).
        oracle_equal_threshold: the oracle ties clips closer than this fraction of its clips' mean return (B-Pref: 0.1).
    """

    labeller: str = opt(DEFAULT_LABELLER, choices=LABELLER_NAMES, aliases={"synthetic_prefs": "oracle"})
    web_host: str = opt("127.0.0.1", metavar="HOST")
    web_port: int = opt(0, check=within(0, 65535), metavar="PORT")
    query_selection: str = opt("random", choices=QUERY_SELECTIONS)
    segment_length: int = opt(25, check=whole(1))
    segments_per_cut: int = opt(4, check=whole(1))
    segment_queue_size: int = opt(32, check=whole(1))
    segment_pool_size: int = opt(100, check=whole(2))
    max_prefs: int = opt(3000, check=whole(1))
    n_initial_prefs: int = opt(500, check=whole(0))
    prefs_save_interval: int = opt(20, check=whole(1))
    label_schedule: str = opt("constant", choices=LABEL_SCHEDULES)
    n_labels: int = opt(3000, check=whole(0))
    person_pace_margin: int = opt(10, check=whole(0))
    variance_candidates: int = opt(10, check=whole(1))
    show_agent: bool = opt(False)
    oracle_goal: str = opt("", metavar="MODULE:FUNCTION")
    oracle_mistake_rate: float = opt(0.0, check=within(0, 0.5), metavar="P")
    oracle_equal_threshold: float = opt(0.0, check=within(0, 1), metavar="FRACTION")


@dataclass(frozen=True)
class RunConfig:
    """One run of run.py.

    Attributes:
        mode: what to run (see MODES).
        env: environment id: MovingDot-v0, an Atari ``*NoFrameskip-v4`` id, or any registered gymnasium id
            with discrete actions (--list_envs), or Box actions (train_policy_with_original_rewards, watch).
        algo: the policy's algorithm: "a2c" (discrete actions), "ppo" (Box or discrete actions: there the discrete
            presets add CleanRL's Atari PPO), "auto" (a2c on discrete, ppo on Box actions); the run records it.
        seed: seeds Python, numpy, TensorFlow and every env worker (worker i gets seed + i).
        million_timesteps: training budget in millions of agent steps (1 agent step = 4 Atari frames); the
            learning rate decays to 0 over it.
        stop_at_million_timesteps: end this sitting (checkpointed, status "stopped", resumable) once the
            policy has this many million agent steps, with the learning-rate schedule still that of
            --million_timesteps; 0: the whole budget.
        stop_at_true_return: end the policy's training this sitting (checkpointed, summary written, status
            "finished", summary.json "reached_target": true) as soon as the mean true return of its last 100
            episodes is at least this, counted only once 100 episodes have ended; a resumed run whose last 100
            episodes already reach it ends at once (leave the flag out, or raise it, to train on); default: never.
            With --stop_at_success_rate too, both must be reached.
        stop_at_success_rate: as --stop_at_true_return, for the share of the last 100 episodes that succeeded
            (envs that report success, e.g. MovingDot: the dot on the centre); default: never.
        lr_horizon_million_timesteps: the policy's learning rate decays linearly to 0 at this many million agent
            steps, whatever the budget (the paper: 80, for runs of 50); 0: at --million_timesteps.
        stop_after_hours: end this sitting after this many hours of running time exactly as Ctrl-C does (every
            process saves; resume with the same command), with status "stopped" and exit 0; 0: no limit.
        milestone_million_timesteps: every this many million agent steps, keep a copy of the policy (float16)
            and of the predictor weights it is trained on, in <run_dir>/milestones/ (never deleted, unlike
            checkpoints); 0: none.
        score_visible: Atari: the predictor and the labeller see the score (the original reproduction); default:
            blanked (the paper, appendix A.2).
        run_dir: where everything of this run is written (default runs/<env>-<mode>-<time>); an existing one
            resumes (docs/runs.md).
        log_interval: seconds between progress lines and metric rows (0: every update).
        policy_ckpt_interval: policy updates between checkpoints (0: only at the end or on interrupt).
        load_policy_ckpt_dir: a policy checkpoint to start from (a run directory, its checkpoints/, or one
            .npz); its run resumes where it stopped.
        n_env_threads: C++ threads stepping Atari envs (0: one per core).
        tf_intra_threads: TensorFlow intra-op threads of the policy's process (0: TensorFlow's choice).
        tf_inter_threads: TensorFlow inter-op threads of the policy's process (0: TensorFlow's choice).
        policy_bfloat16: what the policy's CNN torso computes in (weights, heads, loss stay float32): "on", "off",
            "auto" (bfloat16 where the CPU has AVX512_BF16 or AMX, else float32: drlhp/processes/cpu.py); said at start.
        episodes: watch: episodes to play.
        video: watch: the output video, .mp4 or .gif (default <run_dir>/episode.mp4).
        load_prefs_dir: start from this preference database (a run directory or its prefs/prefs.npz).
        skip_damaged_prefs: a preference database (the run's own on resume, or --load_prefs_dir's) with a
            damaged chunk file: go on without that file's preferences (it says how many), instead of stopping.
        load_reward_predictor_ckpt_dir: start from this reward predictor (a run directory or its
            reward_predictor/reward_predictor.npz).
        no_labelling: train the policy on a loaded predictor, with no labeller and no predictor training
            (needs --load_reward_predictor_ckpt_dir).
        profile: every process profiles itself with cProfile into <run_dir>/profile/<role>.txt and .prof.
        preset: the named set of flags the command line started from (drlhp.config.presets).
        resume_with_changes: go on with an existing run directory although its recorded settings differ.
        backend: how the three processes of the preference modes run: "local" (multiprocessing on this machine,
            drlhp.processes.launcher) or "ray" (Ray actors, drlhp.processes.ray_backend; Ray is imported only then;
            docs/ray.md).
        ray_address: --backend ray: the Ray cluster to join ("auto" or HOST:PORT); default: start a local Ray.
        policy_resources: --backend ray: the Ray resources the policy's actor asks for, a JSON object such as
            '{"GPU": 1}'; default: Ray's (one CPU, any node).
        predictor_resources: --backend ray: the reward predictor actor's resources, as --policy_resources.
        labeller_resources: --backend ray: the preference interface actor's resources, e.g. '{"display": 1}' (a
            custom resource of the node with the person's screen).
        a2c: the policy's hyper-parameters (A2CConfig); ppo: PPO's, for Box or discrete actions (PPOConfig).
        reward: the reward predictor's (RewardConfig).
        prefs: the segments', labeller's and preference database's (PrefConfig).
    """

    mode: str = opt(DEFAULT_MODE, choices=MODES, cli=False)
    env: str | None = opt(None, metavar="ENV")
    algo: str = opt("auto", choices=ALGOS)
    seed: int = opt(0, check=whole(0))
    million_timesteps: float = opt(10.0, check=POSITIVE)
    stop_at_million_timesteps: float = opt(0.0, check=NOT_NEGATIVE)
    stop_at_true_return: float | None = opt(None, check=FINITE_OR_NONE, metavar="RETURN")
    stop_at_success_rate: float | None = opt(None, check=SHARE_OR_NONE, metavar="RATE")
    lr_horizon_million_timesteps: float = opt(0.0, check=NOT_NEGATIVE)
    stop_after_hours: float = opt(0.0, check=NOT_NEGATIVE)
    milestone_million_timesteps: float = opt(0.5, check=NOT_NEGATIVE)
    score_visible: bool = opt(False)
    run_dir: str | None = opt(None, metavar="DIR")
    log_interval: float = opt(5.0, check=NOT_NEGATIVE)
    policy_ckpt_interval: int = opt(1000, check=whole(0))
    load_policy_ckpt_dir: str | None = opt(None, metavar="DIR")
    n_env_threads: int = opt(0, check=whole(0))
    tf_intra_threads: int = opt(2, check=whole(0))
    tf_inter_threads: int = opt(1, check=whole(0))
    policy_bfloat16: str = opt("auto", choices=BFLOAT16_SETTINGS)
    episodes: int = opt(1, check=whole(1))
    video: str | None = opt(None, metavar="FILE")
    load_prefs_dir: str | None = opt(None, metavar="DIR")
    skip_damaged_prefs: bool = opt(False)
    load_reward_predictor_ckpt_dir: str | None = opt(None, metavar="DIR")
    no_labelling: bool = opt(False)
    profile: bool = opt(False)
    preset: str = opt("none", cli=False)
    resume_with_changes: bool = opt(False)
    backend: str = opt("local", choices=BACKENDS)
    ray_address: str | None = opt(None, metavar="ADDRESS")
    policy_resources: dict | None = opt(None, parse=json_resources, metavar="JSON")
    predictor_resources: dict | None = opt(None, parse=json_resources, metavar="JSON")
    labeller_resources: dict | None = opt(None, parse=json_resources, metavar="JSON")
    a2c: A2CConfig = opt(A2CConfig, cli=False)
    ppo: PPOConfig = opt(PPOConfig, cli=False)
    reward: RewardConfig = opt(RewardConfig, cli=False)
    prefs: PrefConfig = opt(PrefConfig, cli=False)

    @property
    def total_timesteps(self) -> int:
        return int(round(self.million_timesteps * 1e6))

    @property
    def stop_timesteps(self) -> int:
        """Where this sitting ends: the budget, or stop_at_million_timesteps if that is sooner."""
        stop = int(round(self.stop_at_million_timesteps * 1e6))
        return min(self.total_timesteps, stop) if stop > 0 else self.total_timesteps

    # --- the run's shape, by its mode: asked here, never by comparing mode names elsewhere ---

    @property
    def gathers(self) -> bool:
        """gather_initial_prefs: a random policy and a labeller until --n_initial_prefs, which the predictor's
        process stores and saves (it trains nothing); the run ends when the predictor has them all."""
        return self.mode == GATHER_INITIAL_PREFS

    @property
    def labels_while_training(self) -> bool:
        """train_policy_with_preferences with labelling (not --no_labelling): the three processes, the
        labeller and the predictor learning beside the policy."""
        return self.mode == TRAIN_POLICY_WITH_PREFERENCES and not self.no_labelling

    @property
    def labels(self) -> bool:
        """Someone labels in this run (a person or the oracle): it gathers, or labels while training."""
        return self.gathers or self.labels_while_training

    @property
    def uses_processes(self) -> bool:
        """The run is the paper's three processes (drlhp.run.parent), as wherever someone labels; the other
        modes (--no_labelling too) run in this process (drlhp.run.modes)."""
        return self.labels

    @property
    def trains_policy(self) -> bool:
        """The policy learns: on preferences (with or without labelling) or on the env's reward."""
        return self.mode in (TRAIN_POLICY_WITH_PREFERENCES, TRAIN_POLICY_WITH_ORIGINAL_REWARDS)

    @property
    def trains_predictor(self) -> bool:
        """The reward predictor learns: pretrain_reward_predictor, or beside the policy while labelling."""
        return self.mode == PRETRAIN_REWARD_PREDICTOR or self.labels_while_training

    @property
    def trains_predictor_alone(self) -> bool:
        """pretrain_reward_predictor: the predictor learns in this process, on a saved database; no policy."""
        return self.mode == PRETRAIN_REWARD_PREDICTOR

    @property
    def watches(self) -> bool:
        """watch: a saved policy plays into a video, in a new run directory (it never resumes one)."""
        return self.mode == WATCH

    @property
    def runs_policy(self) -> bool:
        """A policy acts in this run (its TensorFlow): trained, or watched."""
        return self.trains_policy or self.watches

    @property
    def lr_horizon_timesteps(self) -> int:
        """Where the policy's learning rate reaches 0: --lr_horizon_million_timesteps, or the budget."""
        h = int(round(self.lr_horizon_million_timesteps * 1e6))
        return h if h > 0 else self.total_timesteps

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

"""The modes of run.py.

    train_policy_with_preferences        the paper's three processes (policy, preference interface,
                                         reward predictor; drlhp.runtime.launcher): gather n_initial_prefs with
                                         a random policy, pretrain the predictor, then train all three
                                         at once. --no_labelling: the policy alone on a saved predictor.
    gather_initial_prefs                 random policy + labeller; saves the preference database
    pretrain_reward_predictor            the predictor on a saved database, in this process; saves it
    train_policy_with_original_rewards   A2C on the env's (clipped) reward, in this process
    watch                                play a saved policy, write a video

Every mode is a recorded run (``run``): its inputs are checked, its run directory gets the record
(drlhp.runtime.run_record; stdout and stderr too when run.py asks), the mode runs, and whatever happens its
status ends finished / interrupted / crashed (with the error) and its curves are drawn (curves.png).
"""
from __future__ import annotations

import os
import sys
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from drlhp.config import TRAIN_POLICY_WITH_PREFERENCES, RunConfig, config_problem
from drlhp.roles import children, finishing_role, gathering, summary_roles
from drlhp.runtime.atomic import write_json
from drlhp.runtime.child import ChildFailed
from drlhp.runtime.interrupts import (
    SittingOver,
    end_sitting,
    mark_interrupted,
    sigterm_as_interrupt,
    sigterm_ignored,
    sitting_timer,
)
from drlhp.runtime.profiling import profiled
from drlhp.runtime.run_paths import RunPaths
from drlhp.runtime.run_record import RunRecord, default_run_dir
from pref_interface.labellers import LABELLERS


class UsageError(Exception):
    """A problem with the command line or its inputs: one line to the user, exit code 2."""


def _mode_function(cfg: RunConfig):
    if cfg.mode == TRAIN_POLICY_WITH_PREFERENCES and cfg.no_labelling:
        return train_policy_without_labelling
    return {"train_policy_with_original_rewards": train_policy_with_original_rewards, "watch": watch,
            "pretrain_reward_predictor": pretrain_reward_predictor}.get(cfg.mode, run_processes)


def run(cfg: RunConfig, argv: list[str] | None = None, tee_output: bool = False, announce: str | None = None) -> int:
    """Run one mode as a recorded run; returns the exit code. ``tee_output``: copy this process's (and
    its children's) stdout and stderr into the run directory (run.py asks; tests calling this in-process
    do not, so that their own output capture is left alone)."""
    mode = _mode_function(cfg)
    _check_inputs(cfg)  # bad inputs: UsageError before any run directory exists
    given = cfg
    cfg = _resolve_run_dir(cfg)
    record = RunRecord(cfg.run_dir)
    # what the run filled in itself (a resumed run's own checkpoints) is not a change of arguments
    derived = tuple(k for k in ("load_policy_ckpt_dir", "run_dir") if getattr(given, k) != getattr(cfg, k))
    _check_resume(cfg, record, derived)
    kernels = tf_kernels(cfg)
    record.start(cfg.to_dict(), argv, derived=derived, machine=kernels)
    tee = None
    if tee_output:
        from drlhp.runtime.output_tee import OutputTee

        if mode is run_processes:
            # multiprocessing's resource tracker outlives this process: started before the tee, it keeps
            # the real stdout and stderr, not a pipe whose reader is gone when this process exits
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
        tee = OutputTee(record.dir, header=" ".join(argv or []))
    if announce:  # e.g. the preset's flags: said once the run has passed its checks and started
        print(announce, flush=True)
    if "predictor_kernels" in kernels or "policy_kernels" in kernels:
        print(tf_kernels_line(kernels), flush=True)
    with sigterm_as_interrupt():  # every mode: a stop, as Ctrl-C
        try:
            # --profile: this process too (the one-process modes' work; the parent's waiting in the others)
            with profiled(record.paths.profile if cfg.profile else None,
                          "parent" if mode is run_processes else cfg.mode):
                if cfg.skip_damaged_prefs:
                    _drop_damaged_prefs(cfg, record)
                return mode(cfg, record)
        except UsageError as e:  # found once the run had started (e.g. a checkpoint that does not fit)
            record.set_status("crashed", error=str(e))
            print(f"run.py: error: {e}", file=sys.stderr, flush=True)
            return 2
        except KeyboardInterrupt:  # where the mode did not save and mark it itself
            return mark_interrupted(record, "\n[run] interrupted")
        except Exception as e:
            detail = traceback.format_exc()
            record.set_status("crashed", error=f"{type(e).__name__}: {e}\n{detail}")
            print(detail, end="", file=sys.stderr, flush=True)
            return 1
        finally:
            _draw_curves(record)
            if tee is not None:
                tee.close()


def tf_kernels(cfg: RunConfig) -> dict:
    """The CPU and the kernel library each of this run's TensorFlow roles takes on it (drlhp.runtime.cpu):
    the predictor's by --reward_onednn, the policy's TensorFlow's default. Chosen from this machine's
    flags; a process elsewhere (--backend ray) chooses by its own and says so in its log and the summary."""
    from drlhp.runtime.cpu import choose_kernels, choose_precision, cpu_flags, cpu_model, default_kernels

    flags = cpu_flags()
    out = {"cpu": cpu_model(), "cpu_flags": [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16")
                                             if f in flags]}
    if cfg.mode == "pretrain_reward_predictor" or cfg.labels_while_training:
        out["predictor_kernels"] = choose_kernels(cfg.reward.onednn, flags).to_dict()
        out["predictor_precision"] = choose_precision(cfg.reward.bfloat16, cfg.reward.onednn, flags).to_dict()
    if cfg.mode in (TRAIN_POLICY_WITH_PREFERENCES, "train_policy_with_original_rewards", "watch"):
        out["policy_kernels"] = default_kernels().to_dict()
    return out


def tf_kernels_line(kernels: dict) -> str:
    roles = "; ".join(f"{role} {k['library']} ({k['reason']})" for role, k in
                      (("predictor", kernels.get("predictor_kernels")), ("policy", kernels.get("policy_kernels")))
                      if k)
    if kernels.get("predictor_precision"):
        from drlhp.runtime.cpu import PrecisionChoice

        roles += f"; the reward network's {PrecisionChoice(**kernels['predictor_precision']).describe()}"
    return f"[run] TensorFlow kernels on {kernels['cpu']} ({' '.join(kernels['cpu_flags']) or 'no x86 flags'}): {roles}"


# Settings that change how fast or how often things are recorded, not what is learned: a run directory
# may go on with other values of these without --resume_with_changes.
RESUME_FREELY = ("log_interval", "stop_after_hours", "milestone_million_timesteps",
                 "backend", "ray_address", "policy_resources", "predictor_resources",
                 "labeller_resources", "stop_at_million_timesteps", "stop_at_true_return", "stop_at_success_rate",
                 "profile", "preset",
                 "resume_with_changes",
                 "episodes", "video", "n_env_threads", "tf_intra_threads", "tf_inter_threads",
                 "policy_ckpt_interval", "reward.tf_threads", "reward.onednn", "reward.ckpt_interval_s",
                 "prefs.prefs_save_interval", "skip_damaged_prefs", "prefs.web_host", "prefs.web_port")


PATH_SETTINGS = ("run_dir", "load_policy_ckpt_dir", "load_prefs_dir", "load_reward_predictor_ckpt_dir", "video")


def _check_resume(cfg: RunConfig, record: RunRecord, derived: tuple[str, ...]) -> None:
    """A run directory that already holds a run of other settings goes on only with
    --resume_with_changes (else the weights would be recorded as trained with settings they were not)."""
    from drlhp.runtime.run_record import ABSENT, config_changes, config_in_todays_names, flatten, with_values_before

    before = record.read_json(RunPaths.CONFIG)
    if before is None or cfg.mode == "watch" or cfg.resume_with_changes:
        return
    before = with_values_before(config_in_todays_names(before))
    changes = config_changes(before, cfg.to_dict(), ignore=(*derived, *RESUME_FREELY))
    defaults = flatten(RunConfig(mode=cfg.mode, env=cfg.env).to_dict())
    # a setting that did not exist when the run was recorded counts as its default then
    changes = {k: (a, b) for k, (a, b) in changes.items() if not (a == ABSENT and b == defaults.get(k, ABSENT))}
    # a path given relative now and absolute then (or the other way) is the same setting
    changes = {k: (a, b) for k, (a, b) in changes.items()
               if not (k in PATH_SETTINGS and isinstance(a, str) and isinstance(b, str)
                       and Path(a).resolve() == Path(b).resolve())}
    if changes:
        listed = "; ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in changes.items())
        raise UsageError(f"{record.dir} holds a run with other settings ({listed}); add --resume_with_changes "
                         f"to go on with the new ones, or choose another --run_dir")


def _draw_curves(record: RunRecord) -> None:
    """<run_dir>/curves.png from the run's metrics; a failure here costs a warning, never the run."""
    try:
        from drlhp.runtime.curves import write_run_curves

        path = write_run_curves(record.dir)
    except Exception as e:  # noqa: BLE001 -- plotting must not turn a finished run into a crash
        print(f"[run] warning: no curves.png: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return
    if path is not None:
        print(f"[run] curves: {path}", flush=True)


def _resolve_run_dir(cfg: RunConfig) -> RunConfig:
    from drlhp.policy.checkpoint import find_latest_checkpoint

    if cfg.run_dir is None:
        return replace(cfg, run_dir=str(default_run_dir(cfg.env, cfg.mode)))
    if (cfg.mode != "watch" and cfg.load_policy_ckpt_dir is None
            and find_latest_checkpoint(RunPaths(cfg.run_dir).checkpoints)):
        # An existing run directory with checkpoints: resume it where it stopped (watch never resumes).
        return replace(cfg, load_policy_ckpt_dir=str(RunPaths(cfg.run_dir).checkpoints))
    return cfg


def _check_inputs(cfg: RunConfig) -> None:
    """Bad inputs fail here, in one line (UsageError), before any run directory or process exists:
    the env id, every number of the config, what the mode needs, the display, and every file to load."""
    _check_env(cfg)
    _check_settings(cfg)
    _check_labeller(cfg)
    _check_files(cfg)


def _check_env(cfg: RunConfig) -> None:
    import envs

    if not cfg.env:
        raise UsageError("--env is required (list valid ids with: python run.py --list_envs)")
    try:  # drlhp's and Atari ids by name; any other gymnasium id by its spec and one env made
        envs.check_env_id(cfg.env)
    except envs.UnknownEnvError:
        raise UsageError(f"unknown env {cfg.env!r}; list valid ids with: python run.py --list_envs") from None
    except envs.UnsupportedEnvError as e:  # "Pendulum-v1: continuous actions (Box) are not supported: ..."
        raise UsageError(str(e)) from None


def _check_settings(cfg: RunConfig) -> None:
    """The config's numbers, the Ray cluster to join, and what the mode needs."""
    problem = config_problem(cfg)
    if problem:
        raise UsageError(problem)
    if cfg.backend == "ray" and _mode_function(cfg) is run_processes:  # before ray.init, which waits on and on
        from drlhp.runtime.ray_backend import address_problem

        problem = address_problem(cfg.ray_address)
        if problem:
            raise UsageError(problem)
    trains_policy = cfg.mode in ("train_policy_with_original_rewards", TRAIN_POLICY_WITH_PREFERENCES)
    one_update = cfg.a2c.n_envs * cfg.a2c.n_steps
    if trains_policy and cfg.total_timesteps < one_update:
        raise UsageError(f"--million_timesteps {cfg.million_timesteps:g} is {cfg.total_timesteps:,} agent steps, "
                         f"less than one update (--n_envs x --n_steps = {one_update:,})")
    waits_for_initial_prefs = cfg.mode == "gather_initial_prefs" or (
        cfg.labels_while_training and not cfg.load_reward_predictor_ckpt_dir)
    if waits_for_initial_prefs and cfg.prefs.n_initial_prefs > cfg.prefs.max_prefs:
        raise UsageError(f"--n_initial_prefs {cfg.prefs.n_initial_prefs} is more than --max_prefs "
                         f"{cfg.prefs.max_prefs}: the database would never hold them all")
    if cfg.mode == "gather_initial_prefs" and cfg.prefs.n_initial_prefs < 1:
        raise UsageError("gather_initial_prefs needs --n_initial_prefs of at least 1")
    if cfg.no_labelling and not cfg.load_reward_predictor_ckpt_dir:
        raise UsageError("--no_labelling needs --load_reward_predictor_ckpt_dir (a run directory or its "
                         "reward_predictor/reward_predictor.npz)")
    if cfg.mode == "pretrain_reward_predictor" and not cfg.load_prefs_dir:
        raise UsageError("pretrain_reward_predictor needs --load_prefs_dir (a run directory or a prefs.npz)")
    if cfg.run_dir and Path(cfg.run_dir).exists() and not Path(cfg.run_dir).is_dir():
        raise UsageError(f"--run_dir {cfg.run_dir} is a file, not a directory")
    if cfg.mode == "watch":
        if not cfg.load_policy_ckpt_dir:
            raise UsageError("watch needs --load_policy_ckpt_dir (a run directory or its checkpoints/)")
        if cfg.video and Path(cfg.video).suffix not in (".mp4", ".gif"):
            raise UsageError(f"--video {cfg.video}: give a .mp4 or a .gif file")
        if cfg.run_dir and RunPaths(cfg.run_dir).config.exists():
            raise UsageError(f"--run_dir {cfg.run_dir} already holds a run; watch records into a new run "
                             f"directory (leave --run_dir out, or give a new one; --video names the video)")


def _check_labeller(cfg: RunConfig) -> None:
    """Where a person labels: a display for the window, a free address for the page."""
    labelling = cfg.mode == "gather_initial_prefs" or cfg.labels_while_training
    if labelling and LABELLERS[cfg.prefs.labeller].needs_display:  # a person labels in a window: can one open?
        from pref_interface.display import display_problem  # no Qt import: that happens in the child

        problem = display_problem(fix="pass --labeller web (label in a browser) or --synthetic_prefs (the "
                                      "synthetic oracle labels instead of a person)")
        if problem:
            raise UsageError(problem)
    if labelling and cfg.prefs.labeller == "web":  # the page's address: taken, or not this machine's?
        from pref_interface.web import address_problem

        problem = address_problem(cfg.prefs.web_host, cfg.prefs.web_port)
        if problem:
            raise UsageError(problem)


def _check_files(cfg: RunConfig) -> None:
    """Checkpoints and databases to load: read now, so a wrong file costs one line."""
    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.reward.checkpoint import PredictorCheckpointError, find_file, load_predictor
    from drlhp.reward.pref_db import PrefDB, PrefDBDamaged, PrefDBError

    if cfg.load_policy_ckpt_dir:  # checkpoints and databases: read now, so a wrong file costs one line
        try:
            load_policy_checkpoint(cfg.load_policy_ckpt_dir)
        except CheckpointError as e:
            raise UsageError(str(e)) from None
    own_prefs = RunPaths(cfg.run_dir).prefs if cfg.run_dir and _processes_load_prefs(cfg) else None
    for prefs in (own_prefs if own_prefs and own_prefs.exists() else None,
                  find_file(cfg.load_prefs_dir, RunPaths.PREFS) if cfg.load_prefs_dir else None):
        if prefs is None:
            continue
        try:  # a resumed run's own database: every file read, none decoded; --load_prefs_dir's: loaded
            if prefs == own_prefs:
                PrefDB.check(prefs)
            else:
                PrefDB.load(prefs, skip_damaged=cfg.skip_damaged_prefs)
        except PrefDBDamaged as e:  # a damaged chunk: named, with what it costs and how to go on without it
            if not cfg.skip_damaged_prefs:
                raise UsageError(f"{e}; add --skip_damaged_prefs to go on without them") from None
        except PrefDBError as e:
            raise UsageError(str(e)) from None
    if cfg.load_reward_predictor_ckpt_dir:
        given = Path(cfg.load_reward_predictor_ckpt_dir)
        if not given.exists():  # the path as the user gave it, not the file a run directory would hold
            raise UsageError(f"--load_reward_predictor_ckpt_dir {given}: no such file or directory")
        try:  # its own one-line reason for a missing, foreign or damaged file (drlhp.runtime.npz_json);
            load_predictor(given)  # load_predictor finds the file in a run directory itself
        except PredictorCheckpointError as e:
            raise UsageError(str(e)) from None


def _processes_load_prefs(cfg: RunConfig) -> bool:
    """Whether the mode's reward predictor process loads a preference database
    (drlhp.reward.checkpoint.prefs_to_load)."""
    return cfg.mode == "gather_initial_prefs" or cfg.labels_while_training


def _drop_damaged_prefs(cfg: RunConfig, record: RunRecord) -> None:
    """--skip_damaged_prefs: the database the processes start from, read without its damaged chunks, saved
    whole into this run's prefs/ (a damaged chunk there moved aside to <name>.damaged), so that they load
    a sound one; says what was lost."""
    from drlhp.reward.checkpoint import prefs_to_load
    from drlhp.reward.pref_db import PrefDB

    source = prefs_to_load(cfg, record.dir) if _processes_load_prefs(cfg) else None
    if source is None:
        return
    db = PrefDB.load(source, skip_damaged=True)
    if not db.damaged:
        return
    lost = _lost_line(db)  # before the save, which moves the damaged chunks aside and forgets them
    db.save(record.paths.prefs)
    print(f"{lost}; going on with the other {len(db)}, saved whole to {record.paths.prefs}", file=sys.stderr,
          flush=True)


def _lost_line(db) -> str:
    """What --skip_damaged_prefs left out of a loaded PrefDB, for the user."""
    from drlhp.reward.pref_db import lost_text

    damaged = ", ".join(f"{d.path} ({d.why})" for d in db.damaged)
    return f"[run] --skip_damaged_prefs: {lost_text(db.lost)} lost with {damaged}"


def check_inputs(cfg: RunConfig) -> None:
    """``run``'s checks of a config, without running it (``python -m floyd seeds`` checks once, before
    starting any seed). UsageError: one line for the user."""
    _check_inputs(cfg)


def train_policy_with_original_rewards(cfg: RunConfig, record: RunRecord) -> int:
    from drlhp.policy.a2c import build_policy
    from drlhp.policy.checkpoint import CheckpointError
    from drlhp.policy.reward_source import ClippedEnvReward, ScaledEnvReward
    from drlhp.policy.trainer import Agent, Outputs, PolicyTrainer
    from drlhp.runtime.metrics import MetricsLogger
    from envs import make_vec_env

    print(f"[run] {cfg.mode} on {cfg.env}, seed {cfg.seed}, {cfg.total_timesteps:,} agent steps -> {record.dir}",
          flush=True)
    env = logger = trainer = None
    try:
        with sitting_timer(cfg.stop_after_hours):
            env = make_vec_env(cfg.env, cfg.a2c.n_envs, n_threads=cfg.n_env_threads,
                               score_visible=cfg.score_visible)
            policy = build_policy(cfg, env)
            logger = MetricsLogger(record.dir)
            try:
                source = (ScaledEnvReward(cfg.reward.norm_std) if cfg.a2c.original_reward == "scaled"
                          else ClippedEnvReward())
                trainer = PolicyTrainer(cfg, Agent(env, policy, source), Outputs(record, logger))
            except CheckpointError as e:
                raise UsageError(str(e)) from None
            summary = trainer.train()
        return _finish(record, summary, cfg)
    except KeyboardInterrupt as e:
        if trainer is not None:
            trainer.checkpoint()
            record.write_summary(trainer.summary())
            trainer.write_hparams()
        if isinstance(e, SittingOver):
            return end_sitting(record, cfg.stop_after_hours)
        return mark_interrupted(record, f"\n[run] interrupted; checkpoint saved. Resume with: python run.py "
                                        f"{cfg.mode} --env {cfg.env} --run_dir {record.dir}")
    finally:
        if logger is not None:
            logger.close()
        if env is not None:
            env.close()


def watch(cfg: RunConfig, record: RunRecord) -> int:
    from drlhp.policy.a2c import build_policy
    from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint
    from drlhp.policy.watch import play_episodes, write_video
    from envs import make_vec_env

    try:
        arrays, meta = load_policy_checkpoint(cfg.load_policy_ckpt_dir)
    except CheckpointError as e:
        raise UsageError(str(e)) from None
    env = make_vec_env(cfg.env, 1, n_threads=1)
    try:
        policy = build_policy(cfg, env, replace(cfg.a2c, n_envs=1))
        try:
            policy.set_state(arrays)
        except (KeyError, ValueError) as e:
            raise UsageError(f"checkpoint {meta['path']} does not fit {cfg.env}: {e}") from None
        frames, returns = play_episodes(env, policy, cfg.episodes, cfg.seed)
    finally:
        env.close()
    video = Path(cfg.video or record.dir / "episode.mp4")
    write_video(frames, video)
    print(f"[watch] {len(returns)} episode(s), true returns {returns}, {len(frames)} frames -> {video}")
    return _finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "episodes": len(returns),
                            "true_returns": [float(r) for r in returns],
                            "true_return_mean": float(sum(returns) / len(returns)) if returns else None,
                            "checkpoint": str(meta["path"]), "video": str(video)})


def _reached_line(cfg: RunConfig, summary: dict) -> str:
    """What a run that reached its targets (--stop_at_true_return, --stop_at_success_rate) prints."""
    given = []
    if cfg.stop_at_true_return is not None:
        given.append((f"--stop_at_true_return {cfg.stop_at_true_return:g}",
                      f"true return {summary.get('true_return_last100', float('nan')):.2f}"))
    if cfg.stop_at_success_rate is not None:
        given.append((f"--stop_at_success_rate {cfg.stop_at_success_rate:g}",
                      f"success rate {summary.get('success_rate_last100', float('nan')):.2f}"))
    return (f"[run] reached {' and '.join(flag for flag, _ in given)}: {', '.join(fig for _, fig in given)} over "
            f"the last 100 episodes at {summary['timesteps']:,} agent steps; to train on, run the same command "
            f"without it (or with a higher value) and --run_dir {cfg.run_dir}")


def _finish(record: RunRecord, summary: dict, cfg: RunConfig | None = None) -> int:
    """Write the summary and the status: "finished" (the budget done, or the run's targets reached:
    --stop_at_true_return, --stop_at_success_rate), or "stopped" where the policy ended this sitting at
    ``cfg.stop_at_million_timesteps`` before its budget."""
    record.write_summary(summary)
    reached = cfg is not None and summary.get("reached_target") is True
    stopped_early = cfg is not None and summary.get("timesteps", 0) >= cfg.stop_timesteps
    if reached:
        record.set_status("finished")
        print(_reached_line(cfg, summary), flush=True)
    elif stopped_early and cfg.stop_timesteps < cfg.total_timesteps:
        record.set_status("stopped")
        print(f"[run] stopped at --stop_at_million_timesteps {cfg.stop_at_million_timesteps:g}; to go on, run the "
              f"same command with a larger value (0: the whole budget) and --run_dir {record.dir}", flush=True)
    else:
        record.set_status("finished")
    print("[run] finished: " + ", ".join(f"{k}={v}" for k, v in summary.items()), flush=True)
    print(f"[run] summary: {record.paths.summary}", flush=True)
    return 0


def run_processes(cfg: RunConfig, record: RunRecord) -> int:
    """train_policy_with_preferences and gather_initial_prefs: the three roles (drlhp.roles) on the
    backend --backend names. Start them, wait for the run's end, summarize, conclude."""
    print(f"[run] {cfg.mode} on {cfg.env}, seed {cfg.seed}, " + (f"{cfg.prefs.n_initial_prefs} preferences"
          if gathering(cfg) else f"{cfg.total_timesteps:,} agent steps") + f" -> {record.dir}", flush=True)
    channels, group = _open_backend(cfg, record)
    with _stopping(group) as ending:  # run() takes SIGTERM as Ctrl-C
        with sitting_timer(cfg.stop_after_hours):
            _start(cfg, record, channels, group)
            group.watch({finishing_role(cfg)})
    summary = _summarize(cfg, group)
    return _conclude(cfg, record, summary, ending)


def _open_backend(cfg: RunConfig, record: RunRecord):
    """The run's channels and its group of children (drlhp.runtime.child.ChildGroup), of --backend."""
    if cfg.backend == "ray":  # the roles as Ray actors; Ray is imported only here
        from drlhp.runtime.ray_backend import create
    else:
        from drlhp.runtime.launcher import create
    return create(cfg, str(record.dir))


def _start(cfg: RunConfig, record: RunRecord, channels, group) -> None:
    """Every role started (drlhp.roles' order), and their pids in <run_dir>/pids.json."""
    from drlhp.reward.checkpoint import predictor_to_load

    if not gathering(cfg) and predictor_to_load(cfg, record.dir):
        channels.random_play_over.set()  # a predictor will be loaded: the policy waits for it, no random play
    profile_dir = str(record.paths.profile) if cfg.profile else None
    for child in children(cfg, channels, str(record.dir), profile_dir):
        group.start(child)
    write_json(record.dir / "pids.json", {"parent": os.getpid(), **group.pids()})


@dataclass
class _Ending:
    """How the wait for the run's end ended: a child's failure, Ctrl-C / SIGTERM, --stop_after_hours."""
    failure: ChildFailed | None = None
    interrupted: bool = False
    time_up: bool = False


@contextmanager
def _stopping(group):
    """Around the wait: a failed child or a stop is noted in the _Ending it yields, not raised; at the
    end every child is stopped, saved and gone (an error while they stop is a failure too)."""
    ending = _Ending()
    try:
        yield ending
    except ChildFailed as e:
        ending.failure = e
    except KeyboardInterrupt as e:
        ending.interrupted, ending.time_up = True, isinstance(e, SittingOver)
        print("\n[run] " + ("--stop_after_hours reached" if ending.time_up else "interrupted")
              + ": stopping the processes (they save the database and checkpoints)...", file=sys.stderr, flush=True)
    finally:
        with sigterm_ignored():  # a second SIGTERM must not cut the children's saving short
            try:
                killed = group.shutdown()
                if killed:
                    print(f"[run] had to kill: {', '.join(killed)}", file=sys.stderr, flush=True)
            except ChildFailed as e:
                ending.failure = ending.failure or e
    # A SIGTERM that the children acted on before this process's handler ran (they stopped, saved and
    # reported "done", and watch() returned), or that reached only a child, stopped the run all the same.
    ending.interrupted = ending.interrupted or bool(group.stopped_by_signal)


def _summarize(cfg: RunConfig, group) -> dict:
    """The run's summary: the roles' figures, and how fed the loop was."""
    summary = {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed}
    for role in summary_roles(cfg):
        summary.update(group.figures.get(role, {}))
    if summary.get("timesteps") and summary.get("labels_given") is not None:
        after_initial = max(0, summary["labels_given"] - cfg.prefs.n_initial_prefs)
        summary["labels_per_agent_step"] = round(after_initial / summary["timesteps"], 6)
    return summary


def _conclude(cfg: RunConfig, record: RunRecord, summary: dict, ending: _Ending) -> int:
    """The summary and the status written, the outcome said; the exit code."""
    if ending.failure is not None:
        record.write_summary(summary)
        record.set_status("crashed", error=f"{ending.failure}\n{ending.failure.detail}")
        print(f"run.py: error: {ending.failure} (details: {record.paths.status})", file=sys.stderr, flush=True)
        return 1
    if ending.time_up:
        return end_sitting(record, cfg.stop_after_hours, summary)
    if ending.interrupted:
        return mark_interrupted(record, f"[run] interrupted; database and checkpoints saved. Resume with the same "
                                        f"command and --run_dir {record.dir}", summary)
    if summary.get("labelling_window_closed"):
        # The person closed the labelling window: the run stops as with Ctrl-C (the stop event; every
        # process saved), but it is how a labelling session normally ends, so the exit code is 0.
        record.write_summary(summary)
        record.set_status("interrupted")
        print(f"[run] the labelling window was closed: stopped; database and checkpoints saved. Resume with "
              f"the same command and --run_dir {record.dir}", flush=True)
        return 0
    if gathering(cfg):
        summary["prefs_file"] = str(record.paths.prefs)
    return _finish(record, summary, cfg)


def pretrain_reward_predictor(cfg: RunConfig, record: RunRecord) -> int:
    """The predictor on a saved database, in this process; saves <run_dir>/reward_predictor/.
    Metrics (every evaluation): progress_reward.csv and tb/reward/, as in the three-process modes."""
    import threading

    from drlhp.reward.checkpoint import find_file
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer
    from drlhp.runtime.metrics import MetricsLogger
    from drlhp.runtime.tf_setup import configure_tensorflow, kernels_in_use

    db = PrefDB.load(find_file(cfg.load_prefs_dir, RunPaths.PREFS), max_prefs=cfg.prefs.max_prefs,
                     skip_damaged=cfg.skip_damaged_prefs)
    if db.damaged:
        print(_lost_line(db), file=sys.stderr, flush=True)
    if db.n_train == 0:
        raise UsageError(f"the preference database in {cfg.load_prefs_dir} has no training preferences")
    configure_tensorflow(cfg.tf_intra_threads, cfg.tf_inter_threads, seed=cfg.seed, onednn=cfg.reward.onednn)
    entry = db.entries("train")[0]
    trainer = RewardTrainer(db.segment_obs(entry.id1).shape[1:], cfg.reward, db, threading.Lock(), seed=cfg.seed)
    logger = MetricsLogger(record.dir, tb_subdir="tb/reward", csv_name="progress_reward.csv")
    try:
        trainer.pretrain(cfg.reward.n_initial_epochs, log=lambda s: print(s, flush=True), on_eval=logger.log)
        if not trainer.last_eval:  # pretrain() evaluates after its last step; zero steps leave nothing
            logger.log(trainer.steps, trainer.evaluate())
    except KeyboardInterrupt:
        return mark_interrupted(record)
    finally:
        logger.close()
    trainer.publish()  # normalization statistics (the first: from 10x the newest segments), saved with the weights
    trainer.save(record.paths.predictor)
    return _finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "n_preferences": len(db),
                            "predictor_val_accuracy": trainer.last_eval.get("reward/val_accuracy"),
                            "predictor_train_steps": trainer.steps, "predictor_kernels": kernels_in_use(),
                            "predictor_precision": trainer.ensemble.precision.describe(),
                            "reward_predictor_file": str(record.paths.predictor)})


def train_policy_without_labelling(cfg: RunConfig, record: RunRecord) -> int:
    """--no_labelling: the policy alone, on a saved predictor's reward; no labeller, no predictor training."""
    from drlhp.policy.process import run_policy
    from drlhp.reward.checkpoint import load_predictor_weights, predictor_batchnorm
    from drlhp.runtime.ports import PolicyPorts

    weights, meta = load_predictor_weights(cfg.load_reward_predictor_ckpt_dir)
    batchnorm = predictor_batchnorm(meta)  # the saved network's shape, whatever this command's flags say
    cfg = replace(cfg, reward=replace(cfg.reward, n_members=len(weights.weights),
                                      batchnorm=cfg.reward.batchnorm if batchnorm is None else batchnorm))
    print(f"[run] {cfg.mode} --no_labelling on {cfg.env} with predictor {meta['path']}, "
          f"{cfg.total_timesteps:,} agent steps -> {record.dir}", flush=True)
    try:
        with sitting_timer(cfg.stop_after_hours):
            summary = run_policy(cfg, PolicyPorts(), str(record.dir), fixed_weights=weights)  # no channels
    except KeyboardInterrupt as e:  # run_policy saved a checkpoint
        if isinstance(e, SittingOver):
            return end_sitting(record, cfg.stop_after_hours)
        return mark_interrupted(record, f"\n[run] interrupted; checkpoint saved in {record.ckpt_dir}")
    return _finish(record, {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed, "no_labelling": True, **summary})


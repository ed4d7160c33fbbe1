"""The modes of run.py, and the run harness that runs each as a recorded run.

    train_policy_with_preferences        the paper's three processes (policy, preference interface,
                                         reward predictor; drlhp.run.parent): gather n_initial_prefs with
                                         a random policy, pretrain the predictor, then train all three
                                         at once. --no_labelling: the policy alone on a saved predictor.
    gather_initial_prefs                 random policy + labeller; saves the preference database
    pretrain_reward_predictor            the predictor on a saved database, in this process; saves it
    train_policy_with_original_rewards   A2C on the env's (clipped) reward, in this process
    watch                                play a saved policy, write a video

Every mode is a recorded run (``run``): its inputs are checked (drlhp.run.checks), its run directory gets the
record (drlhp.records.run_record; stdout and stderr too when run.py asks), the mode runs (``RUNS``: the
parent's run of the processes, drlhp.run.parent, or a mode of this process, drlhp.run.modes), and whatever happens
its status ends finished / interrupted / crashed (with the error; drlhp.run.outcome) and its curves are drawn
(curves.png).
"""
from __future__ import annotations

import sys
import traceback
from dataclasses import replace

from drlhp.config import (
    GATHER_INITIAL_PREFS,
    PRETRAIN_REWARD_PREDICTOR,
    TRAIN_POLICY_WITH_ORIGINAL_REWARDS,
    TRAIN_POLICY_WITH_PREFERENCES,
    WATCH,
    RunConfig,
)
from drlhp.processes.interrupts import mark_interrupted, sigterm_as_interrupt
from drlhp.processes.profiling import profiled
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import RunRecord, default_run_dir
from drlhp.run.checks import UsageError, check_inputs, check_resume, drop_damaged_prefs, resolve_algo
from drlhp.run.modes import (
    pretrain_reward_predictor,
    train_policy_with_original_rewards,
    train_policy_without_labelling,
    watch,
)
from drlhp.run.parent import run_processes


def train_policy_with_preferences(cfg: RunConfig, record: RunRecord) -> int:
    """The paper's three processes (drlhp.run.parent); --no_labelling: the policy alone, in this process."""
    return run_processes(cfg, record) if cfg.uses_processes else train_policy_without_labelling(cfg, record)


# The five modes, each run by one function (exit code out): the parent's run of the processes or a mode of
# this process. What a mode does (gathers, labels, trains the policy, uses processes) is RunConfig's to say.
RUNS = {
    TRAIN_POLICY_WITH_PREFERENCES: train_policy_with_preferences,
    GATHER_INITIAL_PREFS: run_processes,
    PRETRAIN_REWARD_PREDICTOR: pretrain_reward_predictor,
    TRAIN_POLICY_WITH_ORIGINAL_REWARDS: train_policy_with_original_rewards,
    WATCH: watch,
}


def run(cfg: RunConfig, argv: list[str] | None = None, tee_output: bool = False, announce: str | None = None) -> int:
    """Run one mode as a recorded run; returns the exit code. ``tee_output``: copy this process's (and
    its children's) stdout and stderr into the run directory (run.py asks; tests calling this in-process
    do not, so that their own output capture is left alone)."""
    check_inputs(cfg)  # bad inputs: UsageError before any run directory exists
    mode = RUNS[cfg.mode]
    given = cfg
    cfg = _resolve_run_dir(resolve_algo(cfg))
    record = RunRecord(cfg.run_dir)
    # what the run filled in itself (a resumed run's own checkpoints, --algo auto's choice) is not a change of
    # arguments
    derived = tuple(k for k in ("load_policy_ckpt_dir", "run_dir", "algo") if getattr(given, k) != getattr(cfg, k))
    check_resume(cfg, record, derived)
    kernels = tf_kernels(cfg)
    record.start(cfg.to_dict(), argv, derived=derived, machine=kernels)
    tee = None
    if tee_output:
        from drlhp.processes.output_tee import OutputTee

        if cfg.uses_processes:
            # multiprocessing's resource tracker outlives this process: started before the tee, it keeps
            # the real stdout and stderr, not a pipe whose reader is gone when this process exits
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
        tee = OutputTee(record.dir, header=" ".join(argv or []))
    if announce:  # e.g. the preset's flags: said once the run has passed its checks and started
        print(announce, flush=True)
    if cfg.prefs.oracle_goal and not cfg.watches:  # watch says what it measures itself
        from pref_interface.goal_oracle import goal_line

        print(goal_line(cfg.prefs.oracle_goal, cfg.env), flush=True)
    if "predictor_kernels" in kernels or "policy_kernels" in kernels:
        print(tf_kernels_line(kernels), flush=True)
    with sigterm_as_interrupt():  # every mode: a stop, as Ctrl-C
        try:
            # --profile: this process too (the one-process modes' work; the parent's waiting in the others)
            with profiled(record.paths.profile if cfg.profile else None,
                          "parent" if cfg.uses_processes else cfg.mode):
                if cfg.skip_damaged_prefs:
                    drop_damaged_prefs(cfg, record)
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
    """The CPU and the kernel library each of this run's TensorFlow roles takes on it (drlhp.processes.cpu):
    the predictor's by --reward_onednn, the policy's TensorFlow's default. Chosen from this machine's
    flags; a process elsewhere (--backend ray) chooses by its own and says so in its log and the summary."""
    from drlhp.processes.cpu import (
        choose_kernels,
        choose_policy_precision,
        choose_precision,
        cpu_flags,
        cpu_model,
        default_kernels,
    )

    flags = cpu_flags()
    out = {"cpu": cpu_model(), "cpu_flags": [f for f in ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16")
                                             if f in flags]}
    if cfg.trains_predictor:
        out["predictor_kernels"] = choose_kernels(cfg.reward.onednn, flags).to_dict()
        precision = choose_precision(cfg.reward.bfloat16, cfg.reward.onednn, flags)
        from drlhp.policy.algorithms import algorithm

        box = algorithm(cfg).actions == "box"  # the predictor's MLP on x_t = (o_t, a_t)
        out["predictor_precision"] = (precision.for_mlp() if box else precision).to_dict()
    if cfg.runs_policy:
        out["policy_kernels"] = default_kernels().to_dict()
        from envs import observation_shape

        if len(observation_shape(cfg.env)) == 3:  # the Nature CNN (an MLP computes in float32 always)
            out["policy_precision"] = choose_policy_precision(cfg.policy_bfloat16, flags).to_dict()
    return out


def tf_kernels_line(kernels: dict) -> str:
    roles = "; ".join(f"{role} {k['library']} ({k['reason']})" for role, k in
                      (("predictor", kernels.get("predictor_kernels")), ("policy", kernels.get("policy_kernels")))
                      if k)
    if kernels.get("predictor_precision"):
        from drlhp.processes.cpu import PrecisionChoice

        roles += f"; the reward network's {PrecisionChoice(**kernels['predictor_precision']).describe()}"
    if kernels.get("policy_precision"):
        from drlhp.processes.cpu import PrecisionChoice

        roles += f"; the policy's {PrecisionChoice(**kernels['policy_precision']).describe()}"
    return f"[run] TensorFlow kernels on {kernels['cpu']} ({' '.join(kernels['cpu_flags']) or 'no x86 flags'}): {roles}"


def _resolve_run_dir(cfg: RunConfig) -> RunConfig:
    from drlhp.policy.checkpoint import find_latest_checkpoint

    if cfg.run_dir is None:
        return replace(cfg, run_dir=str(default_run_dir(cfg.env, cfg.mode)))
    if (not cfg.watches and cfg.load_policy_ckpt_dir is None
            and find_latest_checkpoint(RunPaths(cfg.run_dir).checkpoints)):
        # An existing run directory with checkpoints: resume it where it stopped (watch never resumes).
        return replace(cfg, load_policy_ckpt_dir=str(RunPaths(cfg.run_dir).checkpoints))
    return cfg


def _draw_curves(record: RunRecord) -> None:
    """<run_dir>/curves.png from the run's metrics; a failure here costs a warning, never the run."""
    try:
        from drlhp.records.curves import write_run_curves

        path = write_run_curves(record.dir)
    except Exception as e:  # noqa: BLE001 -- plotting must not turn a finished run into a crash
        print(f"[run] warning: no curves.png: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return
    if path is not None:
        print(f"[run] curves: {path}", flush=True)

"""Issue 39's must-show, measured: drlhp's own PPO trained ONLY through ``drlhp.LearnedRewardVector`` on a saved MuJoCo
predictor (no labeller, no predictor process, the env's reward never paid to the agent), and the task's return it
reaches, measured as the MuJoCo table measures it, with its ratio to the table's baseline.

    python experiments/learned_reward_ppo.py --predictor RUN_OR_EXPORT_DIR --env Hopper-v5 --seed N
        --run_dir DIR [--million_timesteps 1] [--log_interval S] [--baseline_csv FILE] [--baseline_arm ARM]
        [run.py flags, applied last: e.g. --ppo_ent_coef 0]

**What it trains.** PPOTrainer (drlhp/policy/ppo/trainer.py), PolicyTrainer's production loop, as
``python run.py train_policy_with_original_rewards --env ENV`` runs it (drlhp/run/modes.py's PPO mode): the ``mujoco``
preset's true-reward flags (1M agent steps, a checkpoint every 50 updates), then the PPO settings the predictor's own
run trained its policy with (its config.json's ``ppo`` section: for the table's preference runs the preset's
FOR_PREFERENCES, i.e. the entropy bonus 0.01 where the true reward's arm has 0, and the same fall rule and penalties;
a config without that section: the preset's flags from preferences, ``preferences_flags``), then any run.py flags
given after the script's own. The envs are envs/fixed_length.py's (``any_vector_env``: fixed-length episodes under
the predictor's run's fall rule, same-step autoreset) inside LearnedRewardVector on the predictor.

**What it pays.** The vector env's reward as it comes, i.e. the wrapper's: the predictor's reward of
x_t = (o_t, clip(a_t)) as the run's policy got it (drlhp/learned_reward.py). PPOTrainer.play pays ``rollout.rewards``
(the env's reward as stepped) with ``--ppo_control_cost`` on, and ``info["reward_task"]`` (the oracle's reward) with
it off: so it is forced on here (``--no-ppo_control_cost`` is refused), and the control cost means nothing to the
wrapper's reward. PPOPolicy scales the reward by its running return std, as on any reward.

**What it measures.** The table's measure (experiments/mujoco_record.py, mujoco_table.py): the mean over the last
100 fixed-length episodes of ``info["reward_task"]`` summed per episode (the oracle's reward: the task's reward
without the control cost, the fall penalty in), summary.json's ``task_return_last100``; gymnasium's own reward over
the same episodes in ``standard_return_last100``. The return the agent was paid (the predictor's, summed per episode)
is ``predictor_return_last100`` in summary.json; NOTE: in progress.csv, TensorBoard and the progress line that same
paid return is under the loop's usual name ``true_return_last100`` ("true return"), and the table's measure is
``task_return_last100`` ("without control cost").

**The ratio.** The measure / the mean of the ``baseline`` arm's returns for the task in docs/mujoco_runs.csv
(``--baseline_csv``; rows finished at their arm's full budget only, as mujoco_table.py takes them; the arm
``penalty-baseline`` where the predictor's run had --fall_rule penalty; ``--baseline_arm`` another), with
mujoco_table.py's ``score`` (on Reacher the normalized score). The table's runs are 1M agent steps: a ratio at
another budget is said not to be the table's.

The run directory is a drlhp run's (RunRecord: config.json, command.txt, code_version.json, run.json, status.json,
stdout.log and stderr.log, progress.csv, tb/, checkpoints/, summary.json, curves.png); the same --run_dir again
resumes from its newest checkpoint. mujoco_record.py can record it as an arm of its own. The last line printed is
the measure and the ratio. Exit codes: 0 done, 2 a predictor or flag this cannot use, 130 interrupted.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from drlhp.config import TRAIN_POLICY_WITH_ORIGINAL_REWARDS, RunConfig  # noqa: E402
from drlhp.config.cli import build_parser, config_from_args, config_problem, flags  # noqa: E402
from drlhp.config.presets import preferences_flags, with_preset  # noqa: E402
from drlhp.learned_reward import LearnedRewardError, find_predictor  # noqa: E402
from drlhp.policy.reward_source import RewardSource  # noqa: E402
from mujoco_runs_csv import CSV_PATH, read_rows  # noqa: E402
from mujoco_table import DEFAULT_BUDGET, arm_values, budget, score, score_text  # noqa: E402

MEASURE = "task_return_last100"  # mujoco_record.py's ``return``
PAID = "predictor_return_last100"  # the loop's true_return_last100 here: what the agent was paid, summed per episode


class WrapperReward(RewardSource):
    """The vector env's reward as it comes: here LearnedRewardVector's, the predictor's (PPOPolicy scales it)."""

    name = "learned_reward_wrapper"

    def rewards(self, obs, true_rewards):
        return true_rewards


class Refused(Exception):
    """A predictor or a flag this script cannot use; its text is the one line printed."""


def recorded_ppo_flags(section: dict) -> list[str]:
    """The PPO settings of a recorded config's ``ppo`` section as run.py flags (control_cost left out: forced on)."""
    out = []
    for flag in flags():
        place, _, name = flag.place.rpartition(".")
        if place != "ppo" or name not in section or name == "control_cost":
            continue
        value = section[name]
        if flag.type is bool:
            if value:
                out.append(f"--{flag.name}")
            elif flag.field.default or flag.field.metadata["negatable"]:
                out.append(f"--no-{flag.name}")
        else:
            out += [f"--{flag.name}", str(value)]
    return out


def run_config(env_id: str, seed: int, run_dir, million_timesteps: float, log_interval: float,
               predictor_config: dict, extra: list[str] = ()) -> tuple[RunConfig, str]:
    """(the run's RunConfig, where its PPO settings came from): the mujoco preset's true-reward flags, the predictor's
    run's PPO settings, then ``extra`` run.py flags; control cost on (the module's docstring). Refused on a bad flag."""
    argv = [TRAIN_POLICY_WITH_ORIGINAL_REWARDS, "--env", env_id, "--algo", "ppo", "--seed", str(seed),
            "--run_dir", str(run_dir), "--million_timesteps", f"{million_timesteps:g}",
            "--log_interval", f"{log_interval:g}"]
    argv, preset, _ = with_preset(argv)  # what run.py train_policy_with_original_rewards --env ENV starts from
    recorded = predictor_config.get("ppo")
    if isinstance(recorded, dict) and recorded:
        ppo_flags = recorded_ppo_flags(recorded)
        source = "the predictor's run's own (its config.json's ppo section)"
    else:
        ppo_flags = preferences_flags(preset, env_id)
        source = f"the {preset} preset's from preferences (the predictor's config.json has no ppo section)"
    extra = list(extra)
    if "--no-ppo_control_cost" in extra:
        raise Refused("--no-ppo_control_cost would pay the agent info['reward_task'], the oracle's reward: the agent "
                      "here is paid the wrapper's reward only")
    try:
        args = build_parser().parse_args([*argv, *ppo_flags, *extra])
    except SystemExit:
        raise Refused(f"run.py flags not understood: {' '.join(extra)}") from None
    cfg = config_from_args(args)
    cfg = replace(cfg, ppo=replace(cfg.ppo, control_cost=True))
    problem = config_problem(cfg) or cfg.ppo.problem()
    if problem:
        raise Refused(problem)
    return cfg, source + (f", then {' '.join(extra)}" if extra else "")


def baseline_ratio(task: str, value: float | None, csv_path, arm: str) -> tuple[float | None, str]:
    """(the ratio of ``value`` to ``arm``'s mean return for ``task``, a text naming the arm, its seeds and file)."""
    if value is None or not math.isfinite(value):
        return None, "no ratio (no finished episode)"
    rows = [r for r in read_rows(Path(csv_path)) if r["status"] == "finished"
            and str(r["timesteps"]).isdigit() and int(r["timesteps"]) >= budget(r["arm"])]
    base = arm_values(rows, task, arm)
    if not base:
        return None, f"no ratio: no finished {arm!r} row of {task} at its budget in {csv_path}"
    ratio = score(task, {0: value}, base, arm_values(rows, task, "random"))
    seeds = ", ".join(str(s) for s in sorted(base))
    return ratio, (f"ratio {score_text(task, ratio)} to the {arm!r} arm's mean return "
                   f"{statistics.mean(base.values()):.2f} (seeds {seeds}; {csv_path})")


def train(predictor, env_id: str, seed: int, run_dir, million_timesteps: float = 1.0, log_interval: float = 60.0,
          baseline_csv=CSV_PATH, baseline_arm: str | None = None, extra: list[str] = (), argv=None,
          observers=()) -> tuple[int, dict]:
    """The run (the module's docstring); (exit code, summary). ``observers``: RolloutObservers of the PPO loop (they
    see each PaidRollout: the rewards paid, x_t, the task's reward)."""
    from drlhp.learned_reward import LearnedRewardVector, SavedPredictor
    from drlhp.policy.checkpoint import find_latest_checkpoint
    from drlhp.policy.loop import Agent, Outputs
    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.trainer import PPOTrainer
    from drlhp.processes.interrupts import mark_interrupted, sigterm_as_interrupt
    from drlhp.records.metrics import MetricsLogger
    from drlhp.records.run_record import RunRecord
    from drlhp.run.outcome import finish
    from drlhp.run.pipeline import tf_kernels
    from envs.fixed_length import any_vector_env, describe

    try:
        ckpt, config_dir, pconfig = find_predictor(predictor)
        if pconfig.get("env") and pconfig["env"] != env_id:
            raise Refused(f"{ckpt} is a predictor of {pconfig['env']}, not of {env_id}")
        goal = (pconfig.get("prefs") or {}).get("oracle_goal")
        if goal:
            raise Refused(f"{ckpt} is a goal's predictor ({goal}): this measures the task's return "
                          f"(watch measures a goal)")
        cfg, ppo_from = run_config(env_id, seed, run_dir, million_timesteps, log_interval, pconfig, extra)
    except (LearnedRewardError, Refused) as e:
        print(f"learned_reward_ppo: {e}", file=sys.stderr, flush=True)
        return 2, {}
    arm = baseline_arm or ("penalty-baseline" if cfg.ppo.fall_rule == "penalty" else "baseline")
    record = RunRecord(cfg.run_dir)
    if find_latest_checkpoint(record.ckpt_dir):  # the same --run_dir again: go on from its newest checkpoint
        cfg = replace(cfg, load_policy_ckpt_dir=str(record.ckpt_dir))
    record.start(cfg.to_dict(), argv if argv is not None else sys.argv, derived=("load_policy_ckpt_dir",),
                 machine=tf_kernels(cfg))  # the CPU in run.json: the table's row names it
    episodes = describe(env_id, **cfg.ppo.falls)
    print(f"[learned_reward_ppo] PPO on {env_id}, seed {seed}, {cfg.total_timesteps:,} agent steps -> {record.dir}\n"
          f"[learned_reward_ppo] paid: the predictor's reward through drlhp.LearnedRewardVector, {ckpt} (the "
          f"env's reward never paid; no labeller, no predictor process)\n"
          f"[learned_reward_ppo] PPO settings: the mujoco preset's true-reward flags, then {ppo_from}: ent_coef "
          f"{cfg.ppo.ent_coef:g}, {cfg.ppo.n_envs} envs x {cfg.ppo.n_steps} steps, gamma {cfg.ppo.gamma:g}, lambda "
          f"{cfg.ppo.gae_lambda:g}, lr {cfg.ppo.lr:g}\n[learned_reward_ppo] {episodes}\n"
          f"[learned_reward_ppo] the progress line's 'true return' is the paid (predictor's) return; the measure is "
          f"'without control cost' (task_return_last100)", flush=True)
    envs = logger = trainer = None
    with sigterm_as_interrupt():
        try:
            envs = LearnedRewardVector(any_vector_env(env_id, cfg.ppo.n_envs, **cfg.ppo.falls),
                                       SavedPredictor(predictor, seed=seed))
            logger = MetricsLogger(record.dir)
            trainer = PPOTrainer(cfg, Agent(envs, build_ppo(cfg, envs), WrapperReward()), Outputs(record, logger),
                                 observers=list(observers), episodes=episodes)
            summary = trainer.train()
        except KeyboardInterrupt:
            if trainer is not None:
                trainer.checkpoint()
                record.write_summary(_summary(trainer.summary(), ckpt, config_dir, ppo_from, None))
            return mark_interrupted(record, f"\n[learned_reward_ppo] interrupted; checkpoint saved. Resume with the "
                                            f"same command and --run_dir {record.dir}"), {}
        except Exception as e:
            import traceback

            record.set_status("crashed", error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            raise
        finally:
            if logger is not None:
                logger.close()
            if envs is not None:
                envs.close()
    value = summary.get(MEASURE)
    ratio, ratio_text = baseline_ratio(env_id, value, baseline_csv, arm)
    summary = _summary(summary, ckpt, config_dir, ppo_from, {"baseline_arm": arm, "baseline_csv": str(baseline_csv),
                                                             "ratio_to_baseline": ratio})
    code = finish(record, summary, cfg)
    _draw_curves(record)
    shown = "-" if value is None else f"{value:.2f}"
    not_table = ("" if summary["timesteps"] >= DEFAULT_BUDGET else
                 f"; {summary['timesteps']:,} agent steps, not the table's {DEFAULT_BUDGET:,}: not the table's ratio")
    print(f"[learned_reward_ppo] {env_id} seed {seed}: task return (last {min(summary['episodes'], 100)} "
          f"episodes, {MEASURE}) {shown} at {summary['timesteps']:,} agent steps, paid only the predictor's reward; "
          f"{ratio_text}{not_table}", flush=True)
    return code, summary


def _summary(summary: dict, ckpt, config_dir, ppo_from: str, ratio: dict | None) -> dict:
    """The loop's summary with its paid return under its own name and what paid it."""
    out = dict(summary)
    out[PAID] = out.pop("true_return_last100", None)
    out.update({"paid": "the predictor's reward through drlhp.LearnedRewardVector", "predictor": str(ckpt),
                "predictor_run": str(config_dir), "ppo_settings": ppo_from,
                "measure": f"{MEASURE}: the mean over the last 100 fixed-length episodes of info['reward_task'] "
                           f"summed per episode (the oracle's reward: no control cost, the fall penalty in)"})
    return {**out, **(ratio or {})}


def _draw_curves(record) -> None:
    try:
        from drlhp.records.curves import write_run_curves

        write_run_curves(record.dir)
    except Exception as e:  # noqa: BLE001 -- plotting must not turn a finished run into a crash
        print(f"[learned_reward_ppo] warning: no curves.png: {type(e).__name__}: {e}", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Flags it does not know are run.py's, applied last (e.g. --ppo_ent_coef 0).")
    p.add_argument("--predictor", required=True, help="a run directory, a `floyd export` folder or a predictor file")
    p.add_argument("--env", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--run_dir", required=True)
    p.add_argument("--million_timesteps", type=float, default=1.0)
    p.add_argument("--log_interval", type=float, default=60.0, help="seconds between progress lines")
    p.add_argument("--baseline_csv", default=str(CSV_PATH), help="the table's runs (default docs/mujoco_runs.csv)")
    p.add_argument("--baseline_arm", default=None,
                   help="default: baseline (penalty-baseline where the predictor's run had --fall_rule penalty)")
    args, extra = p.parse_known_args(argv)
    from drlhp.processes.output_tee import OutputTee

    Path(args.run_dir).mkdir(parents=True, exist_ok=True)
    tee = OutputTee(args.run_dir, header=" ".join(sys.argv))
    try:
        code, _ = train(args.predictor, args.env, args.seed, args.run_dir, args.million_timesteps, args.log_interval,
                        args.baseline_csv, args.baseline_arm, extra)
    finally:
        tee.close()
    return code


if __name__ == "__main__":
    sys.exit(main())

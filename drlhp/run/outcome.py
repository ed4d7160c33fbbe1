"""How a run ends: its summary and status written, what happened said, its exit code.

    finish(record, summary, cfg)     a run that ran to its end: "finished" (its budget done, or its targets
                                     reached), or "stopped" at --stop_at_million_timesteps; every mode ends here
    Ending                           how the parent's wait for the processes ended (drlhp.run.parent)
    summarize(cfg, group)            the processes' figures, as the run's summary
    conclude(cfg, record, summary, ending)   the processes' run ended: crashed, stopped, interrupted or finished
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from drlhp.config import RunConfig
from drlhp.processes.child import ChildFailed
from drlhp.processes.interrupts import end_sitting, mark_interrupted
from drlhp.records.run_record import RunRecord
from drlhp.run.roles import summary_roles


def finish(record: RunRecord, summary: dict, cfg: RunConfig | None = None) -> int:
    """Write the summary and the status: "finished" (the budget done, or the run's targets reached:
    --stop_at_true_return, --stop_at_success_rate), or "stopped" where the policy ended this sitting at
    ``cfg.stop_at_million_timesteps`` before its budget."""
    record.write_summary(summary)
    reached = cfg is not None and summary.get("reached_target") is True
    stopped_early = cfg is not None and summary.get("timesteps", 0) >= cfg.stop_timesteps
    if reached:
        record.set_status("finished")
        print(reached_line(cfg, summary), flush=True)
    elif stopped_early and cfg.stop_timesteps < cfg.total_timesteps:
        record.set_status("stopped")
        print(f"[run] stopped at --stop_at_million_timesteps {cfg.stop_at_million_timesteps:g}; to go on, run the "
              f"same command with a larger value (0: the whole budget) and --run_dir {record.dir}", flush=True)
    else:
        record.set_status("finished")
    print("[run] finished: " + ", ".join(f"{k}={v}" for k, v in summary.items()), flush=True)
    print(f"[run] summary: {record.paths.summary}", flush=True)
    return 0


def reached_line(cfg: RunConfig, summary: dict) -> str:
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


@dataclass
class Ending:
    """How the wait for the run's end ended: a child's failure, Ctrl-C / SIGTERM, --stop_after_hours."""
    failure: ChildFailed | None = None
    interrupted: bool = False
    time_up: bool = False


def summarize(cfg: RunConfig, group) -> dict:
    """The run's summary: the roles' figures, and how fed the loop was."""
    summary = {"mode": cfg.mode, "env": cfg.env, "seed": cfg.seed}
    for role in summary_roles(cfg):
        summary.update(group.figures.get(role, {}))
    if summary.get("timesteps") and summary.get("labels_given") is not None:
        after_initial = max(0, summary["labels_given"] - cfg.prefs.n_initial_prefs)
        summary["labels_per_agent_step"] = round(after_initial / summary["timesteps"], 6)
    return summary


def conclude(cfg: RunConfig, record: RunRecord, summary: dict, ending: Ending) -> int:
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
    if cfg.gathers:
        summary["prefs_file"] = str(record.paths.prefs)
    return finish(record, summary, cfg)

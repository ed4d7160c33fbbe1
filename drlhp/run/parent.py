"""The parent's run of the three processes (train_policy_with_preferences, gather_initial_prefs): the roles
of drlhp.run.roles started on the backend --backend names, the wait for the run's end, every child stopped and
saved, then the outcome (drlhp.run.outcome). The parent stays TensorFlow-free.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

from drlhp.config import RunConfig
from drlhp.processes.child import ChildFailed
from drlhp.processes.interrupts import SittingOver, sigterm_ignored, sitting_timer
from drlhp.records.atomic import write_json
from drlhp.records.run_record import RunRecord
from drlhp.run.outcome import Ending, conclude, summarize
from drlhp.run.roles import children, finishing_role


def run_processes(cfg: RunConfig, record: RunRecord) -> int:
    """train_policy_with_preferences and gather_initial_prefs: the three roles (drlhp.run.roles) on the
    backend --backend names. Start them, wait for the run's end, summarize, conclude."""
    print(f"[run] {cfg.mode} on {cfg.env}, seed {cfg.seed}, " + (f"{cfg.prefs.n_initial_prefs} preferences"
          if cfg.gathers else f"{cfg.total_timesteps:,} agent steps") + f" -> {record.dir}", flush=True)
    channels, group = _open_backend(cfg, record)
    with _stopping(group) as ending:  # run() takes SIGTERM as Ctrl-C
        with sitting_timer(cfg.stop_after_hours):
            _start(cfg, record, channels, group)
            group.watch({finishing_role(cfg)})
    summary = summarize(cfg, group)
    return conclude(cfg, record, summary, ending)


def _open_backend(cfg: RunConfig, record: RunRecord):
    """The run's channels and its group of children (drlhp.processes.child.ChildGroup), of --backend."""
    if cfg.backend == "ray":  # the roles as Ray actors; Ray is imported only here
        from drlhp.processes.ray_backend import create
    else:
        from drlhp.processes.launcher import create
    return create(cfg, str(record.dir))


def _start(cfg: RunConfig, record: RunRecord, channels, group) -> None:
    """Every role started (drlhp.run.roles' order), and their pids in <run_dir>/pids.json."""
    from drlhp.reward.checkpoint import predictor_to_load

    if not cfg.gathers and predictor_to_load(cfg, record.dir):
        channels.random_play_over.set()  # a predictor will be loaded: the policy waits for it, no random play
    profile_dir = str(record.paths.profile) if cfg.profile else None
    for child in children(cfg, channels, str(record.dir), profile_dir):
        group.start(child)
    write_json(record.dir / "pids.json", {"parent": os.getpid(), **group.pids()})


@contextmanager
def _stopping(group):
    """Around the wait: a failed child or a stop is noted in the Ending it yields, not raised; at the
    end every child is stopped, saved and gone (an error while they stop is a failure too)."""
    ending = Ending()
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

#!/usr/bin/env python
"""A run's running time across its sittings, gathering and pretraining included.

    python experiments/running_time.py RUN_DIR

The policy's `system/wall_s` counts only its own training time (not the minutes it waits for the
initial preferences and the predictor's pretraining). This adds those: each sitting runs from its
start (run.json) to the last TensorBoard event written before the next sitting started (every process
writes events: the predictor every evaluation, the labeller and the policy every log interval), or to
the run's final status time for the last sitting. So each sitting's end is known to within one log
interval (30 s for experiments/pong_prefs.sh). Time between sittings (the run stopped) is not counted.

Prints one line per sitting, then: running time in all, the policy's training time, and the time
before the policy started (setup: gathering and pretraining, TensorFlow start-up included).
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from drlhp.records.formatting import format_duration  # noqa: E402
from drlhp.records.run_paths import RunPaths  # noqa: E402


def _event_times(run_dir: Path) -> list[float]:
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    times = []
    for path in RunPaths(run_dir).tb.rglob("events.out.tfevents.*"):
        try:
            times.extend(event.wall_time for event in EventFileLoader(str(path)).Load())
        except Exception:  # noqa: BLE001 -- a truncated last record (a killed run) ends that file's times
            continue
    return sorted(times)


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()  # run.json writes local time, as does this


def sittings(run_dir: Path) -> list[tuple[float, float]]:
    """(start, end) in epoch seconds for each sitting of the run."""
    meta = json.loads(RunPaths(run_dir).run_json.read_text())
    starts = [_epoch(s["started"]) for s in meta.get("sittings", []) if isinstance(s, dict) and s.get("started")]
    if not starts:
        raise SystemExit(f"running_time: {run_dir / 'run.json'} lists no sittings")
    times = _event_times(run_dir)
    status_time = None
    try:
        status_time = _epoch(json.loads(RunPaths(run_dir).status.read_text())["time"])
    except (OSError, ValueError, KeyError):
        pass
    spans = []
    for i, start in enumerate(starts):
        stop = starts[i + 1] if i + 1 < len(starts) else float("inf")
        inside = [t for t in times if start <= t < stop]
        if status_time is not None and start <= status_time < stop:
            inside.append(status_time)
        spans.append((start, max(inside) if inside else start))
    return spans


def policy_training_s(run_dir: Path) -> float:
    try:
        with open(RunPaths(run_dir) / RunPaths.PROGRESS, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("system/wall_s")]
    except OSError:
        return 0.0
    return float(rows[-1]["system/wall_s"]) if rows else 0.0


def summary(run_dir: Path) -> dict:
    spans = sittings(run_dir)
    total = sum(end - start for start, end in spans)
    policy = policy_training_s(run_dir)
    return {"sittings": spans, "running_s": total, "policy_s": policy, "setup_s": max(total - policy, 0.0)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path)
    run_dir = p.parse_args().run_dir
    s = summary(run_dir)
    for i, (start, end) in enumerate(s["sittings"], 1):
        print(f"sitting {i}: {dt.datetime.fromtimestamp(start):%Y-%m-%d %H:%M:%S} for {format_duration(end - start)}")
    print(f"running time {format_duration(s['running_s'])}: policy training {format_duration(s['policy_s'])}, "
          f"before it (gathering, pretraining, start-up) {format_duration(s['setup_s'])}")


if __name__ == "__main__":
    main()

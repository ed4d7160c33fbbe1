#!/usr/bin/env python
"""The Atari preset's speed as a user runs it, old code against new in one run: agent steps/s of the preference
pipeline and of PPO on the game's score, and where each one's time goes.

    python bench/preset_speed.py [--compare REV] [--env PongNoFrameskip-v4] [--seconds 150] [--repeats 1]
                                 [--json OUT]

Two workloads, each a real ``run.py`` from the checkout measured (and, with --compare, the same from REV checked
out into a temporary git worktree), one at a time, versions alternating (old, new, old, new, ... --repeats times):

  pipeline   ``run.py --env ENV --synthetic_prefs --seed 0``: the env's preset as a user runs it (on Atari the
             atari preset: PPO, its predictor, its label schedule, the synthetic oracle), but for a short start (64
             initial labels, 1 pretraining epoch: the preset's 500 and 30 take minutes and measure pretraining, not
             the pipeline). Measured over --seconds of policy training from its first trained row.
  ppo        ``run.py train_policy_with_original_rewards --env ENV --algo ppo --seed 0``: PPO with the same
             settings on the game's clipped score (the Atari table's other arm), over --seconds after a warm-up
             of 20 s.

Each part's share, from the run's own metrics and its processes' CPU time (psutil, over the same window):
  the policy's loop (progress.csv): env (stepping the emulators), act (the policy's forward pass), update (the
    policy's PPO update), reward (the predictor's reward on each step), waiting for the predictor, segment transport
  the processes' CPU seconds per second of wall time: policy, reward predictor (its training), preference
    interface (the oracle and the segment pool), parent; the predictor's milliseconds per training step and its
    pair-updates per second; labels per minute.
Prints the CPU model, each figure per version, and new / old; --json writes them all.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from drlhp.processes.cpu import cpu_model  # noqa: E402
from throughput import _csv_rows, stop_run  # noqa: E402  (bench/throughput.py: reading a run's CSVs, ending a run)

SHORT_START = ["--n_initial_prefs", "64", "--n_initial_epochs", "1"]
LOOP_PARTS = (("env", "system/time_frac_env"), ("act", "system/time_frac_act"), ("update", "system/time_frac_train"),
              ("reward", "system/time_frac_reward"), ("wait for predictor", "system/time_frac_wait_predictor"),
              ("segment transport", "system/segment_transport_time_frac"))
ROLES = ("policy", "reward_predictor", "pref_interface", "parent")


def _cpu_seconds(pids: dict) -> dict:
    import psutil

    out = {}
    for role, pid in pids.items():
        try:
            t = psutil.Process(pid).cpu_times()
            out[role] = t.user + t.system + t.children_user + t.children_system
        except (psutil.Error, OSError):
            pass
    return out


def measure(tree: Path, argv: list[str], run_dir: Path, seconds: float, warmup: float) -> dict:
    """``tree``'s run.py with ``argv`` until ``seconds`` of policy training past the first trained row (+ warmup);
    then SIGTERM (a run's own stop: it saves and ends). Figures from the window [start, end]."""
    cmd = [sys.executable, str(tree / "run.py"), *argv, "--seed", "0", "--log_interval", "5", "--run_dir", str(run_dir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tree,
                            env={**os.environ, "PYTHONPATH": str(tree)})
    progress = run_dir / "progress.csv"
    t_first = t_start = None
    cpu0: dict = {}
    start_row = None
    try:
        while proc.poll() is None:
            time.sleep(1)
            rows = [r for r in _csv_rows(progress) if float(r.get("step") or 0) > 0]
            if rows and t_first is None:
                t_first = time.perf_counter()
            if t_first is not None and t_start is None and time.perf_counter() - t_first >= warmup:
                t_start, start_row = time.perf_counter(), rows[-1]
                pids = json.loads((run_dir / "pids.json").read_text()) if (run_dir / "pids.json").exists() else {
                    "policy": proc.pid}
                cpu0 = _cpu_seconds(pids)
            if t_start is not None and time.perf_counter() - t_start >= seconds:
                cpu1 = _cpu_seconds(pids)
                t_end = time.perf_counter()
                break
    finally:
        stop_run(proc)
    if t_start is None:
        raise SystemExit(f"{cmd} never trained: {(proc.stderr.read() or '').strip()[-1500:]}")
    rows = [r for r in _csv_rows(progress) if float(r.get("step") or 0) > 0]
    end_row = rows[-1]
    steps = float(end_row["step"]) - float(start_row["step"])
    wall = float(end_row["system/wall_s"]) - float(start_row["system/wall_s"])
    out = {"agent_steps_per_s": steps / max(1e-9, wall)}
    window = [r for r in rows if float(r["step"]) > float(start_row["step"])]
    for name, key in LOOP_PARTS:
        vals = [float(r[key]) for r in window if r.get(key) not in (None, "")]
        if vals:
            out[f"loop_share_{name}"] = sum(vals) / len(vals)
    span = t_end - t_start
    for role in ROLES:
        if role in cpu0 and role in cpu1:
            out[f"cpu_per_s_{role}"] = (cpu1[role] - cpu0[role]) / span
    rew = [r for r in _csv_rows(run_dir / "progress_reward.csv") if r.get("reward/train_steps")]
    if len(rew) >= 2:
        out["predictor_step_ms"] = float(rew[-1]["reward/train_step_ms"])
    prefs = [r for r in _csv_rows(run_dir / "progress_prefs.csv") if r.get("prefs/labels_per_minute")
             and float(r["step"]) >= float(start_row["step"])]
    if prefs:
        out["labels_per_minute"] = sum(float(r["prefs/labels_per_minute"]) for r in prefs) / len(prefs)
    out["run_dir"] = str(run_dir)
    return out


def show(name: str, figures: dict[str, dict]) -> None:
    """One workload's figures, a column per version, and new / old where there are two."""
    versions = list(figures)
    keys = [k for k in figures[versions[-1]] if k != "run_dir"]
    print(f"\n{name}: " + " | ".join(versions) + (" | new / old" if len(versions) > 1 else ""))
    for k in keys:
        vals = [figures[v].get(k) for v in versions]
        cells = ["-" if x is None else f"{x:.3f}" if abs(x) < 10 else f"{x:.0f}" for x in vals]
        ratio = (f" | {vals[-1] / vals[0]:.2f}" if len(vals) > 1 and None not in vals and vals[0] else "")
        print(f"  {k:34s} " + " | ".join(f"{c:>8s}" for c in cells) + ratio)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--compare", default=None, metavar="REV", help="also measure this commit (old), first")
    p.add_argument("--seconds", type=float, default=150.0, help="measured window of each run")
    p.add_argument("--repeats", type=int, default=1, help="rounds of (old, new)")
    p.add_argument("--workloads", default="pipeline,ppo")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    import contextlib
    import tempfile

    from predictor_speed import old_worktree

    workloads = {"pipeline": (["--env", args.env, "--synthetic_prefs", *SHORT_START], 0.0),
                 "ppo": (["train_policy_with_original_rewards", "--env", args.env, "--algo", "ppo"], 20.0)}
    chosen = [w for w in args.workloads.split(",") if w]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip())
    new = f"new {head}{'+changes' if dirty else ''}"
    print(f"# {args.env}; {os.cpu_count()} cores; CPU: {cpu_model()}; {args.seconds:.0f} s a run", flush=True)
    results: dict[str, dict[str, list[dict]]] = {w: {} for w in chosen}
    base = Path(tempfile.mkdtemp(prefix="drlhp-preset-speed-"))
    with contextlib.ExitStack() as stack:
        versions = [(new, ROOT)]
        if args.compare:
            rev, tree, _ = stack.enter_context(old_worktree(args.compare))
            versions.insert(0, (f"old {rev}", tree))
        for r in range(args.repeats):
            for w in chosen:
                argv, warmup = workloads[w]
                for label, tree in versions:
                    run_dir = base / f"{w}-{label.split()[0]}-{r}"
                    print(f"{w}, {label}, round {r + 1}: {run_dir} ...", flush=True)
                    res = measure(tree, argv, run_dir, args.seconds, warmup)
                    print(f"  {res['agent_steps_per_s']:.0f} agent steps/s", flush=True)
                    results[w].setdefault(label, []).append(res)
    mean = {w: {label: {k: sum(x[k] for x in runs if k in x) / sum(1 for x in runs if k in x)
                        for k in runs[-1] if k != "run_dir"} for label, runs in by.items()}
            for w, by in results.items()}
    for w in chosen:
        show(w, mean[w])
    if args.json:
        Path(args.json).write_text(json.dumps({"env": args.env, "cpu": cpu_model(), "seconds": args.seconds,
                                               "mean": mean, "runs": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()

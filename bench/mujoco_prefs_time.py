#!/usr/bin/env python
"""Issue 29's speed target, measured whole: one run of Hopper-v5 from synthetic preferences, 1M agent steps on its
preset (three processes: PPO, the synthetic labeller, the predictor's 3 MLPs), against at most 15 minutes on 2 cores.

    python bench/mujoco_prefs_time.py [--env Hopper-v5] [--million_timesteps 1] [--seed 0] [--keep DIR]

Runs ``python run.py --env ENV --synthetic_prefs`` in a fresh run directory and prints the CPU model, then from the
run's summary: wall time, the policy's agent steps per second, the predictor's pair-updates per second (from the
policy's first update) and per agent step, labels given, and the true return of the last 100 episodes. Nothing else
should run on the machine while it measures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from drlhp.processes.cpu import cpu_model

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--million_timesteps", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", help="run directory to keep (default: a temporary one, removed)")
    args = p.parse_args()
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load average {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(args.keep or Path(tmp) / "run")
        cmd = [sys.executable, str(ROOT / "run.py"), "--env", args.env, "--synthetic_prefs", "--seed", str(args.seed),
               "--million_timesteps", str(args.million_timesteps), "--run_dir", str(run_dir), "--log_interval", "60"]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        s = json.loads((run_dir / "summary.json").read_text())
    print(f"{args.env}, {s['timesteps']:,} agent steps from preferences: {wall / 60:.1f} min wall (the command), "
          f"{s['wall_s'] / 60:.1f} min of policy training; {s['agent_steps_per_s']:.0f} agent steps/s; predictor "
          f"{s.get('pair_updates_per_s')} pair-updates/s, {s.get('pair_updates_per_agent_step')} per agent step; "
          f"{s.get('labels_given')} labels; true return (last 100) {s['true_return_last100']:.0f}; target: 15 min")


if __name__ == "__main__":
    main()

"""The random policy's rows of docs/mujoco_runs.csv (arm ``random``; issue 38): on each MuJoCo task, in drlhp's
fixed-length episodes (envs/fixed_length.py), actions drawn uniformly from the action space, 3 seeds a task, each
seed's row the mean over --episodes episodes (100: the table's "last 100 episodes") of the two returns the table
uses: ``return`` the oracle's reward (info["reward_task"]: no control cost, the fall penalty in) and
``return_standard`` gymnasium's own (info["reward_standard"]: control cost in, no fall penalty). With
``--fall_rule penalty`` the arm is ``random-penalty``. Reacher's normalized score needs its random rows.

    python experiments/mujoco_random.py [--tasks T ...] [--seeds 0 1 2] [--episodes 100] [--fall_rule reset]
        [--csv FILE] [--skip_recorded]"""
from __future__ import annotations

import argparse
import time

import numpy as np

from drlhp.processes.cpu import cpu_model
from envs.fixed_length import FALL_RULES, fixed_length_env
from mujoco_runs_csv import CSV_PATH, TASKS, finished, upsert


def random_row(task: str, seed: int, episodes: int, fall_rule: str = "reset") -> dict:
    """One seed's row: ``episodes`` random episodes, seeded ``seed`` (env and action space), one after another."""
    t0 = time.perf_counter()
    env = fixed_length_env(task, fall_rule=fall_rule)
    env.action_space.seed(seed)
    task_returns, standard_returns, steps = [], [], 0
    for episode in range(episodes):
        env.reset(seed=seed * 100_000 + episode)
        task_total = standard_total = 0.0
        while True:
            _, _, term, trunc, info = env.step(env.action_space.sample())
            task_total += info["reward_task"]
            standard_total += info["reward_standard"]
            steps += 1
            if term or trunc:
                break
        task_returns.append(task_total)
        standard_returns.append(standard_total)
    env.close()
    return {"task": task, "arm": "random" if fall_rule == "reset" else f"random-{fall_rule}", "seed": seed,
            "labels": 0, "timesteps": steps, "status": "finished",
            "return": round(float(np.mean(task_returns)), 2),
            "return_standard": round(float(np.mean(standard_returns)), 2),
            "wall_s": round(time.perf_counter() - t0, 1), "cpu": cpu_model()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", nargs="+", default=list(TASKS))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--fall_rule", choices=FALL_RULES, default="reset")
    p.add_argument("--csv", default=CSV_PATH)
    p.add_argument("--skip_recorded", action="store_true", help="leave out (task, seed)s already recorded finished")
    args = p.parse_args(argv)
    arm = "random" if args.fall_rule == "reset" else f"random-{args.fall_rule}"
    for task in args.tasks:
        for seed in args.seeds:
            if args.skip_recorded and finished(task, arm, seed, args.csv):
                continue
            row = random_row(task, seed, args.episodes, args.fall_rule)
            upsert([row], args.csv)
            print(f"{task} {arm} seed {seed}: return {row['return']}, standard {row['return_standard']} "
                  f"({args.episodes} episodes, {row['wall_s']} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

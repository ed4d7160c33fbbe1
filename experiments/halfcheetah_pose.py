"""H51's follow-up (issue 38): what a HalfCheetah run's final policy does. Each run's final PPO checkpoint plays N
episodes of 1,000 steps as it played in training (box_replay.py: the Gaussian's mean plus its learned spread,
clipped to the action box; numpy only) and one JSON line per run gives: the oracle's return (the task's reward without
the control cost, ``info["reward_forward"]`` summed, the table's measure), the share of steps on its back (the torso's
pitch, qpos[2], beyond 90 degrees either way), and the mean forward speed. A cheetah that learned to run on its back
is the known trap of this task; the line tells it from one that runs upright but slowly.

    python experiments/halfcheetah_pose.py RUN_DIR... [--episodes 10] [--seed 100]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from box_replay import ReplayPolicy, replay_steps  # noqa: E402
from envs.fixed_length import fixed_length_env  # noqa: E402


def pose(run_dir: Path, episodes: int, seed: int) -> dict:
    cfg = json.loads((run_dir / "config.json").read_text())
    if cfg["env"] != "HalfCheetah-v5":
        raise ValueError(f"{run_dir}: a run of {cfg['env']}, not HalfCheetah-v5")
    if cfg.get("prefs", {}).get("oracle_goal"):
        raise ValueError(f"{run_dir}: a goal's run ({cfg['prefs']['oracle_goal']}): its env and its score differ")
    env = fixed_length_env(cfg["env"])
    policy = ReplayPolicy(run_dir, env)
    returns, back, speed = [], [], []
    total = 0.0
    for _, info, ended in replay_steps(env, policy, episodes, seed):
        total += float(info["reward_forward"])
        pitch = float(env.unwrapped.data.qpos[2])
        back.append(abs(np.arctan2(np.sin(pitch), np.cos(pitch))) > np.pi / 2)
        speed.append(float(info["x_velocity"]))
        if ended:
            returns.append(total)
            total = 0.0
    env.close()
    return {"run": str(run_dir), "timesteps": policy.timesteps, "episodes": episodes,
            "oracle_return": round(float(np.mean(returns)), 1), "on_its_back": round(float(np.mean(back)), 3),
            "speed": round(float(np.mean(speed)), 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dirs", nargs="+", type=Path)
    p.add_argument("--episodes", type=int, default=10)
    p.add_argument("--seed", type=int, default=100)
    args = p.parse_args(argv)
    for run_dir in args.run_dirs:
        print(json.dumps(pose(run_dir, args.episodes, args.seed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

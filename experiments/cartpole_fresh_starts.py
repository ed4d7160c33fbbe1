"""H37's check without a run (issue 39, docs/results/cartpole.md session 23): does a CartPole predictor trained under
the reset rule score the fresh start that follows each fall below other upright states?

    PYTHONPATH=. python experiments/cartpole_fresh_starts.py RUN_DIR... [--episodes 20] [--noise 0.3]

Each run's saved predictor (drlhp.LearnedReward, scoring what training scored: the observation a step led to, the
fallen one on a fall) pays the steps of fixed-length CartPole-v1 episodes (the reset rule, envs/fixed_length.py)
played by a scripted balancer (push toward the pole's lean, theta + 0.5 theta_dot) that takes a random action with
probability --noise, so that it both balances and falls. Steps are grouped by what they led to: the fall itself,
the first 5 steps after a fall's fresh start, and of the others the leaning ones (|theta| >= 0.05 rad) and the
upright ones by the cart's place: centred (|x| < 0.5), drifted (0.5-1.5) and far out (1.5 or more; the track ends at
2.4). Printed per group: the count and the mean predicted reward in standard deviations
of the predicted reward over the non-fall steps (0 = their mean). H37 predicts fresh starts below upright steps.
"""
from __future__ import annotations

import argparse

import numpy as np

from drlhp.learned_reward import LearnedReward
from envs.fixed_length import fixed_length_env

FRESH_STEPS = 5


def groups_of(run: str, episodes: int, noise: float, seed: int) -> dict[str, list[float]]:
    env = LearnedReward(fixed_length_env("CartPole-v1"), run, center=0)
    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {"fall": [], "fresh start (1-5 after a fall)": [], "upright, centred": [],
                                   "upright, drifted": [], "upright, far out": [], "leaning": []}
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        since_fall = None
        while True:
            _, _, theta, theta_dot = obs
            action = int(rng.integers(2)) if rng.random() < noise else int(theta + 0.5 * theta_dot > 0)
            obs, reward, terminated, truncated, info = env.step(action)
            if info.get("fell"):
                out["fall"].append(reward)
                since_fall = 0
            elif since_fall is not None and since_fall < FRESH_STEPS:
                out["fresh start (1-5 after a fall)"].append(reward)
            elif abs(obs[2]) >= 0.05:
                out["leaning"].append(reward)
            else:
                where = "centred" if abs(obs[0]) < 0.5 else "drifted" if abs(obs[0]) < 1.5 else "far out"
                out[f"upright, {where}"].append(reward)
            if since_fall is not None and not info.get("fell"):
                since_fall += 1
            if terminated or truncated:
                break
        obs, _ = env.reset()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--noise", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=100)
    args = p.parse_args(argv)
    for run in args.runs:
        groups = groups_of(run, args.episodes, args.noise, args.seed)
        ordinary = np.array([r for name, rs in groups.items() if name != "fall" for r in rs])
        mean, sd = ordinary.mean(), ordinary.std() or 1.0
        cells = [f"{name}: {len(rs)} steps, {(np.mean(rs) - mean) / sd:+.2f} sd" if rs else f"{name}: none"
                 for name, rs in groups.items()]
        print(f"{run}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does a saved CartPole predictor order whole behaviours as the task does? (issue 39, H38, docs/results/cartpole.md
session 24)

    PYTHONPATH=. python experiments/cartpole_predictor_order.py RUN_DIR... [--fall_rule penalty] [--episodes 3]

Each run's saved predictor (drlhp.LearnedReward) pays fixed-length CartPole-v1 episodes (envs/fixed_length.py, the
given fall rule) played by five scripted policies: a balancer (push toward the pole's lean, theta + 0.5 theta_dot),
the same with a random action 30% of the time, always left, always right, and random actions. Printed per policy:
the predicted return an episode, the task's return (info["reward_task"]) and the cart's largest |x|. A predictor
that a collapsed policy fooled would pay a constant push more than the balancer.
"""
from __future__ import annotations

import argparse

import numpy as np

from drlhp.learned_reward import LearnedReward
from envs.fixed_length import FALL_RULES, fixed_length_env


def balancer(obs, rng) -> int:
    """Push toward the pole's lean (theta + 0.5 theta_dot), as cartpole_fresh_starts.py's scripted balancer."""
    return int(obs[2] + 0.5 * obs[3] > 0)


POLICIES = {
    "balancer": balancer,
    "noisy balancer (0.3)": lambda obs, rng: int(rng.integers(2)) if rng.random() < 0.3 else balancer(obs, rng),
    "always left": lambda obs, rng: 0,
    "always right": lambda obs, rng: 1,
    "random": lambda obs, rng: int(rng.integers(2)),
}


def play(run: str, policy, fall_rule: str, episodes: int, seed: int = 0) -> tuple[float, float, float]:
    """(mean predicted return, mean task return, largest |x|) over ``episodes`` episodes of ``policy``."""
    env = LearnedReward(fixed_length_env("CartPole-v1", fall_rule=fall_rule), run, center=0)
    rng = np.random.default_rng(seed)
    predicted, task, far = [], [], 0.0
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed * 100 + episode)
        p = t = 0.0
        while True:
            obs, reward, terminated, truncated, info = env.step(policy(obs, rng))
            p, t, far = p + reward, t + info.get("reward_task", 0.0), max(far, abs(float(obs[0])))
            if terminated or truncated:
                break
        predicted.append(p)
        task.append(t)
    env.close()
    return float(np.mean(predicted)), float(np.mean(task)), far


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+")
    p.add_argument("--fall_rule", choices=FALL_RULES, default="penalty")
    p.add_argument("--episodes", type=int, default=3)
    args = p.parse_args(argv)
    for run in args.runs:
        for name, policy in POLICIES.items():
            predicted, task, far = play(run, policy, args.fall_rule, args.episodes)
            print(f"{run}  {name:22s} predicted {predicted:9.1f} an episode, task {task:7.1f}, max |x| {far:6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

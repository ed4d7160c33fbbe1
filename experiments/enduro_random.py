#!/usr/bin/env python
"""Issue 62's random-policy row: Enduro's goal figures (envs.enduro.figures: passes either way, the share of steps
level with a car, crashes) over whole episodes of a uniformly random policy, measured exactly as ``watch
--oracle_goal pref_interface.goals:enduro_with_cars`` measures a trained one (the same env, worker 0's RAM and rewards
after each step: drlhp/run/modes.py's _GameRecord).

    python experiments/enduro_random.py [--episodes 5] [--seed 100]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout

ENDURO = "EnduroNoFrameskip-v4"


def random_figures(episodes: int, seed: int) -> list[dict]:
    from drlhp.run.modes import _GameRecord
    from envs import make_vec_env
    from envs.enduro import figures

    env = _GameRecord(make_vec_env(ENDURO, 1, n_threads=1, watch_steps=1))
    rng = np.random.default_rng(seed)
    try:
        env.reset(seed)
        while len(env.episodes) < episodes:
            env.step(rng.integers(0, env.n_actions, 1))
    finally:
        env.close()
    return [{**figures(ram, rewards), "steps": len(rewards), "score": float(np.sum(rewards))}
            for ram, rewards in env.episodes]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=5)
    p.add_argument("--seed", type=int, default=100)
    args = p.parse_args(argv)
    per = random_figures(args.episodes, args.seed)
    for i, f in enumerate(per):
        print(f"episode {i}: {json.dumps(f)}")
    means = {k: float(np.mean([f[k] for f in per])) for k in per[0]}
    print(f"random policy, {ENDURO}, seed {args.seed}, {len(per)} episodes: means {json.dumps(means)}")


if __name__ == "__main__":
    main()

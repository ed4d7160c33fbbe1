"""Issue 30's measure without rendering: a PPO checkpoint of a backflip run plays N episodes by its mean action (as
`run.py watch` does, numpy only) in the goal's env, and the full backward rotations of the torso are counted per
episode (pref_interface.goals.count_backflips on the pitch, obs[:, 1]); also the torso's height (obs[:, 0]) over all
episodes: its median and the share of steps above 0.8 m (standing: 1.25 m).
    python docs/experiments/count_backflips.py RUN_DIR [--episodes 5] [--seed 100]"""
import argparse
import json

import numpy as np

from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.watch import BoxMeanPolicy, play_box_episodes
from envs.fixed_length import any_vector_env
from pref_interface.goals import count_backflips

p = argparse.ArgumentParser()
p.add_argument("run_dir")
p.add_argument("--episodes", type=int, default=5)
p.add_argument("--seed", type=int, default=100)
args = p.parse_args()
arrays, meta = load_policy_checkpoint(args.run_dir)
env = any_vector_env("Hopper-v5", 1, terminate_when_unhealthy=False).envs[0]
space = env.action_space
policy = BoxMeanPolicy(arrays, env.observation_space.shape[0], space.low, space.high, 10.0)
_, returns, observations = play_box_episodes(env, policy, args.episodes, args.seed, render=False)
flips = [count_backflips(o[:, 1]) for o in observations]
heights = np.concatenate([o[:, 0] for o in observations])
print(json.dumps({"run": args.run_dir, "checkpoint": str(meta["path"]), "timesteps": meta.get("timesteps"),
                  "seed": args.seed, "backflips_per_episode": flips, "mean": float(np.mean(flips)),
                  "height_median_m": round(float(np.median(heights)), 2),
                  "share_above_0.8m": round(float(np.mean(heights > 0.8)), 2),
                  "true_returns": [round(r, 1) for r in returns]}))

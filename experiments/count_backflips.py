"""Issue 30's and issue 40's measures without rendering: a PPO checkpoint of a backflip run plays N episodes by its
mean action (as `run.py watch` does, numpy only) in the goals' env, and each episode is measured by the Hopper goals'
own measures, the functions `watch` reports (pref_interface.goals: hopper_backflip's "backflips", the full backward
turns of the torso; hopper_landed_backflip's "landed_backflips", those made in the air and landed on the foot);
also the torso's height (obs[:, 0]) over all episodes: its median and the share of steps above 0.8 m (standing: 1.25 m).
    python experiments/count_backflips.py RUN_DIR [--episodes 5] [--seed 100]"""
import argparse
import json

import numpy as np

from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
from drlhp.policy.watch import play_box_episodes
from envs.fixed_length import any_vector_env
from pref_interface.goal_oracle import measure_of
from pref_interface.goals import hopper_backflip, hopper_landed_backflip

p = argparse.ArgumentParser()
p.add_argument("run_dir")
p.add_argument("--episodes", type=int, default=5)
p.add_argument("--seed", type=int, default=100)
args = p.parse_args()
arrays, meta = load_policy_checkpoint(args.run_dir)
env = any_vector_env("Hopper-v5", 1, **hopper_backflip.env_kwargs).envs[0]  # both goals' env
space = env.action_space
policy = BoxMeanPolicy(arrays, env.observation_space.shape[0], space.low, space.high, 10.0)
_, returns, observations = play_box_episodes(env, policy, args.episodes, args.seed)
measured = {}
for goal in (hopper_backflip, hopper_landed_backflip):
    name, measure = measure_of(goal)
    counts = [measure(o) for o in observations]
    measured.update({f"{name}_per_episode": counts, f"{name}_mean": float(np.mean(counts))})
heights = np.concatenate([o[:, 0] for o in observations])
print(json.dumps({"run": args.run_dir, "checkpoint": str(meta["path"]), "timesteps": meta.get("timesteps"),
                  "seed": args.seed, **measured,
                  "height_median_m": round(float(np.median(heights)), 2),
                  "share_above_0.8m": round(float(np.mean(heights > 0.8)), 2),
                  "true_returns": [round(r, 1) for r in returns]}))

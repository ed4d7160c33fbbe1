"""The random policy's true return on each MuJoCo task in drlhp's fixed-length episodes (envs/fixed_length.py): actions
drawn uniformly from the action space, 5 episodes per task (seeds 0-4). The table's normalized score is
(return - random) / (PPO on the true reward - random). Prints JSON lines.
    python docs/experiments/mujoco_random.py"""
import json

import numpy as np

from envs.fixed_length import fixed_length_env

TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")
for task in TASKS:
    env = fixed_length_env(task)
    returns = []
    for seed in range(5):
        env.reset(seed=seed)
        env.action_space.seed(seed)
        total, done = 0.0, False
        while not done:
            _, r, term, trunc, _ = env.step(env.action_space.sample())
            total += r
            done = term or trunc
        returns.append(total)
    env.close()
    print(json.dumps({"task": task, "random_return": round(float(np.mean(returns)), 1),
                      "std": round(float(np.std(returns)), 1)}))

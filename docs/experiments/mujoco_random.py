"""The random policy's true return on each MuJoCo task in drlhp's fixed-length episodes (envs/fixed_length.py): actions
drawn uniformly from the action space, 5 episodes per task (seeds 0-4). The table's normalized score is
(return - random) / (PPO on the true reward - random). Prints JSON lines: the return with the control cost
(random_return) and without it (random_task_return, info["reward_task"]: the paper's measure).
    python docs/experiments/mujoco_random.py"""
import json

import numpy as np

from envs.fixed_length import fixed_length_env

TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")
for task in TASKS:
    env = fixed_length_env(task)
    returns, task_returns = [], []
    for seed in range(5):
        env.reset(seed=seed)
        env.action_space.seed(seed)
        total, task_total, done = 0.0, 0.0, False
        while not done:
            _, r, term, trunc, info = env.step(env.action_space.sample())
            total += r
            task_total += info["reward_task"]
            done = term or trunc
        returns.append(total)
        task_returns.append(task_total)
    env.close()
    print(json.dumps({"task": task, "random_return": round(float(np.mean(returns)), 1),
                      "std": round(float(np.std(returns)), 1),
                      "random_task_return": round(float(np.mean(task_returns)), 1)}))

"""Falls and task return of 5 episodes of each run's final Hopper policy by its mean action (seed 100, the reset
rule; session 21, H32):
    PYTHONPATH=. python experiments/mujoco_falls.py RUN_DIR..."""
import sys

import numpy as np

from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
from envs.fixed_length import any_vector_env

for run in sys.argv[1:]:
    arrays, meta = load_policy_checkpoint(run)
    env = any_vector_env("Hopper-v5", 1).envs[0]
    pol = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
    falls, rets = [], []
    obs, _ = env.reset(seed=100)
    for _ in range(5):
        f = r = 0
        while True:
            obs, rew, term, trunc, info = env.step(pol.act_deterministic(obs[None])[0])
            f += bool(info.get("fell"))
            r += info.get("reward_task", rew)
            if term or trunc:
                break
        falls.append(f)
        rets.append(round(r))
        obs, _ = env.reset()
    print(run, "falls", falls, "mean", np.mean(falls), "task returns", rets)

"""Issue 29's second measure: each run's final PPO checkpoint plays N episodes of its task as it played in training
(box_replay.py: Gaussian actions, the mean plus the learned spread, clipped to the action box; numpy only), and the
return is taken both ways from the same episodes: with the control cost (the env's reward, the issue's measure) and
without it (info["reward_task"], the paper's: A.1 removed torque penalties from the tasks, and rl-teacher paid its RL
baseline the same). One JSON line per run, appended to OUT (runs/mujoco/replay.jsonl); a run already there is
skipped. The random policy's two returns: experiments/mujoco_random.py.
With ``--fall_rule end`` the episodes are gymnasium's own (a fall ends one): the measure issue 38's H26 compares the
fall rules by (each rule's own return counts a fall differently); ``standard_return`` is gymnasium's own reward
(info["reward_standard"]), ``length`` the mean episode length. ``--deterministic``: the Gaussian's mean alone, no
spread (how the SB3 zoo's published figures are measured: its benchmark evaluates deterministically). A run is keyed
by (run, fall rule, deterministic, episodes).
    python experiments/mujoco_replay_returns.py RUN_DIR... [--episodes 100] [--seed 100] [--fall_rule end]
        [--deterministic] [--out FILE]"""
import argparse
import json
from pathlib import Path

import numpy as np

from box_replay import ReplayPolicy, replay_steps
from envs.fixed_length import fixed_length_env

p = argparse.ArgumentParser()
p.add_argument("run_dirs", nargs="+")
p.add_argument("--episodes", type=int, default=100)
p.add_argument("--seed", type=int, default=100)
p.add_argument("--out", default="runs/mujoco/replay.jsonl")
p.add_argument("--fall_rule", default=None, help="the episodes' fall rule (default: the run's own)")
p.add_argument("--deterministic", action="store_true", help="act by the Gaussian's mean, without its spread")
args = p.parse_args()
out = Path(args.out)
done = ({(d["run"], d.get("fall_rule"), d.get("deterministic", False), d.get("episodes")) for d in map(
    json.loads, out.read_text().splitlines())} if out.exists() else set())
for run_dir in args.run_dirs:
    cfg = json.loads((Path(run_dir) / "config.json").read_text())
    rule = args.fall_rule or cfg["ppo"].get("fall_rule", "reset")
    if (run_dir, rule, args.deterministic, args.episodes) in done:
        continue
    hold = cfg["ppo"].get("fall_hold_steps", 0) if rule == "penalty" else 0  # H48's rule: the run's own hold
    env = fixed_length_env(cfg["env"], cfg["ppo"].get("fall_penalty", 100.0), fall_rule=rule,
                           fall_step_penalty=cfg["ppo"].get("fall_step_penalty", 1.0), fall_hold_steps=hold)
    policy = ReplayPolicy(run_dir, env, deterministic=args.deterministic)
    std = policy.std
    env_returns, task_returns, standard_returns, lengths = [], [], [], []
    env_total = task_total = standard_total = 0.0
    length = 0
    for reward, info, ended in replay_steps(env, policy, args.episodes, args.seed):
        env_total += reward
        task_total += float(info["reward_task"])
        standard_total += float(info.get("reward_standard", reward))
        length += 1
        if ended:
            env_returns.append(env_total)
            task_returns.append(task_total)
            standard_returns.append(standard_total)
            lengths.append(length)
            env_total = task_total = standard_total = 0.0
            length = 0
    env.close()
    line = {"run": run_dir, "task": cfg["env"], "fall_rule": rule, "timesteps": policy.timesteps,
            "episodes": args.episodes, "env_return": round(float(np.mean(env_returns)), 2),
            "task_return": round(float(np.mean(task_returns)), 2),
            "standard_return": round(float(np.mean(standard_returns)), 2), "length": round(float(np.mean(lengths)), 1),
            "std": [round(float(s), 3) for s in std]}
    if args.deterministic:
        line["deterministic"] = True
    print(json.dumps(line), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(line) + "\n")

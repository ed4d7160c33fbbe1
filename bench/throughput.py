#!/usr/bin/env python
"""Agent steps per second on this machine, each part of the policy loop measured in one run.

    python bench/throughput.py --env PongNoFrameskip-v4 [--seconds 20] [--json OUT] [--compare_vec_envs]

Measures, one after another (never two at once), with the default A2C shape (16 envs x 5 steps):
  env       stepping the vector env with random actions
  act       the policy's forward pass alone (batch of n_envs, compiled tf.function)
  train     the A2C update alone (batch n_envs * n_steps)
  a2c       the whole loop with original rewards: rollout (act + env) + reward + update
and prints each figure and the ratios between them. --compare_vec_envs also measures gymnasium's
AsyncVectorEnv with AtariPreprocessing (the alternative to ale-py's AtariVectorEnv).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402


def timed(fn, seconds: float, per_call: int, warmup: int = 3) -> float:
    """Calls fn() for about `seconds` after `warmup` calls; returns items per second."""
    for _ in range(warmup):
        fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n * per_call / (time.perf_counter() - t0)


def bench_env(env_id: str, n_envs: int, seconds: float) -> float:
    import envs

    vec = envs.make_vec_env(env_id, n_envs)
    vec.reset(0)
    rng = np.random.default_rng(0)
    rate = timed(lambda: vec.step(rng.integers(0, vec.n_actions, n_envs)), seconds, n_envs)
    vec.close()
    return rate


def _make_gymnasium_atari(env_id: str):
    """One gymnasium Atari env with the same preprocessing (runs in a spawned worker)."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    return FrameStackObservation(AtariPreprocessing(gym.make(env_id), noop_max=30, frame_skip=4,
                                                    screen_size=84), 4)


def bench_gymnasium_async(env_id: str, n_envs: int, seconds: float) -> float:
    import functools

    import gymnasium as gym

    vec = gym.vector.AsyncVectorEnv([functools.partial(_make_gymnasium_atari, env_id)] * n_envs, context="spawn")
    vec.reset(seed=0)
    rate = timed(lambda: vec.step(vec.action_space.sample()), seconds, n_envs)
    vec.close()
    return rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--n_envs", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20.0, help="per measurement")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--compare_vec_envs", action="store_true")
    args = p.parse_args()

    from drlhp.tf_setup import configure_tensorflow

    tf = configure_tensorflow(2, 1, seed=0)
    import envs
    from drlhp.a2c import A2CPolicy
    from drlhp.config import A2CConfig
    from drlhp.reward_source import ClippedEnvReward
    from drlhp.rollout import RolloutRunner

    cfg = A2CConfig(n_envs=args.n_envs)
    figures: dict[str, float] = {}
    print(f"# {args.env}, {args.n_envs} envs x {cfg.n_steps} steps, {os.cpu_count()} cores, "
          f"TF {tf.__version__}, {platform.processor() or platform.machine()}", flush=True)

    figures["env_steps_per_s"] = bench_env(args.env, args.n_envs, args.seconds)
    print(f"env alone (AtariVectorEnv / MovingDot vec env): {figures['env_steps_per_s']:8.0f} agent steps/s", flush=True)
    if args.compare_vec_envs and args.env.endswith("NoFrameskip-v4"):
        figures["gymnasium_async_env_steps_per_s"] = bench_gymnasium_async(args.env, args.n_envs, args.seconds)
        print(f"env alone (gymnasium AsyncVectorEnv):  {figures['gymnasium_async_env_steps_per_s']:8.0f} agent steps/s",
              flush=True)

    vec = envs.make_vec_env(args.env, args.n_envs)
    policy = A2CPolicy(vec.obs_shape, vec.n_actions, cfg, seed=0)
    obs = vec.reset(0)
    figures["act_steps_per_s"] = timed(lambda: policy.act(obs), args.seconds, args.n_envs)
    print(f"policy inference alone:               {figures['act_steps_per_s']:8.0f} agent steps/s", flush=True)

    batch = cfg.n_envs * cfg.n_steps
    b_obs = np.repeat(obs, cfg.n_steps, axis=0)
    b_act = np.zeros(batch, np.int32)
    b_ret = np.zeros(batch, np.float32)
    figures["train_steps_per_s"] = timed(lambda: policy.train(b_obs, b_act, b_ret, 1e-9), args.seconds, batch)
    figures["train_step_ms"] = 1e3 * batch / figures["train_steps_per_s"]
    print(f"A2C update alone:                     {figures['train_steps_per_s']:8.0f} agent steps/s "
          f"({figures['train_step_ms']:.1f} ms per update of {batch})", flush=True)

    runner = RolloutRunner(vec, policy, ClippedEnvReward(), cfg.n_steps, cfg.gamma, seed=0)
    parts = {"env_s": 0.0, "act_s": 0.0, "reward_s": 0.0, "train_s": 0.0}

    def a2c_update():
        r = runner.run()
        t0 = time.perf_counter()
        policy.train(r.b_obs, r.b_actions, r.b_returns, 1e-9)
        parts["train_s"] += time.perf_counter() - t0
        for k in ("env_s", "act_s", "reward_s"):
            parts[k] += getattr(r, k)

    for _ in range(3):
        a2c_update()
    parts.update({k: 0.0 for k in parts})
    t0 = time.perf_counter()
    figures["a2c_steps_per_s"] = timed(a2c_update, args.seconds, batch, warmup=0)
    total = time.perf_counter() - t0
    vec.close()
    print(f"A2C with original rewards (whole loop): {figures['a2c_steps_per_s']:6.0f} agent steps/s", flush=True)
    print("  time in the loop: " + ", ".join(f"{k[:-2]} {100 * v / total:.0f}%" for k, v in parts.items()) +
          f", other {100 * (1 - sum(parts.values()) / total):.0f}%")
    for k, v in parts.items():
        figures[f"a2c_time_frac_{k[:-2]}"] = v / total

    print("ratios:")
    print(f"  a2c / env alone        {figures['a2c_steps_per_s'] / figures['env_steps_per_s']:.2f}")
    print(f"  a2c / inference alone  {figures['a2c_steps_per_s'] / figures['act_steps_per_s']:.2f}")
    if "gymnasium_async_env_steps_per_s" in figures:
        print(f"  AtariVectorEnv / AsyncVectorEnv  "
              f"{figures['env_steps_per_s'] / figures['gymnasium_async_env_steps_per_s']:.2f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"env": args.env, "n_envs": args.n_envs, **figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()

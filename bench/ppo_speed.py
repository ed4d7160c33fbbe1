#!/usr/bin/env python
"""PPO's own cost per agent step on Hopper-v5, against the issue's target: 1M agent steps from preferences in at
most 15 minutes on 2 cores.

    python bench/ppo_speed.py [--env Hopper-v5] [--n_envs 8] [--seconds 5] [--updates 3] [--threads 1]

Prints the CPU model, then for ``--n_envs`` fixed-length envs (envs/fixed_length.py) in gymnasium's SyncVectorEnv:

env        agent steps/s of the vector env alone (random actions)
act        agent steps/s of PPOPolicy.act alone (observation normalization, the two MLPs in numpy on n_envs
           observations, the sample and its clip); beside it, the same two networks in one tf.function call
update     seconds of one PPOPolicy.learn on a 2,048-step rollout (reward scaling, GAE, 10 epochs x 32 minibatches)
           in one compiled call (fused_update, the default), and with one compiled call per minibatch step
loop       agent steps/s of collection + update together (RolloutCollector.run + learn), as PPOTrainer runs them

and the projected minutes for 1M agent steps: env + act per step, plus an update per 2,048 steps; without the
reward predictor's forward pass and training, which the pipeline adds. Each figure is given as wall time and as
this process's CPU time (``time.process_time``): on a machine shared with other work the wall figure is the
contended one, the CPU figure what the work itself costs (comparable across loads; with --threads 1, one core's).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)
from mujoco_render import timed  # noqa: E402  (calls for about N seconds: calls, wall s, CPU s)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--n_envs", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5.0, help="time per figure (env, act)")
    p.add_argument("--updates", type=int, default=3, help="updates timed (after one warm-up)")
    p.add_argument("--loop_rollouts", type=int, default=3, help="rollouts of the whole loop timed")
    p.add_argument("--threads", type=int, default=1, help="TensorFlow intra-op threads")
    args = p.parse_args(argv)
    os.environ.setdefault("MUJOCO_GL", "egl")

    from drlhp.processes.cpu import cpu_model
    from drlhp.processes.tf_setup import configure_tensorflow, kernels_in_use

    configure_tensorflow(args.threads, 1, seed=0)
    import numpy as np

    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy
    from drlhp.policy.ppo.rollout import RolloutCollector
    from envs.fixed_length import describe, fixed_length_vector_env

    cfg = PPOConfig(n_envs=args.n_envs, n_steps=2048 // args.n_envs)
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load average {os.getloadavg()[0]:.2f}; "
          f"TensorFlow {kernels_in_use()}, {args.threads} intra-op thread(s)")
    print(describe(args.env))
    envs = fixed_length_vector_env(args.env, args.n_envs)
    envs.reset(seed=0)
    envs.action_space.seed(0)
    n = args.n_envs

    calls, wall, cpu = timed(lambda: envs.step(envs.action_space.sample()), args.seconds)
    env_wall, env_cpu = wall / (calls * n), cpu / (calls * n)  # seconds per agent step
    print(f"env     {1 / env_wall:8,.0f} agent steps/s wall, {1 / env_cpu:8,.0f} per CPU-second "
          f"({n} envs, random actions)")

    space = envs.single_action_space
    policy = PPOPolicy(envs.single_observation_space.shape[0], space.shape[0], cfg, 0, space.low, space.high)
    obs = np.random.default_rng(0).normal(size=(n, policy.obs_dim)).astype(np.float32)
    calls, wall, cpu = timed(lambda: policy.act(obs), args.seconds)
    act_wall, act_cpu = wall / (calls * n), cpu / (calls * n)
    print(f"act     {1 / act_wall:8,.0f} agent steps/s wall, {1 / act_cpu:8,.0f} per CPU-second "
          f"({1e3 * wall / calls:.2f} ms wall per call on {n} observations; numpy)")
    import tensorflow as tf

    spec = tf.TensorSpec((n, policy.obs_dim), tf.float32)
    forward = tf.function(lambda x: (policy.actor(x), policy.critic(x)), autograph=False, input_signature=[spec])
    obs_norm = policy.normalize(obs, update=False)
    calls, wall, cpu = timed(lambda: [y.numpy() for y in forward(obs_norm)], args.seconds)
    print(f"  (the same forward pass as one tf.function call: {n * calls / wall:8,.0f} agent steps/s wall, "
          f"{n * calls / cpu:8,.0f} per CPU-second)")

    collector = RolloutCollector(envs, policy, seed=1)
    rollout = collector.run()
    steps = cfg.n_epochs * cfg.n_minibatches
    stepwise = PPOPolicy(policy.obs_dim, policy.act_dim, dataclasses.replace(cfg, fused_update=False), 0)
    for name, learner in (("fused", policy), ("per minibatch step", stepwise)):
        learner.learn(rollout, rollout.rewards, cfg.lr)  # traces
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.updates):
            learner.learn(rollout, rollout.rewards, cfg.lr)
        wall, cpu = (time.perf_counter() - w0) / args.updates, (time.process_time() - c0) / args.updates
        if learner is policy:
            upd_wall, upd_cpu = wall, cpu
        print(f"update  {wall:8.2f} s wall, {cpu:.2f} CPU-s per {cfg.batch:,}-step rollout, {name} "
              f"({cfg.n_epochs} epochs x {cfg.n_minibatches} minibatches of {cfg.minibatch}: "
              f"{1e3 * wall / steps:.2f} ms wall, {1e3 * cpu / steps:.2f} ms CPU per minibatch step)")

    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(args.loop_rollouts):
        r = collector.run()
        policy.learn(r, r.rewards, cfg.lr)
    loop_wall = (time.perf_counter() - w0) / (args.loop_rollouts * cfg.batch)
    loop_cpu = (time.process_time() - c0) / (args.loop_rollouts * cfg.batch)
    print(f"loop    {1 / loop_wall:8,.0f} agent steps/s wall, {1 / loop_cpu:8,.0f} per CPU-second "
          f"(collection + update; traces {dict(policy.traces)})")

    million = 1_000_000
    for name, env_s, act_s, upd_s in (("wall", env_wall, act_wall, upd_wall), ("CPU", env_cpu, act_cpu, upd_cpu)):
        total = million * (env_s + act_s) + million / cfg.batch * upd_s
        print(f"1M agent steps ({name}): {total / 60:5.1f} min = env {million * env_s / 60:.1f} + act "
              f"{million * act_s / 60:.1f} + update {million / cfg.batch * upd_s / 60:.1f} "
              f"(the whole loop measured: {million * (loop_wall if name == 'wall' else loop_cpu) / 60:.1f} min); "
              f"the reward predictor not included")


if __name__ == "__main__":
    main()

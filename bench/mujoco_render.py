#!/usr/bin/env python
"""What it costs to show a person MuJoCo clips: ms per frame re-rendered offscreen from recorded states
(envs/mujoco_render.py, Mesa's software EGL: no display, no GPU), against the physics it shows.

    python bench/mujoco_render.py [--envs Hopper-v5 HalfCheetah-v5] [--size 256] [--seconds 5] [--clip_seconds 1.5]
                                    [--show_fps 30]

Prints the CPU model and the OpenGL backend, then per task:

render     ms per frame of StateRenderer.render at --size x --size, at each quality (envs/mujoco_render.py's
           QUALITIES: "task" is gymnasium's look, "fast" a smaller shadow map and no multisampling); wall and this
           process's CPU time (Mesa's llvmpipe may draw on threads of its own: CPU > wall then)
record     microseconds per record_state call (what the policy's process pays per env step)
step       microseconds per env step (gymnasium's, random actions): the physics, for scale
label      the frames and ms one label costs: two clips of --clip_seconds at the task's own rate (1 / env.dt),
           and at most --show_fps frames a second (every k-th state, each shown k steps long)

Run it niced on a shared machine; the wall figure is then the contended one, the CPU figure the work's own.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn, seconds: float, min_calls: int = 3):
    """Call ``fn`` for about ``seconds`` (after one warm-up call): (calls, wall s, CPU s)."""
    fn()
    calls, w0, c0 = 0, time.perf_counter(), time.process_time()
    while calls < min_calls or time.perf_counter() - w0 < seconds:
        fn()
        calls += 1
    return calls, time.perf_counter() - w0, time.process_time() - c0


def recorded_clip(env_id: str, steps: int, seed: int = 0):
    """States of ``steps`` steps of random actions (reset where the task ends), the env's dt, and the env."""
    import gymnasium as gym
    import numpy as np

    from envs.mujoco_render import record_state

    env = gym.make(env_id)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states = []
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        states.append(record_state(env))
        if terminated or truncated:
            env.reset()
    return np.array(states), float(env.unwrapped.dt), env


def bench_env(env_id: str, size: int, seconds: float, clip_seconds: float, show_fps: float) -> None:
    from envs.mujoco_render import QUALITIES, StateRenderer, record_state

    states, dt, env = recorded_clip(env_id, 64)
    print(f"{env_id}")
    ms_wall = {}
    for quality in QUALITIES:
        renderer = StateRenderer(env_id, size, size, quality=quality)
        calls, wall, cpu = timed(lambda: renderer.render(states), seconds)
        renderer.close()
        frames = calls * len(states)
        ms_wall[quality] = 1e3 * wall / frames
        print(f"  render  {ms_wall[quality]:7.2f} ms/frame wall, {1e3 * cpu / frames:7.2f} ms CPU at {size}x{size}, "
              f"quality {quality!r} ({frames:,} frames)")
    n, wall, _ = timed(lambda: record_state(env), 0.5, min_calls=1000)
    print(f"  record  {1e6 * wall / n:7.2f} us per state (nq + nv = {states.shape[1]})")
    action = env.action_space.sample()
    n, wall, _ = timed(lambda: env.unwrapped.step(action), 1.0, min_calls=100)
    print(f"  step    {1e6 * wall / n:7.1f} us per env step (dt {dt:g} s)")
    per_clip = round(clip_seconds / dt)
    stride = max(1, math.ceil((1 / dt) / show_fps))
    shown = math.ceil(per_clip / stride)
    costs = ", ".join(f"{quality} {2 * shown * ms / 1e3:.1f} s" for quality, ms in ms_wall.items())
    print(f"  label   2 clips x {per_clip} steps ({clip_seconds:g} s at {1 / dt:g} steps/s), every {stride}th "
          f"state shown: {2 * shown} frames per label; wall {costs}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--envs", nargs="+", default=["Hopper-v5", "HalfCheetah-v5"])
    p.add_argument("--size", type=int, default=256, help="frame width and height, pixels")
    p.add_argument("--seconds", type=float, default=5.0, help="time per render figure")
    p.add_argument("--clip_seconds", type=float, default=1.5, help="a clip's length (the paper's 1.5 s)")
    p.add_argument("--show_fps", type=float, default=30.0, help="at most this many frames a second shown")
    args = p.parse_args(argv)
    import envs.mujoco_render  # noqa: F401  (sets MUJOCO_GL before mujoco is imported)
    from drlhp.processes.cpu import cpu_model

    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load average {os.getloadavg()[0]:.2f}; "
          f"MUJOCO_GL={os.environ.get('MUJOCO_GL')} PYOPENGL_PLATFORM={os.environ.get('PYOPENGL_PLATFORM')}")
    for env_id in args.envs:
        bench_env(env_id, args.size, args.seconds, args.clip_seconds, args.show_fps)


if __name__ == "__main__":
    main()

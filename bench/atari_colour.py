#!/usr/bin/env python
"""What colour frames for a person cost on Atari (issue 62, part 1), the figures behind envs/atari_watch.py's design.

    python bench/atari_colour.py [--games pong enduro] [--steps 600] [--n_envs 8] [--clips 20]

For each game, on random play (Enduro: mostly accelerating, so that cars come and go):

  follow    CPU time (this process and the vector env's threads) per vector step of ale-py's AtariVectorEnv
            (--n_envs workers, the policy's 84x84 grey stacks) alone and with a ColourWatch following
            WATCHED_WORKERS of its workers (envs/atari_watch.py): what a person's run pays every step
  replay    the other design, re-drawing only the clips a person is shown from where their episode started (possible:
            checked here, a fresh emulator replays an episode's colour frames exactly): the CPU a lone emulator takes
            per agent step, so what one clip costs when it starts 1,000, 5,000 or 27,000 (the 30-minute limit) agent
            steps into its episode
  bytes     a clip of 25 steps: raw colour (25 x 210 x 160 x 3) and zlib level 1 (what the segment pool keeps), the
            median and largest of --clips clips; and the watch's frames per watched worker for the atari preset's
            PPO rollouts (128 steps + a clip) and A2C's (5 + a clip)

Everything runs at the priority it is started with (run it with nice on a shared machine; CPU time, not wall time,
is what is compared).
"""
from __future__ import annotations

import argparse
import statistics
import time
import zlib

import numpy as np

from envs.atari import AtariVecEnv
from envs.atari_ids import atari_env_id, atari_game
from envs.atari_watch import FRAME_BYTES, WATCHED_WORKERS, ColourWatch

CLIP = 25  # agent steps per clip (the paper's, the atari preset's)


def actions_for(game: str, rng, n_actions: int, n: int) -> np.ndarray:
    a = rng.integers(0, n_actions, n)
    if game == "enduro":  # FIRE accelerates: a car that moves meets others
        a[rng.random(n) < 0.7] = 1
    return a


def follow_cost(env_id: str, n_envs: int, steps: int, watched: bool) -> float:
    """CPU ms per vector step, with or without the watch."""
    game = atari_game(env_id)
    env = AtariVecEnv(env_id, n_envs, n_threads=0, watch_steps=CLIP + 128 if watched else 0)
    rng = np.random.default_rng(0)
    try:
        env.reset(0)
        for _ in range(50):
            env.step(actions_for(game, rng, env.n_actions, n_envs))
        t0 = time.process_time()
        for _ in range(steps):
            env.step(actions_for(game, rng, env.n_actions, n_envs))
        return 1e3 * (time.process_time() - t0) / steps
    finally:
        env.close()


def replay_check_and_cost(env_id: str, steps: int) -> tuple[bool | None, float]:
    """(whether a fresh emulator replays the second episode of a worker exactly, from its start; None: no second
    episode within the steps), CPU ms per agent step of one emulator."""
    game = atari_game(env_id)
    env = AtariVecEnv(env_id, 1, n_threads=1, score_visible=True, watch_steps=steps)
    rng = np.random.default_rng(1)
    actions, starts, start_frames = [], [0], []
    try:
        env.reset(3)
        for t in range(steps):
            a = actions_for(game, rng, env.n_actions, 1)
            actions.append(int(a[0]))
            if env.step(a).done[0]:
                starts.append(t + 1)
                start_frames.append(env.watch._ales[0].getEpisodeFrameNumber())
            if len(starts) == 3:
                break
        if len(starts) < 3:
            replays = None
        else:
            n = starts[2] - starts[1]
            truth = env.watch.frames(0, len(actions) - starts[2], n)
            fresh = ColourWatch(env_id, game, [0], n, 4, 30, 108_000, score_visible=True)
            fresh.reset(3, np.array([start_frames[0]]))
            replays = True
            for k in range(n):
                fresh.act(np.array([actions[starts[1] + k]]))
                if not np.array_equal(fresh.frames(0, 0, 1)[0], truth[k]):
                    replays = False
                    break
    finally:
        env.close()
    lone = ColourWatch(env_id, game, [0], 1, 4, 30, 108_000)
    lone.reset(0, np.array([1]))
    t0 = time.process_time()
    for _ in range(steps):
        lone.act(actions_for(game, rng, 18, 1) % len(lone._actions))
    return replays, 1e3 * (time.process_time() - t0) / steps


def clip_bytes(env_id: str, clips: int) -> list[int]:
    """zlib level 1 sizes of ``clips`` colour clips of one worker, one every 3 clips' time."""
    game = atari_game(env_id)
    env = AtariVecEnv(env_id, 1, n_threads=1, watch_steps=CLIP)
    rng = np.random.default_rng(2)
    sizes = []
    try:
        env.reset(5)
        for _ in range(clips):
            for _ in range(3 * CLIP):
                env.step(actions_for(game, rng, env.n_actions, 1))
            sizes.append(len(zlib.compress(env.watch.frames(0, 0, CLIP).data, 1)))
    finally:
        env.close()
    return sizes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=["pong", "enduro"])
    p.add_argument("--steps", type=int, default=600, help="vector steps timed per measurement")
    p.add_argument("--n_envs", type=int, default=8, help="the vector env's workers (the atari preset's PPO: 8)")
    p.add_argument("--clips", type=int, default=20)
    args = p.parse_args()
    import os
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    print(f"{cpu}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, nice {os.nice(0)}")
    raw = CLIP * FRAME_BYTES
    ppo, a2c = (128 + CLIP) * FRAME_BYTES / 1e6, (5 + CLIP) * FRAME_BYTES / 1e6
    print(f"a clip: {raw:,} bytes raw colour; the watch keeps {FRAME_BYTES:,} bytes a step per watched worker: "
          f"{ppo:.1f} MB for PPO's rollouts of 128 steps, {a2c:.1f} MB for A2C's of 5; {WATCHED_WORKERS} watched")
    for game in args.games:
        env_id = atari_env_id(game)
        alone = follow_cost(env_id, args.n_envs, args.steps, False)
        watched = follow_cost(env_id, args.n_envs, args.steps, True)
        replays, per_step = replay_check_and_cost(env_id, 4 * args.steps)
        sizes = clip_bytes(env_id, args.clips)
        print(f"{env_id}: follow: {alone:.2f} ms CPU per vector step of {args.n_envs} alone, {watched:.2f} with "
              f"{WATCHED_WORKERS} watched (+{(watched - alone) / WATCHED_WORKERS:.2f} ms per watched worker-step)")
        print(f"  replay: an episode replays exactly from its start: {replays}; a lone emulator {per_step:.2f} ms per "
              f"agent step, so a clip starting 1,000 / 5,000 / 27,000 steps into its episode costs "
              f"{per_step:.1f} / {5 * per_step:.1f} / {27 * per_step:.1f} s")
        print(f"  bytes: a clip zlib-1 median {statistics.median(sizes):,.0f}, largest {max(sizes):,} "
              f"(raw {raw:,}: {raw / statistics.median(sizes):.0f}x)")


if __name__ == "__main__":
    main()

"""``watch`` mode: play a saved policy and write a video of its episodes (mp4 or gif)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

VIDEO_SCALE = 4  # 84 px frames shown at 336 px, nearest neighbour
VIDEO_FPS = 15


def play_episodes(env, policy, n_episodes: int, seed: int, max_steps: int = 30_000):
    """Frames (what a person watches of each observation, ``env.frames_to_watch``: the newest frame of a
    stack, a vector env's bar chart) and the true returns of n episodes of env[0]."""
    frames, returns = [], []
    obs = env.reset(seed)
    frames.append(env.frames_to_watch(obs[0]))
    for _ in range(max_steps):
        actions, _ = policy.act(obs)
        step = env.step(actions)
        obs = step.obs
        for ep in step.finished:
            if ep.worker == 0:
                returns.append(ep.true_return)
        if len(returns) >= n_episodes:
            break
        frames.append(env.frames_to_watch(obs[0]))
    return frames, returns


def write_video(frames: list[np.ndarray], path: str | Path, fps: int = VIDEO_FPS) -> Path:
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    big = [np.repeat(np.repeat(f, VIDEO_SCALE, axis=0), VIDEO_SCALE, axis=1) for f in frames]  # (H, W[, 3])
    if path.suffix == ".gif":
        imageio.mimsave(path, big, duration=1000 / fps, loop=0)
    else:
        with imageio.get_writer(path, fps=fps, codec="libx264", macro_block_size=1) as w:
            for f in big:
                w.append_data(f if f.ndim == 3 else np.repeat(f[:, :, None], 3, axis=2))
    return path

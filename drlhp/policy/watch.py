"""``watch`` mode: play a saved policy and write a video of its episodes (mp4 or gif)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

VIDEO_SCALE = 4  # 84 px frames shown at 336 px, nearest neighbour
VIDEO_FPS = 15
MUJOCO_VIDEO_SIZE = 480  # pixels, square: gymnasium's default render size


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


def play_box_episodes(env, policy, n_episodes: int, seed: int, see=None):
    """PPO's watch on Box actions: what ``see(env)`` gives at each frame (the episode's start and after every step: e.g.
    ``record_state``, the simulator's state a video is drawn from, or ``env.render``; nothing where ``see`` is
    None), the returns, and each episode's observations ((T + 1, D): every one the env gave, its first to its last,
    for a goal's measure) of n episodes of one gymnasium env, the policy acting by its mean (``act_deterministic``:
    drlhp.policy.ppo.numpy_policy.BoxMeanPolicy)."""
    seen_at, returns, observations = [], [], []
    obs, _ = env.reset(seed=seed)
    seen = [obs]
    if see is not None:
        seen_at.append(see(env))
    total = 0.0
    while len(returns) < n_episodes:
        obs, reward, terminated, truncated, _ = env.step(policy.act_deterministic(obs[None])[0])
        total += float(reward)
        seen.append(obs)
        if see is not None:
            seen_at.append(see(env))
        if terminated or truncated:
            returns.append(total)
            observations.append(np.asarray(seen))
            total = 0.0
            if len(returns) < n_episodes:
                obs, _ = env.reset()
                seen = [obs]
    return seen_at, returns, observations


def followed_frames(env_id: str, states, env_kwargs: dict | None = None, size: int = MUJOCO_VIDEO_SIZE,
                    follow: bool = True, chunk: int = 64):
    """The frames of a MuJoCo video, drawn from the simulator's states (T, nq + nv) as a person's clips are
    (envs/mujoco_render.py's ``StateRenderer``: the task's camera, following the robot's torso with ``follow``, so a
    Hopper that hops away stays in the picture; gymnasium's own camera stays where it started). Yields (size, size,
    3) uint8 frames, ``chunk`` drawn at a time (a 2,001-frame video is never held whole)."""
    from envs.mujoco_render import StateRenderer

    renderer = StateRenderer(env_id, size, size, follow=follow, quality="task", env_kwargs=env_kwargs)
    try:
        states = np.asarray(states, np.float64)
        for start in range(0, len(states), chunk):
            yield from renderer.render(states[start:start + chunk])
    finally:
        renderer.close()


def write_video(frames, path: str | Path, fps: int = VIDEO_FPS, scale: int = VIDEO_SCALE) -> tuple[Path, int]:
    """The frames (any iterable: streamed into an mp4), each pixel repeated ``scale`` times each way (84 px Atari
    frames: 4; a rendered robot: 1). Returns the file and the frames written."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    big = (np.repeat(np.repeat(f, scale, axis=0), scale, axis=1) if scale != 1 else f for f in frames)  # (H, W[, 3])
    n = 0
    if path.suffix == ".gif":
        big = list(big)
        n = len(big)
        imageio.mimsave(path, big, duration=1000 / fps, loop=0)
    else:
        with imageio.get_writer(path, fps=fps, codec="libx264", macro_block_size=1) as w:
            for f in big:
                w.append_data(f if f.ndim == 3 else np.repeat(f[:, :, None], 3, axis=2))
                n += 1
    return path, n

"""How the score regions of ``envs.score_blanking`` were found, and what they look like: random play of
each game in its table, with what is drawn near each rectangle and what is blanked.

    python experiments/score_blanking_evidence.py --measure [GAME ...]   # per game, the rows near each rectangle
    python experiments/score_blanking_evidence.py --show docs/score_blanking.png   # every game, raw and blanked

A past experiment's script (docs/atari.md, "Score blanking"), not library code: until 2026-11-26 it was
envs/score_blanking_evidence.py, which nothing but this measurement used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
import envs  # noqa: E402
from envs.atari_ids import atari_env_id  # noqa: E402
from envs.score_blanking import FRAME_SIZE, SCORE_REGIONS, blank_score  # noqa: E402


def _random_frames(env_id: str, n_steps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Newest frames (n_steps, 84, 84) and true rewards of one env under random actions (Enduro:
    accelerating, so its odometer and car count move)."""
    vec = envs.make_vec_env(env_id, 1, n_threads=1)
    try:
        vec.reset(seed)
        rng = np.random.default_rng(seed)
        accelerate = np.array([1, 7, 8])  # FIRE, RIGHTFIRE, LEFTFIRE in Enduro's minimal action set
        frames, rewards = [], []
        for _ in range(n_steps):
            if env_id.startswith("Enduro"):
                action = rng.choice(accelerate, 1)
            else:
                action = rng.integers(0, vec.n_actions, 1)
            step = vec.step(action)
            frames.append(step.outcome_obs[0, ..., -1])
            rewards.append(step.true_reward[0])
        return np.stack(frames), np.array(rewards)
    finally:
        vec.close()


def measure(game: str, n_steps: int = 3000) -> None:
    """Print, for the rows of each region and two around it, where anything is drawn in random play
    and what is blanked."""
    frames, rewards = _random_frames(atari_env_id(game), n_steps)
    print(f"{game}: {n_steps} steps, {np.count_nonzero(rewards)} rewards; regions {SCORE_REGIONS[game]}\n"
          "  (#: drawn and blanked, x: drawn and kept, -: blanked but never drawn;\n"
          "   drawn: differs in some frame from the row's most common value)")
    regions = SCORE_REGIONS[game]
    rows = sorted({r for r0, r1, _, _ in regions for r in range(max(0, r0 - 2), min(FRAME_SIZE, r1 + 2))})
    for r in rows:
        line = frames[:, r, :]  # (T, 84)
        background = np.bincount(line.ravel()).argmax()
        drawn = (line != background).any(axis=0)
        blanked = [any(r0 <= r < r1 and c0 <= c < c1 for r0, r1, c0, c1 in regions)
                   for c in range(FRAME_SIZE)]
        marks = ("#" if b and d else "x" if d else "-" if b else " " for b, d in zip(blanked, drawn))
        print(f"  row {r:2d} |{''.join(marks)}|")


def show(path: str, n_steps: int = 400, scale: int = 3) -> None:
    """A PNG of one frame per game after ``n_steps`` of random play: raw on top (the blanked
    rectangles outlined in red, just outside them), blanked below, one column per game."""
    from PIL import Image, ImageDraw

    gap, label_h = 4, 14
    columns = []
    for game in SCORE_REGIONS:
        env_id = atari_env_id(game)
        frame = _random_frames(env_id, n_steps)[0][-1]
        blanked = blank_score(env_id, frame[..., None])[..., 0]
        raw = np.repeat(frame[..., None], 3, axis=-1)
        for r0, r1, c0, c1 in SCORE_REGIONS[game]:
            top, bottom = max(r0 - 1, 0), min(r1, FRAME_SIZE - 1)
            left, right = max(c0 - 1, 0), min(c1, FRAME_SIZE - 1)
            raw[top, left:right + 1] = raw[bottom, left:right + 1] = (255, 0, 0)
            raw[top:bottom + 1, left] = raw[top:bottom + 1, right] = (255, 0, 0)
        white = np.full((gap, FRAME_SIZE, 3), 255, np.uint8)
        columns.append(np.concatenate([raw, white, np.repeat(blanked[..., None], 3, axis=-1)], axis=0))
    white = np.full((columns[0].shape[0], gap, 3), 255, np.uint8)
    grid = np.concatenate([x for c in columns for x in (c, white)][:-1], axis=1)
    grid = np.kron(grid, np.ones((scale, scale, 1), np.uint8))
    image = Image.new("RGB", (grid.shape[1], grid.shape[0] + label_h), "white")
    image.paste(Image.fromarray(grid), (0, label_h))
    draw = ImageDraw.Draw(image)
    for k, game in enumerate(SCORE_REGIONS):
        draw.text((k * (FRAME_SIZE + gap) * scale + 2, 1), game, fill="black")
    image.save(path, optimize=True)
    print(f"wrote {path}: top raw (blanked area outlined in red), bottom blanked, {n_steps} random steps")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--show", metavar="PNG", help="write raw and blanked frames of every game in the table")
    p.add_argument("--measure", nargs="*", metavar="GAME", help="print what is drawn near each region")
    p.add_argument("--steps", type=int, default=None)
    args = p.parse_args(argv)
    if args.measure is not None:
        for game in args.measure or SCORE_REGIONS:
            measure(game, args.steps or 3000)
    if args.show:
        show(args.show, args.steps or 400)
    if args.measure is None and not args.show:
        p.print_help()


if __name__ == "__main__":
    main()

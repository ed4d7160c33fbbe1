"""Score blanking: what the reward predictor and the labeller must not read off an Atari screen.

Christiano et al. (2017), appendix A.2: Atari games show the score, from which the reward could be
read trivially, so the paper replaced the score area with a constant black background on all seven
games, and also blanked BeamRider's count of enemy ships left and Enduro's speedometer.
``SCORE_REGIONS`` is that table for this preprocessing (84x84 grayscale frames, ``envs/atari.py``):
per game, rectangles ``(row0, row1, col0, col1)``, half-open, in 84x84 coordinates, set to 0 (black,
as in the paper) in every frame of the stack. Zero is constant, so it carries no information even
where the game's own background is grey (Pong, Seaquest, Enduro's dashboard). docs/atari.md, "What
the predictor and the labeller see", has the table with what each rectangle hides.

The rectangles were measured on frames of random play (``python -m envs.score_blanking --measure``
prints, per game, where anything is ever drawn near each rectangle and what is blanked): each covers
the digits' extent plus one pixel where the neighbouring pixels are empty background. Where the
score has its rows to itself, the rectangle spans the full width (longer scores grow sideways into
it); where other things share those rows (Breakout's lives, Q*bert's falling balls, BeamRider's
torpedoes), it spans only the score's columns. Life counters stay visible: a lost life gives no
reward of its own, and the paper blanked only the score and the two counters above.
``python -m envs.score_blanking --show docs/score_blanking.png`` draws every game raw and blanked.
"""
from __future__ import annotations

import argparse

import numpy as np

from envs.atari_ids import atari_game

FRAME_SIZE = 84
Rect = tuple[int, int, int, int]  # (row0, row1, col0, col1), half-open, 84x84 coordinates

SCORE_REGIONS: dict[str, tuple[Rect, ...]] = {
    # both scores (rows 0-8); the ball and paddles stay below the top wall (rows 9-12)
    "pong": ((0, 9, 0, 84),),
    # the whole dashboard: odometer (it rolls with speed), day, cars still to pass
    "enduro": ((62, 78, 24, 60),),
    # the 3-digit score (rows 2-5, cols 18-41); lives (cols 52-58) and player number stay
    "breakout": ((1, 6, 17, 43),),
    # both scores (rows 4-7); the mothership flies in these rows while the score is hidden, and the
    # laser's tip passes through: both hidden there
    "space_invaders": ((3, 9, 0, 84),),
    # the score (rows 3-6, right-aligned at col 50); the reserve subs below (rows 8-11) stay
    "seaquest": ((2, 8, 0, 84),),
    # score and sector number (rows 4-11); enemy ships left (rows 12-15, cols 10-16), whose rows the
    # sentinel ship crosses once the count is gone; the torpedoes left (cols 67-77) stay
    "beam_rider": ((3, 12, 0, 84), (11, 17, 9, 18)),
    # the score (rows 2-5, cols 17-37); balls dropping onto the pyramid enter from col 38
    "qbert": ((1, 6, 16, 38),),
}


def score_regions(env_id: str) -> tuple[Rect, ...]:
    """The rectangles blanked for ``env_id`` ('PongNoFrameskip-v4'); () for any other env."""
    game = atari_game(env_id)
    return SCORE_REGIONS.get(game, ()) if game is not None else ()


def blank_score(env_id: str, obs: np.ndarray, inplace: bool = False) -> np.ndarray:
    """``obs`` with the score regions of ``env_id`` set to 0.

    ``obs``: any array whose last three dims are (84, 84, C): one stacked observation, a batch
    (N, 84, 84, C), a rollout (T, N, 84, 84, C). One slice assignment per rectangle, whatever the
    leading dims. ``inplace``: write into ``obs`` (for a buffer the caller owns) instead of a copy.
    Where the env has nothing to blank, returns ``obs`` itself, unchanged and uncopied.
    """
    regions = score_regions(env_id)
    if not regions:
        return obs
    if obs.ndim < 3 or obs.shape[-3:-1] != (FRAME_SIZE, FRAME_SIZE):
        raise ValueError(f"blank_score wants (..., {FRAME_SIZE}, {FRAME_SIZE}, C) arrays, got {obs.shape}")
    out = obs if inplace else obs.copy()
    for row0, row1, col0, col1 in regions:
        out[..., row0:row1, col0:col1, :] = 0
    return out


# ---- evidence: how the regions were found, and what they look like ---------------------------------

def _random_frames(env_id: str, n_steps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Newest frames (n_steps, 84, 84) and true rewards of one env under random actions (Enduro:
    accelerating, so its odometer and car count move)."""
    import envs

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


def env_id_of(game: str) -> str:
    return "".join(part.capitalize() for part in game.split("_")) + "NoFrameskip-v4"


def measure(game: str, n_steps: int = 3000) -> None:
    """Print, for the rows of each region and two around it, where anything is drawn in random play
    and what is blanked."""
    frames, rewards = _random_frames(env_id_of(game), n_steps)
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
        env_id = env_id_of(game)
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

"""Score blanking: what the reward predictor and the labeller must not read off an Atari screen.

Christiano et al. (2017), appendix A.2: Atari games show the score, from which the reward could be
read trivially, so the paper replaced the score area with a constant black background on all seven
games, and also blanked BeamRider's count of enemy ships left and Enduro's speedometer.
``SCORE_REGIONS`` is that table for this preprocessing (84x84 grayscale frames, ``envs/atari.py``):
per game, rectangles ``(row0, row1, col0, col1)``, half-open, in 84x84 coordinates, set to 0 (black,
as in the paper) in every frame of the stack. Zero is constant, so it carries no information even
where the game's own background is grey (Pong, Seaquest, Enduro's dashboard). docs/atari.md, "What
the predictor and the labeller see", has the table with what each rectangle hides.

The rectangles were measured on frames of random play (``python experiments/score_blanking_evidence.py --measure``
prints, per game, where anything is ever drawn near each rectangle and what is blanked): each covers
the digits' extent plus one pixel where the neighbouring pixels are empty background. Where the
score has its rows to itself, the rectangle spans the full width (longer scores grow sideways into
it); where other things share those rows (Breakout's lives, Q*bert's falling balls, BeamRider's
torpedoes), it spans only the score's columns. Life counters stay visible: a lost life gives no
reward of its own, and the paper blanked only the score and the two counters above.
``python experiments/score_blanking_evidence.py --show docs/score_blanking.png`` draws every game raw and blanked.

What a person watches of an Atari clip is the emulator's own colour frame, 210 x 160 (``envs/atari_watch.py``), blanked
by the same rectangles mapped onto it (``full_frame_rect``): each 84x84 rectangle becomes the full frame's pixels that
ale-py's area resize (OpenCV's INTER_AREA, 210 x 160 -> 84 x 84) averages into it, so nothing the predictor does not
see of the score shows on a person's screen, and at most a pixel row or column more is hidden around it.
"""
from __future__ import annotations

import numpy as np

from envs.atari_ids import atari_game

FRAME_SIZE = 84
SCREEN = (210, 160)  # the emulator's frame (rows, cols): what a person watches of an Atari game
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


def full_frame_rect(rect: Rect, size: tuple[int, int] = SCREEN) -> Rect:
    """An 84x84 rectangle on the emulator's frame of ``size`` (rows, cols): every full-frame pixel that the area
    resize averages into one of the rectangle's pixels. Pixel (r, c) of the 84x84 frame is the mean of the full
    frame's rows [r * H / 84, (r + 1) * H / 84) and columns [c * W / 84, (c + 1) * W / 84) (fractions weighted by
    overlap: INTER_AREA), so the rectangle's rows [r0, r1) take rows [floor(r0 * H / 84), ceil(r1 * H / 84))."""
    (row0, row1, col0, col1), (h, w) = rect, size
    return (row0 * h // FRAME_SIZE, -(-row1 * h // FRAME_SIZE), col0 * w // FRAME_SIZE, -(-col1 * w // FRAME_SIZE))


def blank_score(env_id: str, obs: np.ndarray, inplace: bool = False) -> np.ndarray:
    """``obs`` with the score regions of ``env_id`` set to 0.

    ``obs``: any array whose last three dims are (84, 84, C): one stacked observation, a batch
    (N, 84, 84, C), a rollout (T, N, 84, 84, C); or (210, 160, 3), the emulator's colour frames a person
    watches, blanked by the rectangles mapped onto them (``full_frame_rect``). One slice assignment per
    rectangle, whatever the leading dims. ``inplace``: write into ``obs`` (for a buffer the caller owns) instead
    of a copy. Where the env has nothing to blank, returns ``obs`` itself, unchanged and uncopied.
    """
    regions = score_regions(env_id)
    if not regions:
        return obs
    if obs.ndim >= 3 and obs.shape[-3:] == (*SCREEN, 3):
        regions = tuple(full_frame_rect(rect) for rect in regions)
    elif obs.ndim < 3 or obs.shape[-3:-1] != (FRAME_SIZE, FRAME_SIZE):
        raise ValueError(f"blank_score wants (..., {FRAME_SIZE}, {FRAME_SIZE}, C) or (..., {SCREEN[0]}, {SCREEN[1]}, "
                         f"3) arrays, got {obs.shape}")
    out = obs if inplace else obs.copy()
    for row0, row1, col0, col1 in regions:
        out[..., row0:row1, col0:col1, :] = 0
    return out

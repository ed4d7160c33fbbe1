"""A fall a person can see in a drawn MuJoCo clip (issue 40).

Where a fixed-length task's robot falls (envs/fixed_length.py: ``info["fell"]`` on that step; with the ``reset`` rule
the robot is then put back at its start pose between two frames, which a person cannot tell from a cut), the frames
drawn from that step on carry a red border and a red "FELL" banner across their top, held for FALL_MARK_S of the
task's time (at least one frame), so that a person sees the fall whatever the rule does to the robot. Frames of
other steps are left as drawn. Under ``--fall_rule none`` (no healthy range: a backflip's turn is no fall) no step
is a fall, so no frame is marked. The segment's ``falls`` come with its recorded states (drlhp.policy.ppo.rollout,
segments.py); the drawer (pref_interface.clip_drawer) marks the frames the render worker drew.
"""
from __future__ import annotations

import math

import numpy as np

FALL_MARK_S = 0.5  # seconds of the task's time the mark stays after a fall
RED = (220, 30, 30)
BORDER = 1 / 32  # of the frame's side: 8 pixels of a 256-pixel frame
BANNER = 1 / 8  # of the frame's height: the top band that says FELL


def marked_frames(n_frames: int, falls: np.ndarray | None, every: int, frame_s: float) -> np.ndarray:
    """(n_frames,) bool: which drawn frames carry the mark. Frame j shows state j * every; a fall at step t marks
    the frame of that step (t // every) and the frames of the next FALL_MARK_S."""
    out = np.zeros(n_frames, np.bool_)
    if falls is None:
        return out
    hold = max(1, math.ceil(FALL_MARK_S / max(frame_s, 1e-9)))
    for t in np.flatnonzero(falls):
        first = int(t) // max(1, every)
        out[first:first + hold] = True
    return out


def mark(frame: np.ndarray) -> np.ndarray:
    """A copy of ``frame`` ((H, W, 3) uint8) with the red border and the FELL banner."""
    from PIL import Image, ImageDraw, ImageFont

    h, w = frame.shape[:2]
    b, band = max(1, round(BORDER * min(h, w))), max(1, round(BANNER * h))
    out = frame.copy()
    out[:b], out[-b:], out[:, :b], out[:, -b:] = RED, RED, RED, RED
    out[:band] = RED
    image = Image.fromarray(out)
    draw = ImageDraw.Draw(image)
    text = "FELL"
    try:  # Pillow's own font at the band's size (Pillow >= 10.1), else its small bitmap one
        font = ImageFont.load_default(size=max(8, round(0.75 * band)))
    except TypeError:
        font = ImageFont.load_default()
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    draw.text(((w - (right - left)) // 2 - left, (band - (bottom - top)) // 2 - top), text, fill=(255, 255, 255),
              font=font)
    return np.asarray(image)


def mark_falls(frames: np.ndarray, falls: np.ndarray | None, every: int, frame_s: float) -> np.ndarray:
    """``frames`` ((n, H, W, 3) uint8, every ``every``-th state, each shown ``frame_s``) with the fall mark on the
    frames ``marked_frames`` names; the same array where none."""
    which = marked_frames(len(frames), falls, every, frame_s)
    if not which.any():
        return frames
    out = frames.copy()
    for j in np.flatnonzero(which):
        out[j] = mark(frames[j])
    return out

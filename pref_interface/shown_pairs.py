"""What a person is shown of a pair: its two clips' frames and how long each frame stays on screen.

A pair of Atari or MovingDot segments shows the segments' own frames at the clips' rate (answers.FPS). A pair of
MuJoCo segments is shown as a ``ShownPair``: the two segments (what the answer is about, sent on as they are) with
the frames drawn from their recorded states (pref_interface.clip_drawer) and each frame's seconds (k steps of the
task's dt: the clip plays at its real speed). The drawn frames live only here, never in a Segment, so they never
reach the reward predictor or the preference database. Imports nothing heavy.
"""
from __future__ import annotations

from pref_interface.answers import FPS


class ShownPair(tuple):
    """Two segments, the frames drawn of each (``clips``: (left, right), (n, H, W, 3) uint8) and ``frame_s``."""

    clips: tuple
    frame_s: float

    def __new__(cls, segments, clips, frame_s: float):
        pair = super().__new__(cls, segments)
        pair.clips, pair.frame_s = tuple(clips), float(frame_s)
        return pair


def shown_clips(pair) -> tuple:
    """(left frames, right frames) a person sees of ``pair``: drawn ones (a ShownPair's), else the segments'."""
    clips = getattr(pair, "clips", None)
    return clips if clips is not None else (pair[0].frames, pair[1].frames)


def frame_seconds(pair) -> float:
    """How long each of ``pair``'s frames stays on screen: a ShownPair's ``frame_s``, else 1 / FPS."""
    frame_s = getattr(pair, "frame_s", None)
    return float(frame_s) if frame_s is not None else 1.0 / FPS

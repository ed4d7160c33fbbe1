"""What the review tool (pref_interface.review, review_web) shows of a saved segment, and how long each frame stays.

An Atari or MovingDot segment keeps the frames a person watched: shown as they are, 1 / FPS each. A MuJoCo segment
keeps no frames (``Segment.frames`` is empty) but the simulator states it recorded, which the preference database
keeps (drlhp.reward.pref_db): review draws them as the labelling did, in a render worker (pref_interface.clip_drawer:
the same SIZE, QUALITY and MAX_FPS, so a reviewed frame is the frame the person was shown), each frame ``frame_s``
seconds (k steps of the task's dt: real speed), the frames after a fall marked as the labelling marked them
(pref_interface.fall_mark, from the fall flags the database keeps; a database from before it kept them shows no
marks). Drawn clips are kept for the last few segments asked.

``states_problem(db)`` and ``drawing_problem(db)`` are review's checks before it opens anything: a database whose
MuJoCo clips have no states (one from before the database kept them, or an oracle's run, which records none) cannot
be reviewed, nor can any MuJoCo clip on a machine that cannot draw (no offscreen OpenGL): one line each.
"""
from __future__ import annotations

import collections
import threading
import time

import numpy as np

from pref_interface.answers import FPS

KEEP = 8  # drawn clips kept (a pair on screen, the one before, the next)
DRAW_TIMEOUT_S = 300.0  # one clip drawn by the render worker: a few seconds; this only bounds a stuck worker


def _drawn(db, seg_id: str) -> bool:
    """Whether the segment has to be drawn from states: it keeps no frames of its own (a MuJoCo clip)."""
    return 0 in db.segment_look(seg_id)[1][1:]


def states_problem(db) -> str | None:
    """None if every clip of ``db`` can be shown; else one line: how many MuJoCo clips have no recorded states."""
    missing = [sid for sid in db.segment_ids() if _drawn(db, sid) and not db.segment_look(sid)[2]]
    if not missing:
        return None
    return (f"{len(missing)} of the database's {db.n_segments} clips are MuJoCo clips without their recorded "
            f"simulator states (a database from before drlhp kept them, or an oracle's run, which records none): "
            f"review has nothing to draw them from")


def drawing_problem(db) -> str | None:
    """None if this machine can draw ``db``'s MuJoCo clips (or it has none); else the render check's one line
    (pref_interface.clip_drawer.render_problem, what the run checks before a person labels)."""
    env_ids = sorted({db.segment_look(sid)[0] for sid in db.segment_ids() if _drawn(db, sid)})
    if not env_ids:
        return None
    from pref_interface.clip_drawer import render_problem

    for env_id in env_ids:
        problem = render_problem(env_id)
        if problem:
            return problem
    return None


class ReviewClips:
    """``clip(seg_id)`` -> (frames (n, H, W[, 3]) uint8, seconds each frame stays). Thread-safe (the page draws in
    an executor's thread); ``close()`` ends the render worker, if one was started."""

    def __init__(self, db, worker_factory=None):
        self.db, self._factory = db, worker_factory
        self._worker = None
        self._kept: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def clip(self, seg_id: str) -> tuple[np.ndarray, float]:
        with self._lock:
            if seg_id in self._kept:
                self._kept.move_to_end(seg_id)
                return self._kept[seg_id]
            seg = self.db.segment(seg_id)
            if 0 not in seg.frames.shape[1:]:
                shown = (seg.frames, 1.0 / FPS)
            elif seg.states is None:
                raise ValueError(f"clip {seg_id[:12]} of {seg.env_id} has neither frames nor recorded states")
            else:
                shown = self._draw(seg_id, seg.env_id, seg.states, seg.falls)
            self._kept[seg_id] = shown
            while len(self._kept) > KEEP:
                self._kept.popitem(last=False)
            return shown

    def _draw(self, seg_id: str, env_id: str, states: np.ndarray, falls: np.ndarray | None = None
              ) -> tuple[np.ndarray, float]:
        if self._worker is None:
            from pref_interface.clip_drawer import RenderWorker

            self._worker = (self._factory or RenderWorker)()
        self._worker.submit(seg_id, env_id, states)
        deadline = time.monotonic() + DRAW_TIMEOUT_S
        while time.monotonic() < deadline:
            for key, frames, head in self._worker.results():  # RenderError: the clip cannot be drawn
                if key == seg_id:  # a fall marked as the labelling marked it (none where the database kept no flags)
                    from pref_interface.fall_mark import mark_falls

                    return mark_falls(frames, falls, head["every"], head["frame_s"]), float(head["frame_s"])
            time.sleep(0.01)
        raise TimeoutError(f"the render worker drew no {env_id} clip in {DRAW_TIMEOUT_S:g} s")

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

"""How many labels the labeller may have given by a point in training.

    allowed(frames) = n_initial + n_labels * F(frames) / F(total_frames)
    constant:  F(T) = T                      (labels spread evenly over the run)
    paper:     F(T) = ln(1 + T / 5e6)        (rate proportional to 5e6 / (T + 5e6), T in frames;
                                              Christiano et al., 2017, appendix A.2)
The initial labels (gathered with a random policy) are allowed at once.
"""
from __future__ import annotations

import math

PAPER_HALF_LIFE_FRAMES = 5e6


class LabelSchedule:
    def __init__(self, kind: str, n_initial: int, n_labels: int, total_frames: int):
        if kind not in ("constant", "paper"):
            raise ValueError(f"unknown label schedule {kind!r}")
        self.kind, self.n_initial, self.n_labels = kind, n_initial, n_labels
        self.total_frames = max(1, total_frames)

    def _f(self, frames: float) -> float:
        if self.kind == "constant":
            return frames
        return math.log1p(frames / PAPER_HALF_LIFE_FRAMES)

    def allowed(self, frames: float) -> int:
        frac = min(1.0, self._f(max(0.0, frames)) / self._f(self.total_frames))
        return self.n_initial + int(self.n_labels * frac)

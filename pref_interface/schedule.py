"""How many labels the labeller may have given by a point in training.

    allowed(frames) = n_initial + n_labels * F(frames) / F(total_frames)
    constant:  F(T) = T                      (labels spread evenly over the run)
    paper:     F(T) = ln(1 + T / 5e6)        (rate proportional to 5e6 / (T + 5e6), T in frames;
                                              Christiano et al., 2017, appendix A.2)
The initial labels (gathered with a random policy) are allowed at once.

    frames_before(n) = the first frames at which allowed(frames) > n: the inverse, which paces the policy to a
                       person's labels (pref_interface.pace)
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

    def _f_inverse(self, value: float) -> float:
        if self.kind == "constant":
            return value
        return PAPER_HALF_LIFE_FRAMES * math.expm1(value)

    @property
    def planned(self) -> int:
        """Every label the schedule hands out: allowed(total_frames)."""
        return self.n_initial + self.n_labels

    def allowed(self, frames: float) -> int:
        frac = min(1.0, self._f(max(0.0, frames)) / self._f(self.total_frames))
        return self.n_initial + int(self.n_labels * frac)

    def frames_before(self, n: int) -> int | None:
        """The first whole frame count at which ``allowed`` exceeds ``n`` (0 if it does from the start); None if it
        never does (n >= planned)."""
        if n >= self.planned:
            return None
        if n < self.n_initial:
            return 0
        frac = (n - self.n_initial + 1) / self.n_labels  # allowed > n  <=>  int(n_labels * frac) >= n - n_initial + 1
        frames = max(0, math.floor(self._f_inverse(frac * self._f(self.total_frames))) - 1)
        while self.allowed(frames) <= n:  # float rounding: a step or two at most
            frames += 1
        while frames > 0 and self.allowed(frames - 1) > n:
            frames -= 1
        return frames


def policy_step_limit(schedule: LabelSchedule, given: int, margin: int, frames_per_step: int,
                      total_steps: int) -> int | None:
    """Where a person labels (pref_interface.process, --person_pace_margin): the agent step the policy may not
    start an update at, nor end its run at, with ``given`` labels in: the first step at which the schedule allows
    more than ``given + margin`` labels, at most ``total_steps`` (so the run does not end while labels are owed);
    None once every planned label is given (the policy runs free)."""
    if given >= schedule.planned:
        return None
    frames = schedule.frames_before(given + margin)
    if frames is None:
        return total_steps
    return min(total_steps, -(-frames // max(1, frames_per_step)))

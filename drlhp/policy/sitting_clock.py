"""A policy training loop's clocks over one sitting (drlhp.policy.loop, every algorithm's)."""
from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class SittingClock:
    """A training loop's clocks over one sitting: its running time (from ``started``, on top of the state's
    wall_s then; waiting for a reward is not counted), the log window (since the last progress line) and the
    point from which time/fps is measured (SB3's, over the sitting: from its first update)."""

    started: float
    wall_at_start: float
    log_time: float
    log_steps: int
    log_updates: int
    fps_from: tuple[int, float] | None = None  # (timesteps, wall_s)

    @classmethod
    def start(cls, state, fps_now: bool) -> "SittingClock":
        now = time.perf_counter()
        return cls(now, state.wall_s, now, state.timesteps, state.updates,
                   (state.timesteps, state.wall_s) if fps_now else None)

    def restart(self, state) -> None:
        """After a wait: running time and the log window start again here."""
        self.started = self.log_time = time.perf_counter()
        self.wall_at_start = state.wall_s

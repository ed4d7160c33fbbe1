"""What the policy is paid for a fall, beside what the oracle charges for it: the figure that tells a learned fall at
its size from a cheap one (issue 38: H32 on Hopper, H46 on InvertedDoublePendulum, H47), per log interval.

    reward/fall_sd          the training reward on fall steps minus its mean on every other step, in its standard
                            deviation over those other steps (H32 measured -0.5 to -1.3 on Hopper's predictors)
    oracle/fall_sd          the same figure for the oracle's reward (info["reward_task"]): what the fall costs where
                            it is paid at its size (Hopper about -120, H32)
    reward/fall_share       reward/fall_sd / oracle/fall_sd: the share of the fall's size the policy is charged
                            (1: all of it; near 0: the fall is as cheap as an ordinary step)
    reward/fall_steps       the fall steps (info["fell"]) seen in the interval

A fall step is one where envs/fixed_length.py reports ``fell``: under the reset rule the step of a fall, under the
penalty rule every step out of range. The training reward is what PPO was handed (the predictor's, normalized).
Only for PPO's Box-action runs on the predictor's reward (drlhp.policy.process); an interval without a fall, or
without two other steps, gives no figure.
"""
from __future__ import annotations

import numpy as np


class _Moments:
    """Running sums for a mean on fall steps and a mean and standard deviation on the rest."""

    def __init__(self):
        self.n_fall, self.sum_fall = 0, 0.0
        self.n, self.sum, self.sumsq = 0, 0.0, 0.0

    def add(self, r: np.ndarray, fell: np.ndarray) -> None:
        r = np.asarray(r, np.float64)
        self.n_fall += int(fell.sum())
        self.sum_fall += float(r[fell].sum())
        rest = r[~fell]
        self.n += rest.size
        self.sum += float(rest.sum())
        self.sumsq += float(np.square(rest).sum())

    def fall_sd(self) -> float | None:
        if not self.n_fall or self.n < 2:
            return None
        mean = self.sum / self.n
        sd = np.sqrt(max(self.sumsq / self.n - mean * mean, 0.0))
        if sd <= 0:
            return None
        return (self.sum_fall / self.n_fall - mean) / sd


class FallFigures:
    """A rollout observer (drlhp.policy.loop.RolloutObserver's three methods) reading ``rewards``,
    ``true_rewards`` and ``fell`` ((T, N) bool) of each rollout."""

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self.paid, self.oracle = _Moments(), _Moments()

    def on_rollout(self, rollout, state) -> None:
        fell = getattr(rollout, "fell", None)
        if rollout.rewards is None or fell is None:  # random play, or an env without falls
            return
        fell = np.asarray(fell, bool)
        self.paid.add(rollout.rewards, fell)
        self.oracle.add(rollout.true_rewards, fell)

    def metrics(self) -> dict:
        out = {}
        if self.paid.n_fall:
            out["reward/fall_steps"] = self.paid.n_fall
        paid, oracle = self.paid.fall_sd(), self.oracle.fall_sd()
        if paid is not None:
            out["reward/fall_sd"] = paid
        if oracle is not None:
            out["oracle/fall_sd"] = oracle
            if paid is not None and oracle != 0:
                out["reward/fall_share"] = paid / oracle
        self._reset()
        return out

    def summary(self) -> dict:
        return {}

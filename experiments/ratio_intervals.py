"""A table cell's ratio to its baseline, with the figures issue 61's held-out table reports: the mean, the interquartile
mean, a 95% bootstrap interval and the worst seed.

Each preference seed's ratio is its return over the baseline arm's mean return (on a normalized task, (return - the
random policy's mean) / (the baseline's mean - the random policy's mean)); their mean is the table's headline ratio,
mean(preferences) / mean(baseline). The interquartile mean (Agarwal et al. 2021, "Deep RL at the edge of the
statistical precipice": the mean of the middle 50%) is scipy's 25%-trimmed mean of those ratios (with 5 seeds, the
middle 3). The interval resamples both arms' seeds, each arm on its own (they are independent runs), and recomputes the
headline each time: scipy.stats.bootstrap, percentile method (BCa needs more than a cell's 5 seeds to be stable),
10,000 resamples, seeded so that a table prints the same interval each time. The random policy's mean is a constant
here (its runs do not depend on the trained seed). rliable, which the issue names as an example, computes the same
interquartile mean and percentile bootstrap over runs, but for aggregates over tasks; a cell's ratio of two arms is a
two-sample statistic, which scipy's bootstrap takes directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

RESAMPLES = 10_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class RatioSummary:
    mean: float  # mean(preferences) / mean(baseline): the headline
    iqm: float  # the interquartile mean of the seeds' ratios
    low: float  # the 95% bootstrap interval of the headline
    high: float
    worst: float  # the lowest seed's ratio
    seeds: int


def _ratio(prefs, base, offset: float):
    """The headline on arrays along the last axis (vectorized for the bootstrap's resamples): (mean(prefs) - offset)
    / (mean(base) - offset), the offset 0 but on a normalized task (the random policy's mean)."""
    return (np.mean(prefs, axis=-1) - offset) / (np.mean(base, axis=-1) - offset)


def ratio_summary(prefs, base, random_mean: float | None = None, seed: int = 0) -> RatioSummary:
    """The cell's figures from its preference seeds' returns and its baseline seeds' returns; ``random_mean``: the
    random policy's mean return on a normalized task (Reacher), else None. Raises ValueError where the ratio means
    nothing (no seed in an arm, or a baseline not above 0 / not above random)."""
    p, b = np.asarray(prefs, float), np.asarray(base, float)
    if not len(p) or not len(b):
        raise ValueError("a ratio needs a seed in each arm")
    offset = 0.0 if random_mean is None else random_mean
    if b.mean() <= offset:
        raise ValueError(f"the baseline's mean {b.mean():.4g} is not above {offset:.4g}: its ratio means nothing")
    per_seed = (p - offset) / (b.mean() - offset)
    mean = float(_ratio(p, b, offset))
    if len(p) > 1 or len(b) > 1:
        res = stats.bootstrap((p, b), lambda x, y, axis=-1: _ratio(x, y, offset), paired=False,
                              vectorized=True, n_resamples=RESAMPLES, confidence_level=CONFIDENCE,
                              method="percentile", rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    else:
        low = high = mean  # one seed in each arm: nothing to resample
    return RatioSummary(mean=mean, iqm=float(stats.trim_mean(per_seed, 0.25)), low=low, high=high,
                        worst=float(per_seed.min()), seeds=len(p))

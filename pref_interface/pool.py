"""The pool of recent segments and the choice of the next pair to ask about.

Pairs are never asked twice (by content id, in either order). To spread labels over many clips,
the first segment of a candidate pair is one of the least-used segments in the pool, the second a
random other one. Selection:
    random    one such candidate
    variance  of ``n_candidates`` candidates, the one whose predicted preference P[s1 > s2] varies
              most across the ensemble members (Christiano et al., 2017, section 2.2.4)
"""
from __future__ import annotations

import collections

import numpy as np

from drlhp.processes.messages import Segment


class SegmentPool:
    def __init__(self, max_segments: int, seed: int):
        self.max_segments = max_segments
        self.rng = np.random.default_rng(seed)
        self._segments: collections.OrderedDict[str, Segment] = collections.OrderedDict()
        self._uses: dict[str, int] = {}
        self._asked: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._segments)

    @property
    def obs_shape(self) -> tuple:
        """The observation shape of the pool's segments (pool not empty)."""
        return next(iter(self._segments.values())).obs.shape[1:]

    @property
    def obs_dtype(self):
        """The observations' dtype of the pool's segments, uint8 or float32 (pool not empty)."""
        return next(iter(self._segments.values())).obs.dtype

    def add(self, segment: Segment) -> None:
        sid = segment.id
        if sid in self._segments:
            return
        self._segments[sid] = segment
        self._uses[sid] = 0
        while len(self._segments) > self.max_segments:  # the oldest leave first
            old, _ = self._segments.popitem(last=False)
            del self._uses[old]

    def was_asked(self, a: Segment, b: Segment) -> bool:
        return (a.id, b.id) in self._asked or (b.id, a.id) in self._asked

    def mark_asked(self, a: Segment, b: Segment) -> None:
        self._asked.add((a.id, b.id))
        for s in (a.id, b.id):
            if s in self._uses:
                self._uses[s] += 1

    @property
    def n_asked(self) -> int:
        return len(self._asked)

    def candidates(self, n: int, max_tries: int = 20) -> list[tuple[Segment, Segment]]:
        """Up to n distinct pairs never asked before (fewer when the pool has run out)."""
        if len(self._segments) < 2:
            return []
        ids = list(self._segments)
        uses = np.array([self._uses[i] for i in ids])
        least_used = np.flatnonzero(uses == uses.min())
        out, seen = [], set()
        for k in range(n * max_tries):
            if len(out) == n:
                break
            # least-used first; if those pairs run out, any segment
            i = int(self.rng.choice(least_used)) if k < n * max_tries // 2 else int(self.rng.integers(len(ids)))
            j = int(self.rng.integers(len(ids) - 1))
            j += j >= i
            a, b = self._segments[ids[i]], self._segments[ids[j]]
            key = tuple(sorted((a.id, b.id)))
            if key in seen or self.was_asked(a, b):
                continue
            seen.add(key)
            out.append((a, b))
        return out

    def select(self, method: str, n_candidates: int, preference_probs=None) -> tuple[Segment, Segment] | None:
        """The next pair to ask about, or None. ``preference_probs(s1, s2) -> (members, B)`` is
        needed for "variance" (without it, e.g. before the first weights, pairs are random)."""
        if method == "random" or preference_probs is None:
            pairs = self.candidates(1)
            return pairs[0] if pairs else None
        pairs = self.candidates(n_candidates)
        if not pairs:
            return None
        s1 = np.stack([a.obs for a, _ in pairs])
        s2 = np.stack([b.obs for _, b in pairs])
        probs = preference_probs(s1, s2)
        return pairs[int(np.argmax(probs.var(axis=0)))]

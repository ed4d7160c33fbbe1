"""The pool of recent segments and the choice of the next pair to ask about.

Pairs are never asked twice (by content id, in either order). To spread labels over many clips,
the first segment of a candidate pair is one of the least-used segments in the pool, the second a
random other one. Selection:
    random    one such candidate
    variance  of ``n_candidates`` candidates, the one whose predicted preference P[s1 > s2] varies
              most across the ensemble members (Christiano et al., 2017, section 2.2.4)

Memory: a segment's colour frames (an Atari clip a person watches: 25 x 210 x 160 x 3 = 2,520,000 bytes) are kept
zlib-compressed (level 1: 15-60 kB a clip, measured on Pong, Enduro, Seaquest and Space Invaders) and unpacked for
the pair asked about (``select``), so a pool of 100 holds a few MB of them, not 252 MB. Grey frames and vectors are
kept as they come.
"""
from __future__ import annotations

import collections
import dataclasses
import zlib

import numpy as np

from drlhp.processes.messages import Segment


def pack(segment: Segment) -> tuple[Segment, bytes | None]:
    """(the segment without its frames, its frames zlib-compressed) where they are colour (T, H, W, 3); else
    (the segment, None)."""
    frames = segment.frames
    if frames.ndim != 4:
        return segment, None
    empty = np.zeros((len(frames), 0, 0), np.uint8)  # Segment's "no frames"
    return dataclasses.replace(segment, frames=empty), frames.shape + (zlib.compress(frames.data, 1),)


def unpack(segment: Segment, packed) -> Segment:
    """``pack``'s inverse: the segment with its frames again."""
    if packed is None:
        return segment
    *shape, data = packed
    return dataclasses.replace(segment, frames=np.frombuffer(bytearray(zlib.decompress(data)), np.uint8).reshape(shape))


class SegmentPool:
    def __init__(self, max_segments: int, seed: int):
        self.max_segments = max_segments
        self.rng = np.random.default_rng(seed)
        self._segments: collections.OrderedDict[str, Segment] = collections.OrderedDict()  # colour frames packed
        self._frames: dict[str, tuple | None] = {}  # the packed colour frames of each segment (pack)
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
        self._segments[sid], self._frames[sid] = pack(segment)
        self._uses[sid] = 0
        while len(self._segments) > self.max_segments:  # the oldest leave first
            old, _ = self._segments.popitem(last=False)
            del self._uses[old], self._frames[old]

    @property
    def frames_nbytes(self) -> int:
        """Bytes of the frames held: colour ones as packed, others as they are."""
        return sum(len(packed[-1]) if packed is not None else self._segments[sid].frames.nbytes
                   for sid, packed in self._frames.items())

    def whole(self, pair: tuple[Segment, Segment]) -> tuple[Segment, Segment]:
        """The pair's segments with their frames (unpacked)."""
        return tuple(unpack(seg, self._frames.get(seg.id)) for seg in pair)

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
        """The next pair to ask about (with its frames), or None. ``preference_probs(s1, s2) -> (members, B)`` is
        needed for "variance" (without it, e.g. before the first weights, pairs are random)."""
        if method == "random" or preference_probs is None:
            pairs = self.candidates(1)
            return self.whole(pairs[0]) if pairs else None
        pairs = self.candidates(n_candidates)
        if not pairs:
            return None
        s1 = np.stack([a.obs for a, _ in pairs])
        s2 = np.stack([b.obs for _, b in pairs])
        probs = preference_probs(s1, s2)
        return self.whole(pairs[int(np.argmax(probs.var(axis=0)))])

"""The reward predictor's preference database: labelled pairs of segments, bounded, split train/val.

What it holds: entries ``(id1, id2, mu, order)`` in two lists, ``train`` and ``val`` (each new
preference goes to validation with probability ``val_fraction``, 1/e as in the paper, drawn from a
seeded ``numpy.random.Generator``); ``order`` is a global insertion counter, so "oldest" is defined
across both splits. When more than ``max_prefs`` entries are held, the oldest is dropped. Segments
are stored once each, keyed by ``Segment.id`` (sha1 content hash), and reference-counted; a MuJoCo segment keeps
its recorded simulator states (``Segment.states``), which ``review`` draws it from, and its fall flags
(``Segment.falls``, kept as the steps where the robot fell), which review marks (a segment's id depends on neither:
the first copy stored keeps its states and flags).

Memory: observations decoded in one array of rows, frame stacks as their frames
(drlhp.reward.pref_store); uint8, or float32 for a Box-action env's segments (the first segment sets which,
a segment of the other dtype is refused). Files: an appending manifest and write-once chunks, with damage confined to a
chunk, written and read by the PrefDBFiles each PrefDB owns (drlhp.reward.pref_db_files; ``save``, ``load``,
``check`` here hand it segment records and log operations and build from what it read; ``PrefDBError``).
"""
from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np

from drlhp.processes.messages import VALID_MU, Preference, Segment
from drlhp.reward.pref_db_files import Contents, DamagedChunk, PrefDBFiles, SegmentRecord
from drlhp.reward.pref_store import SPLITS, Entry, _RowStore, _Stored, _unzip


def _key(id1: str, id2: str, mu) -> tuple:
    """(a, b, mu) and (b, a, reversed mu) are the same preference."""
    return (id1, id2, tuple(mu)) if id1 <= id2 else (id2, id1, (mu[1], mu[0]))


class PrefDB:
    """Bounded preference database. Not thread-safe: the caller holds a lock around every use."""

    def __init__(self, max_prefs: int = 3000, val_fraction: float = 1 / math.e, seed: int = 0):
        if max_prefs < 1 or not 0.0 <= val_fraction <= 1.0:
            raise ValueError(f"PrefDB: need max_prefs >= 1 and 0 <= val_fraction <= 1, "
                             f"got {max_prefs}, {val_fraction}")
        self.max_prefs, self.val_fraction = int(max_prefs), float(val_fraction)
        self.rng = np.random.default_rng(seed)
        self.train: list[Entry] = []
        self.val: list[Entry] = []
        self.counter = 0
        self._segments: dict[str, _Stored] = {}
        self._keys: set[tuple] = set()
        self._store: _RowStore | None = None
        # its files (what save() has written there), and the changes since (log operations not yet in a chunk)
        self._files = PrefDBFiles()
        self._log: list[list] = []
        # load(skip_damaged=True): the chunks left out and the preferences that went with them (None: unknown)
        self.damaged: list[DamagedChunk] = []
        self.lost: int | None = 0

    # ---- contents -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.train) + len(self.val)

    n_train = property(lambda self: len(self.train))
    n_val = property(lambda self: len(self.val))
    n_segments = property(lambda self: len(self._segments))

    @property
    def nbytes(self) -> int:
        """Memory held: decoded observations (rows in use) plus compressed frames and states."""
        obs = self._store.nbytes_used if self._store is not None else 0
        return obs + sum(len(s.frames_z) + len(s.states_z or b"") for s in self._segments.values())

    @property
    def nbytes_allocated(self) -> int:
        """Memory of the observation store as allocated (rows in use and free), plus compressed frames and states."""
        obs = self._store.data.nbytes if self._store is not None else 0
        return obs + sum(len(s.frames_z) + len(s.states_z or b"") for s in self._segments.values())

    @property
    def obs_dtype(self) -> np.dtype | None:
        """The dtype of the observations held (uint8 or float32); None before the first segment."""
        return None if self._store is None else self._store.dtype

    @property
    def n_obs_rows(self) -> int:
        """Rows of the observation store in use (a frame stack's frames; else one per step held)."""
        return 0 if self._store is None else self._store.rows_used

    @property
    def n_obs_rows_stored(self) -> int:
        """Rows ever stored (loaded ones included): grows with every new segment, evictions or not."""
        return 0 if self._store is None else self._store.rows_stored

    def obs_rows(self) -> np.ndarray:
        """Every row of the observation store in use, (N, *row shape) (a new array): for a (T, D) segment,
        its steps. What the predictor's input normalization is measured on."""
        if self._store is None:
            return np.zeros((0,), np.uint8)
        used = np.ones(len(self._store.data), bool)
        used[self._store.free] = False
        return self._store.data[used]

    def entries(self, split: str) -> list[Entry]:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return getattr(self, split)

    def segment_ids(self) -> list[str]:
        """The ids of the segments held, in the order they were first stored."""
        return list(self._segments)

    def newest_segment_ids(self, n: int) -> list[str]:
        """Up to ``n`` distinct segment ids of the newest entries (both splits), newest first."""
        ids: dict[str, None] = {}
        i, j = len(self.train) - 1, len(self.val) - 1
        while len(ids) < n and (i >= 0 or j >= 0):
            if j < 0 or (i >= 0 and self.train[i].order > self.val[j].order):
                e, i = self.train[i], i - 1
            else:
                e, j = self.val[j], j - 1
            ids.setdefault(e.id1)
            if len(ids) < n:
                ids.setdefault(e.id2)
        return list(ids)

    def segment_rewards(self, seg_id: str) -> np.ndarray:
        """The segment's (T,) true rewards (a copy)."""
        return self._segments[seg_id].true_rewards.copy()

    def segment_obs(self, seg_id: str) -> np.ndarray:
        """The segment's (T, ...) observations, uint8 or float32 (a new array)."""
        return self._store.gather(self._segments[seg_id].rows)

    def segment(self, seg_id: str) -> Segment:
        """The segment as it was added: its observations, frames, rewards and recorded states (None: none recorded)."""
        s = self._segments[seg_id]
        return Segment(self.segment_obs(seg_id), _unzip(s.frames_z, s.frames_shape),
                       s.true_rewards.copy(), s.env_id, s.worker, s.step, self.segment_states(seg_id),
                       self.segment_falls(seg_id))

    def segment_look(self, seg_id: str) -> tuple[str, tuple[int, ...], bool]:
        """(env id, its frames' shape, whether it recorded states), nothing decoded: what review needs to know of
        how the segment is shown (its own frames, or drawn from its states where its frames are empty)."""
        s = self._segments[seg_id]
        return s.env_id, s.frames_shape, s.states_z is not None

    def segment_states(self, seg_id: str) -> np.ndarray | None:
        """The segment's recorded simulator states, (T, S) float64 (a new array), or None if none were recorded."""
        s = self._segments[seg_id]
        return None if s.states_z is None else _unzip(s.states_z, s.states_shape, np.float64).copy()

    def segment_falls(self, seg_id: str) -> np.ndarray | None:
        """The segment's fall flags, (T,) bool (a new array: Segment.falls), or None where none were kept (no states,
        or a database from before the fall flags were kept)."""
        s = self._segments[seg_id]
        if s.falls is None or s.states_z is None:
            return None
        falls = np.zeros(len(s.true_rewards), bool)
        falls[list(s.falls)] = True
        return falls

    def batch(self, split: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """obs1 (B, T, ...), obs2 (B, T, ...) (the database's dtype) and mu (B, 2) float32 of the chosen entries."""
        return self.batches(split, np.asarray(indices).reshape(-1))

    def batches(self, split: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """indices of any shape S, e.g. (members, B) -> obs1, obs2 (*S, T, ...) and mu (*S, 2)
        float32: one fancy-index gather per side."""
        indices = np.asarray(indices)
        entries = self.entries(split)
        chosen = [entries[int(i)] for i in indices.reshape(-1)]
        if not chosen:
            raise ValueError("PrefDB.batch: no indices given")
        segs = self._segments
        rows1 = np.stack([segs[e.id1].rows for e in chosen])
        rows2 = np.stack([segs[e.id2].rows for e in chosen])
        lead = indices.shape
        obs1 = self._store.gather(rows1.reshape(*lead, *rows1.shape[1:]))
        obs2 = self._store.gather(rows2.reshape(*lead, *rows2.shape[1:]))
        return obs1, obs2, np.array([e.mu for e in chosen], np.float32).reshape(*lead, 2)

    def true_returns(self, split: str) -> np.ndarray:
        """(B, 2) float64: the true returns of each entry's two segments (diagnostics only)."""
        ret = lambda i: float(self._segments[i].true_rewards.sum())  # noqa: E731
        return np.array([[ret(e.id1), ret(e.id2)] for e in self.entries(split)], np.float64).reshape(-1, 2)

    # ---- changes --------------------------------------------------------------------------------
    def add(self, pref: Preference) -> bool:
        """Add a labelled pair; False (and nothing added) if the same pair and mu is already held."""
        pref.check()
        s1, s2 = pref.segment_1, pref.segment_2
        entry = Entry(s1.id, s2.id, (float(pref.mu[0]), float(pref.mu[1])), self.counter)
        if _key(entry.id1, entry.id2, entry.mu) in self._keys:
            return False
        why = self._store.refuses(s1.obs) if self._store is not None else None
        if why:
            raise ValueError(why)
        for seg, sid in ((s1, entry.id1), (s2, entry.id2)):
            if sid not in self._segments:
                states = seg.states
                self._store_segment(sid, seg.obs, zlib.compress(np.ascontiguousarray(seg.frames).data, 1),
                                    tuple(seg.frames.shape), seg.true_rewards, seg.env_id, seg.worker, seg.step,
                                    None if states is None else zlib.compress(np.ascontiguousarray(states).data, 1),
                                    None if states is None else tuple(states.shape),
                                    None if states is None or seg.falls is None
                                    else tuple(int(t) for t in np.flatnonzero(seg.falls)))
        split = "val" if self.rng.random() < self.val_fraction else "train"
        self._insert(entry, split)
        self._log.append(["add", entry.id1, entry.id2, entry.mu[0], entry.mu[1], entry.order, split])
        self.counter += 1
        self._trim()
        return True

    def find(self, order: int) -> tuple[str, int]:
        """(split, index) of the entry with this insertion order; KeyError if none."""
        for split in SPLITS:
            lst = getattr(self, split)
            lo, hi = 0, len(lst)  # each list is sorted by order
            while lo < hi:
                mid = (lo + hi) // 2
                if lst[mid].order < order:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < len(lst) and lst[lo].order == order:
                return split, lo
        raise KeyError(f"no preference with order {order}")

    def relabel(self, order: int, mu) -> bool:
        """Give the entry a new mu (same pair, split and age); False (nothing changed) if the database
        already holds this pair with that mu in another entry."""
        mu = (float(mu[0]), float(mu[1]))
        if mu not in VALID_MU:
            raise ValueError(f"mu must be one of {VALID_MU}, got {mu}")
        split, i = self.find(order)
        e = getattr(self, split)[i]
        if mu == e.mu:
            return True
        if _key(e.id1, e.id2, mu) in self._keys:
            return False
        self._keys.discard(_key(e.id1, e.id2, e.mu))
        self._keys.add(_key(e.id1, e.id2, mu))
        getattr(self, split)[i] = e._replace(mu=mu)
        self._log.append(["relabel", order, mu[0], mu[1]])
        return True

    def remove(self, order: int) -> None:
        """Delete the entry (and its segments, if no other entry uses them)."""
        split, i = self.find(order)
        e = getattr(self, split).pop(i)
        self._keys.discard(_key(e.id1, e.id2, e.mu))
        for sid in (e.id1, e.id2):
            s = self._segments[sid]
            s.refs -= 1
            if s.refs == 0:
                self._store.release(s.rows)
                del self._segments[sid]
        self._log.append(["remove", order])

    def _store_segment(self, sid, obs, frames_z, frames_shape, true_rewards, env_id, worker, step,
                       states_z: bytes | None = None, states_shape=None, falls=None) -> None:
        if self._store is None:
            self._store = _RowStore(tuple(obs.shape[1:]), obs.dtype)
        self._segments[sid] = _Stored(self._store.put(obs), frames_z, tuple(frames_shape),
                                      np.array(true_rewards, np.float32), str(env_id), int(worker), int(step),
                                      states_z=states_z, states_shape=None if states_z is None else tuple(states_shape),
                                      falls=None if states_z is None or falls is None else tuple(falls))

    def _insert(self, entry: Entry, split: str) -> None:
        self._segments[entry.id1].refs += 1
        self._segments[entry.id2].refs += 1
        self._keys.add(_key(entry.id1, entry.id2, entry.mu))
        getattr(self, split).append(entry)

    def _trim(self) -> None:
        while len(self) > self.max_prefs:  # each list is in insertion order: the oldest is a head
            lst = self.train if not self.val or (self.train and self.train[0].order < self.val[0].order) \
                else self.val
            self.remove(lst[0].order)

    # ---- files (drlhp.reward.pref_db_files) -----------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Append what changed since the last save to ``path`` (a new chunk, then the manifest); a
        first save there, or one whose log has grown to twice what is live, writes one whole chunk."""
        path = Path(path)
        whole = self._files.writes_whole(path, len(self._log), len(self))
        if whole:
            entries = sorted([(e, "train") for e in self.train] + [(e, "val") for e in self.val],
                             key=lambda x: x[0].order)
            ops = [["add", e.id1, e.id2, e.mu[0], e.mu[1], e.order, split] for e, split in entries]
            new_ids = list(self._segments)
        else:
            ops = self._log
            new_ids = [sid for sid in dict.fromkeys(i for op in ops if op[0] == "add" for i in op[1:3])
                       if sid in self._segments and not self._files.holds(sid)]
        manifest = {"max_prefs": self.max_prefs, "val_fraction": self.val_fraction, "counter": self.counter,
                    "n_prefs": len(self), "rng_state": self.rng.bit_generator.state}
        self._files.save(path, whole, ops, [self._record(sid) for sid in new_ids], manifest, self.damaged)
        self._log = []
        if whole:
            self.damaged = []

    def _record(self, sid: str) -> SegmentRecord:
        s = self._segments[sid]
        return SegmentRecord(sid, self.segment_obs(sid), s.frames_z, s.frames_shape, s.true_rewards, s.env_id,
                             s.worker, s.step, s.states_z, s.states_shape, s.falls)

    @classmethod
    def load(cls, path: str | Path, max_prefs: int | None = None, skip_damaged: bool = False) -> PrefDB:
        """Read a saved database (never writes); ``max_prefs`` overrides the stored bound. A damaged chunk
        raises PrefDBDamaged, or with ``skip_damaged`` is left out with its preferences (``db.damaged``,
        ``db.lost``; the next save rewrites the database whole)."""
        return PrefDBFiles.load(path, max_prefs, skip_damaged, build=cls._from_files)

    @classmethod
    def _from_files(cls, contents: Contents, files: PrefDBFiles) -> PrefDB:
        db = cls(contents.max_prefs, contents.val_fraction)
        db.rng.bit_generator.state = contents.rng_state
        db.counter = contents.counter
        for s in contents.segments:  # in order of first use, as the entries below
            db._store_segment(s.id, s.obs, s.frames_z, s.frames_shape, s.true_rewards, s.env_id, s.worker, s.step,
                              s.states_z, s.states_shape, s.falls)
        for entry, split in contents.preferences:
            db._insert(entry, split)
        db.damaged, db.lost, db._files = contents.damaged, contents.lost, files
        db._trim()  # a smaller bound: its removals are logged for the next save
        return db

    check = staticmethod(PrefDBFiles.check)

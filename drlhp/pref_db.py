"""The reward predictor's preference database: labelled pairs of segments, bounded, split train/val.

What it holds: entries ``(id1, id2, mu, order)`` in two lists, ``train`` and ``val`` (each new
preference goes to validation with probability ``val_fraction``, 1/e as in the paper, drawn from a
seeded ``numpy.random.Generator``); ``order`` is a global insertion counter, so "oldest" is defined
across both splits. When more than ``max_prefs`` entries are held, the oldest is dropped. Segments
are stored once each, keyed by ``Segment.id`` (sha1 content hash), with obs and frames compressed
by zlib (level 1), and reference-counted: a segment no entry uses anymore is deleted.

File format (``save``/``load``): an uncompressed ``.npz`` that loads with ``allow_pickle=False``:
    blob          uint8: every segment's compressed obs then compressed frames, concatenated
    true_rewards  float32: every segment's rewards, concatenated
    meta          str: JSON {"format": "drlhp-prefdb", "format_version": 1, "max_prefs",
                  "val_fraction", "counter", "rng_state", "segments": [{"id", "obs_shape",
                  "frames_shape", "obs_offset", "obs_nbytes", "frames_offset", "frames_nbytes",
                  "rewards_offset", "length", "env_id", "worker", "step"}, ...],
                  "train": [[id1, id2, mu1, mu2, order], ...], "val": [...]}

Guarantees: ``save`` writes a temporary file in the same folder and renames it over the target
(``drlhp.atomic``), so a crash mid-save leaves the previous good file intact and no partial file.
``load`` only reads; it checks every segment's hash against its id and every entry's segments, and
any damage raises ``PrefDBError`` with a one-line message naming the file.
"""
from __future__ import annotations

import json
import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from drlhp.atomic import write_npz
from drlhp.messages import VALID_MU, Preference, Segment, segment_id

FORMAT = "drlhp-prefdb"
FORMAT_VERSION = 1
SPLITS = ("train", "val")


class PrefDBError(Exception):
    """A preference database file that is missing, corrupt or of another format (one-line message)."""


class Entry(NamedTuple):
    id1: str
    id2: str
    mu: tuple[float, float]
    order: int  # global insertion counter: smaller is older


@dataclass
class _Stored:
    obs_z: bytes
    obs_shape: tuple[int, ...]
    frames_z: bytes
    frames_shape: tuple[int, ...]
    true_rewards: np.ndarray
    env_id: str
    worker: int
    step: int
    refs: int = 0


def _unzip(z: bytes, shape) -> np.ndarray:
    return np.frombuffer(zlib.decompress(z), np.uint8).reshape(shape)


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

    # ---- contents -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.train) + len(self.val)

    n_train = property(lambda self: len(self.train))
    n_val = property(lambda self: len(self.val))
    n_segments = property(lambda self: len(self._segments))

    @property
    def nbytes_compressed(self) -> int:
        return sum(len(s.obs_z) + len(s.frames_z) for s in self._segments.values())

    def entries(self, split: str) -> list[Entry]:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        return getattr(self, split)

    def segment_ids(self) -> list[str]:
        """The ids of the segments held, in the order they were first stored."""
        return list(self._segments)

    def segment_rewards(self, seg_id: str) -> np.ndarray:
        """The segment's (T,) true rewards (a copy)."""
        return self._segments[seg_id].true_rewards.copy()

    def segment_obs(self, seg_id: str) -> np.ndarray:
        """The segment's (T, ...) uint8 observations (a read-only array)."""
        s = self._segments[seg_id]
        return _unzip(s.obs_z, s.obs_shape)

    def segment(self, seg_id: str) -> Segment:
        s = self._segments[seg_id]
        return Segment(self.segment_obs(seg_id), _unzip(s.frames_z, s.frames_shape),
                       s.true_rewards.copy(), s.env_id, s.worker, s.step)

    def batch(self, split: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """obs1 (B, T, ...), obs2 (B, T, ...) uint8 and mu (B, 2) float32 of the chosen entries."""
        chosen = [self.entries(split)[int(i)] for i in np.asarray(indices).reshape(-1)]
        if not chosen:
            raise ValueError("PrefDB.batch: no indices given")
        obs1 = np.stack([self.segment_obs(e.id1) for e in chosen])
        obs2 = np.stack([self.segment_obs(e.id2) for e in chosen])
        return obs1, obs2, np.array([e.mu for e in chosen], np.float32)

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
        for seg, sid in ((s1, entry.id1), (s2, entry.id2)):
            if sid not in self._segments:
                self._segments[sid] = _Stored(
                    zlib.compress(np.ascontiguousarray(seg.obs).data, 1), tuple(seg.obs.shape),
                    zlib.compress(np.ascontiguousarray(seg.frames).data, 1), tuple(seg.frames.shape),
                    np.array(seg.true_rewards, np.float32), str(seg.env_id), int(seg.worker), int(seg.step))
        self._insert(entry, "val" if self.rng.random() < self.val_fraction else "train")
        self.counter += 1
        self._trim()
        return True

    def find(self, order: int) -> tuple[str, int]:
        """(split, index) of the entry with this insertion order; KeyError if none."""
        for split in SPLITS:
            for i, e in enumerate(getattr(self, split)):
                if e.order == order:
                    return split, i
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
        return True

    def remove(self, order: int) -> None:
        """Delete the entry (and its segments, if no other entry uses them)."""
        split, i = self.find(order)
        e = getattr(self, split).pop(i)
        self._keys.discard(_key(e.id1, e.id2, e.mu))
        for sid in (e.id1, e.id2):
            self._segments[sid].refs -= 1
            if self._segments[sid].refs == 0:
                del self._segments[sid]

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

    # ---- files ----------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        """Write atomically (temp file + rename): a crash mid-save leaves the previous file intact."""
        parts, rewards, segs, offset, r_offset = [], [], [], 0, 0
        for sid, s in self._segments.items():
            segs.append({"id": sid, "obs_shape": list(s.obs_shape), "frames_shape": list(s.frames_shape),
                         "obs_offset": offset, "obs_nbytes": len(s.obs_z),
                         "frames_offset": offset + len(s.obs_z), "frames_nbytes": len(s.frames_z),
                         "rewards_offset": r_offset, "length": len(s.true_rewards),
                         "env_id": s.env_id, "worker": s.worker, "step": s.step})
            parts += [s.obs_z, s.frames_z]
            rewards.append(s.true_rewards)
            offset += len(s.obs_z) + len(s.frames_z)
            r_offset += len(s.true_rewards)
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "max_prefs": self.max_prefs,
                "val_fraction": self.val_fraction, "counter": self.counter,
                "rng_state": self.rng.bit_generator.state, "segments": segs,
                **{sp: [[e.id1, e.id2, e.mu[0], e.mu[1], e.order] for e in getattr(self, sp)] for sp in SPLITS}}
        write_npz(path, {"blob": np.frombuffer(b"".join(parts), np.uint8),
                         "true_rewards": np.concatenate(rewards or [np.zeros(0, np.float32)]),
                         "meta": np.array(json.dumps(meta))})

    @classmethod
    def load(cls, path: str | Path, max_prefs: int | None = None) -> PrefDB:
        """Read a saved database (never writes); ``max_prefs`` overrides the stored bound."""
        try:
            return cls._load(Path(path), max_prefs)
        except FileNotFoundError:
            why = "no such file"
        except Exception as e:  # zip, npy, JSON, zlib or shape damage: all mean the same to the user
            why = f"{type(e).__name__}: {e}" if not isinstance(e, _Bad) else str(e)
        raise PrefDBError(f"cannot read preference database {path}: {' '.join(why.split())}") from None

    @classmethod
    def _load(cls, path: Path, max_prefs: int | None) -> PrefDB:
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":
                raise _Bad("not a drlhp preference database (not an .npz archive)")
        with np.load(path, allow_pickle=False) as data:
            missing = {"blob", "true_rewards", "meta"} - set(data.files)
            if missing:
                raise _Bad(f"not a drlhp preference database (no {', '.join(sorted(missing))} in it)")
            blob, rewards, meta = data["blob"], data["true_rewards"], json.loads(str(data["meta"]))
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise _Bad(f"not a drlhp preference database (format {meta.get('format')!r})"
                       if isinstance(meta, dict) else "not a drlhp preference database (meta is not a dict)")
        if meta.get("format_version") != FORMAT_VERSION:
            raise _Bad(f"format version {meta.get('format_version')}, this drlhp reads {FORMAT_VERSION}")
        if blob.dtype != np.uint8 or rewards.dtype != np.float32:
            raise _Bad(f"blob/true_rewards have dtypes {blob.dtype}/{rewards.dtype}, want uint8/float32")
        db = cls(meta["max_prefs"] if max_prefs is None else max_prefs, meta["val_fraction"])
        db.rng.bit_generator.state = meta["rng_state"]
        db.counter = int(meta["counter"])
        raw = blob.tobytes()
        for m in meta["segments"]:
            obs_z = raw[m["obs_offset"]:m["obs_offset"] + m["obs_nbytes"]]
            frames_z = raw[m["frames_offset"]:m["frames_offset"] + m["frames_nbytes"]]
            r = rewards[m["rewards_offset"]:m["rewards_offset"] + m["length"]].copy()
            try:
                _unzip(frames_z, m["frames_shape"])
                obs = _unzip(obs_z, m["obs_shape"])
            except (zlib.error, ValueError) as e:
                raise _Bad(f"segment {m['id']}: compressed data damaged ({e})") from None
            if len(r) != m["length"] or segment_id(obs, r) != m["id"]:
                raise _Bad(f"segment {m['id']} does not match its content hash")
            db._segments[m["id"]] = _Stored(obs_z, tuple(m["obs_shape"]), frames_z, tuple(m["frames_shape"]),
                                            r, str(m["env_id"]), int(m["worker"]), int(m["step"]))
        for split in SPLITS:
            for id1, id2, mu1, mu2, order in sorted(meta[split], key=lambda row: row[4]):
                if id1 not in db._segments or id2 not in db._segments:
                    raise _Bad(f"a {split} preference points at a missing segment")
                if (mu1, mu2) not in VALID_MU:
                    raise _Bad(f"a {split} preference has invalid mu {(mu1, mu2)}")
                db._insert(Entry(id1, id2, (float(mu1), float(mu2)), int(order)), split)
        db._segments = {k: s for k, s in db._segments.items() if s.refs > 0}
        db._trim()
        return db


class _Bad(Exception):
    """Internal: a readable file whose content is not a valid preference database."""

"""The reward predictor's preference database: labelled pairs of segments, bounded, split train/val.

What it holds: entries ``(id1, id2, mu, order)`` in two lists, ``train`` and ``val`` (each new
preference goes to validation with probability ``val_fraction``, 1/e as in the paper, drawn from a
seeded ``numpy.random.Generator``); ``order`` is a global insertion counter, so "oldest" is defined
across both splits. When more than ``max_prefs`` entries are held, the oldest is dropped. Segments
are stored once each, keyed by ``Segment.id`` (sha1 content hash), and reference-counted.

Memory: observations are held decoded in one preallocated uint8 array of rows (``_RowStore``), so a
training batch is one fancy-index gather. Frame stacks are stored as their frames: a (T, H, W, K)
clip whose stack slides by one frame per step takes T + K - 1 rows of (H, W), not T * K (a clip that
crosses a reset keeps all T * K). What a person watches (``frames``) stays zlib-compressed.

Files (format 2): ``save(path)`` appends. ``path`` is a small manifest (.npz: JSON ``meta`` with the
format, bound, split RNG state and the list of chunks); ``<stem>_chunks/NNNNNN.npz`` are write-once
chunks, each holding the segments first saved in it (zlib-compressed ``obs_blob``, ``frames_blob``,
``true_rewards``) and the log of changes since the previous save (``add``, ``remove``, ``relabel``).
A save writes one chunk (what is new) and the manifest, so it costs the same at 500 and at 10,000
preferences; when the log holds more than twice what is live (evictions), the save writes one
compacted chunk instead and deletes the old ones. Both writes are atomic (``drlhp.runtime.npz_json``: temp
file + rename, chunk first): a crash loses at most what came after the last save. Every file loads
with ``allow_pickle=False``; ``load`` checks every segment's hash and every entry, and any damage
raises ``PrefDBError`` with a one-line message naming the file. Format 1 files (one .npz) still load.

A damaged chunk (cut short, say) costs only its own preferences: ``check(path)`` reads every file without
decoding a segment and raises ``PrefDBDamaged`` naming the chunk and the preferences it costs;
``load(path, skip_damaged=True)`` goes on without it (``db.damaged``, ``db.lost``), and the next ``save``
to the same place writes one whole chunk and moves the damaged file aside (``<name>.damaged``).
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from drlhp.runtime import npz_json
from drlhp.runtime.messages import VALID_MU, Preference, Segment, segment_id

FORMAT = "drlhp-prefdb"
CHUNK_FORMAT = "drlhp-prefdb-chunk"
FORMAT_VERSION = 2
SPLITS = ("train", "val")
COMPACT_SLACK = 1000  # log operations allowed beyond twice the live entries before a save compacts


class PrefDBError(Exception):
    """A preference database file that is missing, corrupt or of another format (one-line message)."""


class DamagedChunk(NamedTuple):
    path: Path  # the chunk file
    why: str  # one line: what is wrong with it


class PrefDBDamaged(PrefDBError):
    """Chunks of a database that cannot be read, while its manifest and other chunks can:
    ``load(path, skip_damaged=True)`` goes on without them. ``lost``: the preferences that go with them
    (None where the manifest predates its count of preferences); ``kept``: those that stay."""

    def __init__(self, manifest: Path, damaged: list[DamagedChunk], kept: int, lost: int | None):
        self.manifest, self.damaged, self.kept, self.lost = manifest, damaged, kept, lost
        more = f" (and {len(damaged) - 1} other chunks)" if len(damaged) > 1 else ""
        super().__init__(f"preference database chunk {damaged[0].path} is damaged: {damaged[0].why}{more}; "
                         f"{lost_text(lost)} of {manifest} go with it, {kept} are readable")


def lost_text(lost: int | None) -> str:
    """'7 preferences', '1 preference', or 'an unknown number of preferences'."""
    if lost is None:
        return "an unknown number of preferences"
    return f"{lost} preference{'' if lost == 1 else 's'}"


class Entry(NamedTuple):
    id1: str
    id2: str
    mu: tuple[float, float]
    order: int  # global insertion counter: smaller is older


@dataclass
class _Stored:
    rows: np.ndarray  # row indices into the row store: (T, K) for a frame stack, (T,) otherwise
    frames_z: bytes
    frames_shape: tuple[int, ...]
    true_rewards: np.ndarray
    env_id: str
    worker: int
    step: int
    refs: int = 0


class _RowStore:
    """Decoded observations: rows of one uint8 array, grown by half when full, freed rows reused.

    A (T, H, W, K) frame stack (K > 1) is stored as (H, W) frames; anything else as (T,) rows of its
    per-step shape. ``gather(rows)`` turns a batch of row indices back into observations."""

    def __init__(self, obs_shape: tuple[int, ...]):
        self.obs_shape = tuple(obs_shape)
        self.stacked = len(obs_shape) == 3 and obs_shape[-1] > 1
        self.row_shape = obs_shape[:2] if self.stacked else self.obs_shape
        self.data = np.empty((0, *self.row_shape), np.uint8)
        self.free: list[int] = []  # a stack: the lowest free row is used first

    @property
    def nbytes_used(self) -> int:
        return (len(self.data) - len(self.free)) * int(np.prod(self.row_shape))

    def put(self, obs: np.ndarray) -> np.ndarray:
        """Store one segment's (T, *obs_shape) observations; returns its row indices."""
        if tuple(obs.shape[1:]) != self.obs_shape:
            raise ValueError(f"PrefDB holds observations of shape {self.obs_shape}, got {obs.shape[1:]}")
        t = len(obs)
        if t == 0:
            return np.zeros((0, obs.shape[-1]) if self.stacked else (0,), np.int64)
        if not self.stacked:
            units, local = obs, np.arange(t)
        else:
            k = obs.shape[-1]
            if np.array_equal(obs[1:, ..., :-1], obs[:-1, ..., 1:]):  # the stack slides by one frame
                units = np.concatenate([np.moveaxis(obs[0], -1, 0), obs[1:, ..., -1]])
                local = np.arange(t)[:, None] + np.arange(k)[None, :]
            else:
                units = np.moveaxis(obs, -1, 1).reshape(t * k, *self.row_shape)
                local = np.arange(t * k).reshape(t, k)
        if len(self.free) < len(units):
            self._grow(len(units) - len(self.free))
        idx = np.array(self.free[-len(units):][::-1])
        del self.free[-len(units):]
        self.data[idx] = units
        return idx[local]

    def release(self, rows: np.ndarray) -> None:
        self.free.extend(np.unique(rows)[::-1].tolist())

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """rows (..., T[, K]) -> observations (..., T, *obs_shape), a new contiguous array. A frame stack is
        gathered one stack position at a time straight into its place, not as (..., K, H, W) with the K axis
        then moved last (a transpose with 4 bytes innermost): gathering went from 20% to 10% of make run's
        pretraining, 1.07x on the whole (bench/pretrain_speed.py --compare; docs/results.md, session 11)."""
        if not self.stacked:
            return self.data[rows]
        out = np.empty((*rows.shape[:-1], *self.row_shape, rows.shape[-1]), np.uint8)
        for k in range(rows.shape[-1]):
            out[..., k] = self.data[rows[..., k]]
        return out

    def _grow(self, need: int) -> None:
        old = len(self.data)
        new = max(old + need, old * 3 // 2, 64)
        data = np.empty((new, *self.row_shape), np.uint8)
        data[:old] = self.data
        self.data = data
        self.free[:0] = range(new - 1, old - 1, -1)  # below the free rows already held: used last


def _unzip(z: bytes, shape) -> np.ndarray:
    return np.frombuffer(zlib.decompress(z), np.uint8).reshape(shape)


def _key(id1: str, id2: str, mu) -> tuple:
    """(a, b, mu) and (b, a, reversed mu) are the same preference."""
    return (id1, id2, tuple(mu)) if id1 <= id2 else (id2, id1, (mu[1], mu[0]))


def chunks_dir(path: Path) -> Path:
    """Where the chunks of the manifest at ``path`` live: ``<folder>/<stem>_chunks/``."""
    return path.with_name(path.stem + "_chunks")


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
        # what save() has written: the manifest it wrote, its chunks, the segments they hold, the log
        # operations they hold, and the changes since (operations and segments not yet in a chunk)
        self._saved_to: Path | None = None
        self._chunks: list[str] = []
        self._on_disk: set[str] = set()
        self._ops_on_disk = 0
        self._next_chunk = 0
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
        """Memory held: decoded observations (rows in use) plus compressed frames."""
        obs = self._store.nbytes_used if self._store is not None else 0
        return obs + sum(len(s.frames_z) for s in self._segments.values())

    @property
    def nbytes_allocated(self) -> int:
        """Memory of the observation store as allocated (rows in use and free), plus compressed frames."""
        obs = self._store.data.nbytes if self._store is not None else 0
        return obs + sum(len(s.frames_z) for s in self._segments.values())

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
        """The segment's (T, ...) uint8 observations (a new array)."""
        return self._store.gather(self._segments[seg_id].rows)

    def segment(self, seg_id: str) -> Segment:
        s = self._segments[seg_id]
        return Segment(self.segment_obs(seg_id), _unzip(s.frames_z, s.frames_shape),
                       s.true_rewards.copy(), s.env_id, s.worker, s.step)

    def batch(self, split: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """obs1 (B, T, ...), obs2 (B, T, ...) uint8 and mu (B, 2) float32 of the chosen entries."""
        return self.batches(split, np.asarray(indices).reshape(-1))

    def batches(self, split: str, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """indices of any shape S, e.g. (members, B) -> obs1, obs2 (*S, T, ...) uint8 and mu (*S, 2)
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
        if self._store is not None and tuple(s1.obs.shape[1:]) != self._store.obs_shape:
            raise ValueError(f"PrefDB holds observations of shape {self._store.obs_shape}, got {s1.obs.shape[1:]}")
        for seg, sid in ((s1, entry.id1), (s2, entry.id2)):
            if sid not in self._segments:
                self._store_segment(sid, seg.obs, zlib.compress(np.ascontiguousarray(seg.frames).data, 1),
                                    tuple(seg.frames.shape), seg.true_rewards, seg.env_id, seg.worker, seg.step)
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

    def _store_segment(self, sid, obs, frames_z, frames_shape, true_rewards, env_id, worker, step) -> None:
        if self._store is None:
            self._store = _RowStore(tuple(obs.shape[1:]))
        self._segments[sid] = _Stored(self._store.put(obs), frames_z, tuple(frames_shape),
                                      np.array(true_rewards, np.float32), str(env_id), int(worker), int(step))

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
        """Append what changed since the last save to ``path`` (a new chunk, then the manifest); a
        first save there, or one whose log has grown to twice what is live, writes one whole chunk."""
        path = Path(path)
        full = (self._saved_to != path.resolve()
                or self._ops_on_disk + len(self._log) > 2 * len(self) + COMPACT_SLACK)
        if full:
            entries = sorted([(e, "train") for e in self.train] + [(e, "val") for e in self.val],
                             key=lambda x: x[0].order)
            ops = [["add", e.id1, e.id2, e.mu[0], e.mu[1], e.order, split] for e, split in entries]
            new_ids = list(self._segments)
        else:
            ops = self._log
            new_ids = [sid for sid in dict.fromkeys(i for op in ops if op[0] == "add" for i in op[1:3])
                       if sid in self._segments and sid not in self._on_disk]
        chunks = [] if full else list(self._chunks)
        if full:  # a folder may hold another database's chunks (a run that loaded --load_prefs_dir): above them
            self._next_chunk = max(self._next_chunk, 1 + max(
                (int(p.stem) for p in chunks_dir(path).glob("*.npz") if p.stem.isdigit()), default=-1))
        if ops or new_ids or full:
            name = f"{self._next_chunk:06d}.npz"  # numbers only grow: never overwrites a listed chunk
            self._write_chunk(chunks_dir(path) / name, new_ids, ops)
            self._next_chunk += 1
            chunks.append(name)
        npz_json.write(path, {}, {
            "format": FORMAT, "format_version": FORMAT_VERSION, "max_prefs": self.max_prefs,
            "val_fraction": self.val_fraction, "counter": self.counter, "n_prefs": len(self),
            "rng_state": self.rng.bit_generator.state, "chunks": chunks})
        self._saved_to, self._chunks = path.resolve(), chunks
        self._on_disk = set(new_ids) if full else self._on_disk | set(new_ids)
        self._ops_on_disk = len(ops) if full else self._ops_on_disk + len(ops)
        self._log = []
        if full:  # the old chunks (and any a crash left behind) are no longer listed: delete them
            damaged = {d.path.name for d in self.damaged}  # ... but keep a damaged one aside, for a post-mortem
            for old in chunks_dir(path).iterdir():
                if old.name not in chunks and (old.suffix in (".npz", ".tmp")):
                    try:
                        if old.name in damaged:
                            old.rename(old.with_name(old.name + ".damaged"))
                        else:
                            old.unlink()
                    except OSError:
                        pass
            self.damaged = []

    def _write_chunk(self, path: Path, seg_ids: list[str], ops: list[list]) -> None:
        parts, rewards, segs, offset, r_offset = [], [], [], 0, 0
        for sid in seg_ids:
            s = self._segments[sid]
            obs_z = zlib.compress(self.segment_obs(sid).data, 1)
            segs.append({"id": sid, "obs_shape": [len(s.true_rewards), *self._store.obs_shape],
                         "frames_shape": list(s.frames_shape), "obs_offset": offset, "obs_nbytes": len(obs_z),
                         "frames_offset": offset + len(obs_z), "frames_nbytes": len(s.frames_z),
                         "rewards_offset": r_offset, "length": len(s.true_rewards),
                         "env_id": s.env_id, "worker": s.worker, "step": s.step})
            parts += [obs_z, s.frames_z]
            rewards.append(s.true_rewards)
            offset += len(obs_z) + len(s.frames_z)
            r_offset += len(s.true_rewards)
        npz_json.write(path, {"blob": np.frombuffer(b"".join(parts), np.uint8),
                              "true_rewards": np.concatenate(rewards or [np.zeros(0, np.float32)])},
                       {"format": CHUNK_FORMAT, "segments": segs, "ops": ops})

    @classmethod
    def load(cls, path: str | Path, max_prefs: int | None = None, skip_damaged: bool = False) -> PrefDB:
        """Read a saved database (never writes); ``max_prefs`` overrides the stored bound. A damaged chunk
        raises PrefDBDamaged, or with ``skip_damaged`` is left out with its preferences (``db.damaged``,
        ``db.lost``; the next save rewrites the database whole)."""
        try:
            return cls._load(Path(path), max_prefs, skip_damaged)
        except PrefDBDamaged:
            raise
        except FileNotFoundError as e:
            why = "no such file" if Path(e.filename or "") == Path(path) else f"missing {e.filename}"
        except Exception as e:  # zip, npy, JSON, zlib or shape damage: all mean the same to the user
            why = str(e) if isinstance(e, (_Bad, npz_json.NpzJsonError)) else f"{type(e).__name__}: {e}"
        raise PrefDBError(f"cannot read preference database {path}: {' '.join(why.split())}") from None

    @staticmethod
    def _read_npz(path: Path, want: set[str], what: str) -> tuple[dict, dict]:
        return npz_json.read(path, what, want, type_names=True)

    @classmethod
    def check(cls, path: str | Path) -> int:
        """Read every file of the database at ``path`` (the manifest, each chunk: zip checksums included)
        without decoding a segment, and replay its log; returns how many preferences it holds. A damaged
        chunk: PrefDBDamaged (naming it, with the preferences it costs); anything else: PrefDBError."""
        try:
            meta, version = cls._read_manifest(Path(path))
            chunks, damaged = cls._read_chunks(Path(path), meta, version, keep_arrays=False)
            live, where = cls._replay(chunks, lenient=bool(damaged))
        except PrefDBDamaged:
            raise
        except FileNotFoundError as e:
            why = "no such file" if Path(e.filename or "") == Path(path) else f"missing {e.filename}"
        except Exception as e:  # noqa: BLE001 -- as in load
            why = str(e) if isinstance(e, (_Bad, npz_json.NpzJsonError)) else f"{type(e).__name__}: {e}"
        else:
            kept = sum(1 for op in live.values() if op[1] in where and op[2] in where)
            if damaged:
                raise PrefDBDamaged(Path(path), damaged, kept, cls._lost(meta, kept))
            return kept
        raise PrefDBError(f"cannot read preference database {path}: {' '.join(why.split())}") from None

    @staticmethod
    def _lost(meta: dict, kept: int) -> int | None:
        return max(0, int(meta["n_prefs"]) - kept) if "n_prefs" in meta else None

    @classmethod
    def _read_manifest(cls, path: Path) -> tuple[dict, int]:
        _, meta = cls._read_npz(path, {"meta"}, "preference database")
        if meta.get("format") != FORMAT:
            raise _Bad(f"not a drlhp preference database (format {meta.get('format')!r})")
        version = meta.get("format_version")
        if version not in (1, FORMAT_VERSION):
            raise _Bad(f"format version {version}, this drlhp reads 1 and {FORMAT_VERSION}")
        return meta, version

    @classmethod
    def _read_chunks(cls, path: Path, meta: dict, version: int,
                     keep_arrays: bool = True) -> tuple[list[tuple], list[DamagedChunk]]:
        """[(name, arrays or None, segment metas, log)] of the readable chunks, and the damaged ones."""
        want = {"blob", "true_rewards", "meta"}
        if version == 1:  # one file: every segment, then the entries of each split
            arrays, meta = cls._read_npz(path, want, "preference database")
            return [(path.name, arrays if keep_arrays else None, meta["segments"],
                     [["add", a, b, m1, m2, o, split] for split in SPLITS for a, b, m1, m2, o in meta[split]])], []
        chunks, damaged = [], []
        for name in meta["chunks"]:
            file = chunks_dir(path) / name
            try:
                c_arrays, c_meta = cls._read_npz(file, want, "preference database chunk")
                if c_meta.get("format") != CHUNK_FORMAT:
                    raise _Bad("not a drlhp preference database chunk")
                segs, ops = c_meta["segments"], c_meta["ops"]
            except FileNotFoundError:
                damaged.append(DamagedChunk(file, "missing"))
                continue
            except (OSError, npz_json.NpzJsonError, _Bad, KeyError) as e:
                why = e.strerror or type(e).__name__ if isinstance(e, OSError) else str(e)
                damaged.append(DamagedChunk(file, " ".join((why or type(e).__name__).split())))
                continue
            chunks.append((name, c_arrays if keep_arrays else None, segs, ops))
        return chunks, damaged

    @staticmethod
    def _replay(chunks: list[tuple], lenient: bool) -> tuple[dict[int, list], dict[str, tuple]]:
        """The live ``add`` operations by order, and where each segment's newest copy is. ``lenient``
        (chunks are missing): a relabel of a preference the readable chunks do not hold is ignored."""
        live: dict[int, list] = {}
        where: dict[str, tuple] = {}
        for name, c_arrays, segs, ops in chunks:
            for m in segs:
                where[m["id"]] = (c_arrays, m, name)
            for op in ops:
                if op[0] == "add":
                    live[int(op[5])] = op
                elif op[0] == "remove":
                    live.pop(int(op[1]), None)
                elif op[0] == "relabel":
                    if int(op[1]) not in live:
                        if lenient:
                            continue
                        raise _Bad(f"chunk {name} relabels a preference it does not hold")
                    live[int(op[1])] = [*live[int(op[1])][:3], op[2], op[3], *live[int(op[1])][5:]]
                else:
                    raise _Bad(f"chunk {name} holds an unknown operation {op[0]!r}")
        return live, where

    @classmethod
    def _load(cls, path: Path, max_prefs: int | None, skip_damaged: bool = False) -> PrefDB:
        meta, version = cls._read_manifest(path)
        db = cls(meta["max_prefs"] if max_prefs is None else max_prefs, meta["val_fraction"])
        db.rng.bit_generator.state = meta["rng_state"]
        db.counter = int(meta["counter"])
        chunks, damaged = cls._read_chunks(path, meta, version)
        # replay the log, then decode only the segments that live entries use (the newest copy of each)
        live, where = cls._replay(chunks, lenient=bool(damaged))
        if damaged:
            kept = sum(1 for op in live.values() if op[1] in where and op[2] in where)
            if not skip_damaged:
                raise PrefDBDamaged(path, damaged, kept, cls._lost(meta, kept))
            live = {o: op for o, op in live.items() if op[1] in where and op[2] in where}
            db.damaged, db.lost = damaged, cls._lost(meta, kept)
        for order in sorted(live):
            _, id1, id2, mu1, mu2, _, split = live[order]
            if split not in SPLITS:
                raise _Bad(f"a preference has split {split!r}")
            for sid in (id1, id2):
                if sid not in db._segments:
                    if sid not in where:
                        raise _Bad(f"a {split} preference points at a missing segment")
                    db._load_segment(*where[sid])
            if (mu1, mu2) not in VALID_MU:
                raise _Bad(f"a {split} preference has invalid mu {(mu1, mu2)}")
            db._insert(Entry(id1, id2, (float(mu1), float(mu2)), order), split)
        if version == FORMAT_VERSION and not damaged:  # with damaged chunks left out, the next save is whole
            db._saved_to, db._chunks = path.resolve(), list(meta["chunks"])
            db._on_disk, db._ops_on_disk = set(where), sum(len(c[3]) for c in chunks)
            db._next_chunk = 1 + max((int(Path(n).stem) for n in db._chunks), default=-1)
        db._trim()  # a smaller bound: its removals are logged for the next save
        return db

    def _load_segment(self, arrays: dict, m: dict, chunk: str) -> None:
        blob, rewards = arrays["blob"], arrays["true_rewards"]
        if blob.dtype != np.uint8 or rewards.dtype != np.float32:
            raise _Bad(f"blob/true_rewards have dtypes {blob.dtype}/{rewards.dtype}, want uint8/float32")
        raw = blob.data
        r = rewards[m["rewards_offset"]:m["rewards_offset"] + m["length"]].copy()
        try:
            frames_z = bytes(raw[m["frames_offset"]:m["frames_offset"] + m["frames_nbytes"]])
            _unzip(frames_z, m["frames_shape"])
            obs = _unzip(raw[m["obs_offset"]:m["obs_offset"] + m["obs_nbytes"]], m["obs_shape"])
        except (zlib.error, ValueError) as e:
            raise _Bad(f"chunk {chunk}: segment {m['id']}: compressed data damaged ({e})") from None
        if len(r) != m["length"] or segment_id(obs, r) != m["id"]:
            raise _Bad(f"chunk {chunk}: segment {m['id']} does not match its content hash")
        self._store_segment(m["id"], obs, frames_z, m["frames_shape"], r, m["env_id"], m["worker"], m["step"])


class _Bad(Exception):
    """Internal: a readable file whose content is not a valid preference database."""

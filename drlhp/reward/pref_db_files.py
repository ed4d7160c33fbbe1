"""The preference database's files: ``PrefDBFiles``, an object each drlhp.reward.pref_db.PrefDB owns, writes and
reads them (``save``, ``load``, ``check``); it sees the database only through what PrefDB hands it (segment records,
log operations, the manifest's fields) and gives back what it read (``Contents``), never its fields.

Format 2: ``save(path)`` appends. ``path`` is a small manifest (.npz: JSON ``meta`` with the
format, bound, split RNG state and the list of chunks); ``<stem>_chunks/NNNNNN.npz`` are write-once
chunks, each holding the segments first saved in it (zlib-compressed observations and frames, and a MuJoCo
clip's recorded simulator states where it has them, in one ``blob``, ``true_rewards``; each segment's meta says
its observations' dtype, ``obs_dtype``: uint8 or float32, uint8 where absent, as in files written before float
segments; and where it has states, their ``states_shape``, ``states_offset`` and ``states_nbytes``: absent in a file
from before states were kept, or for a segment that recorded none; with states, ``falls``: the steps where the robot
fell (``Segment.falls``), absent in a file from before fall flags were kept: no marks then)
and the log of changes since the previous save (``add``, ``remove``, ``relabel``).
A save writes one chunk (what is new) and the manifest, so it costs the same at 500 and at 10,000
preferences; when the log holds more than twice what is live (evictions), the save writes one
compacted chunk instead and deletes the old ones. Both writes are atomic (``drlhp.records.npz_json``: temp
file + rename, chunk first): a crash loses at most what came after the last save. Every file loads
with ``allow_pickle=False``; ``load`` checks every segment's hash and every entry, and any damage
raises ``PrefDBError`` with a one-line message naming the file. Format 1 files (one .npz) still load.

A damaged chunk (cut short, say) costs only its own preferences: ``check(path)`` reads every file without
decoding a segment and raises ``PrefDBDamaged`` naming the chunk and the preferences it costs;
``load(path, skip_damaged=True)`` goes on without it (``db.damaged``, ``db.lost``), and the next ``save``
to the same place writes one whole chunk and moves the damaged file aside (``<name>.damaged``).
"""
from __future__ import annotations

import zlib
from pathlib import Path
from typing import Callable, NamedTuple, TypeVar

import numpy as np

from drlhp.processes.messages import VALID_MU, segment_id
from drlhp.records import npz_json
from drlhp.reward.pref_store import SPLITS, Entry, _unzip

DB = TypeVar("DB")

FORMAT = "drlhp-prefdb"
CHUNK_FORMAT = "drlhp-prefdb-chunk"
FORMAT_VERSION = 2
OBS_DTYPES = ("uint8", "float32")  # a segment's observations, as its meta names them
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


def chunks_dir(path: Path) -> Path:
    """Where the chunks of the manifest at ``path`` live: ``<folder>/<stem>_chunks/``."""
    return path.with_name(path.stem + "_chunks")


class SegmentRecord(NamedTuple):
    """One segment as the files hold it: its observations decoded, what a person watches and its recorded states
    (None: none recorded) zlib-compressed, as PrefDB keeps them."""

    id: str
    obs: np.ndarray  # (T, ...) uint8 or float32
    frames_z: bytes
    frames_shape: tuple
    true_rewards: np.ndarray  # (T,) float32
    env_id: str
    worker: int
    step: int
    states_z: bytes | None = None
    states_shape: tuple | None = None
    falls: tuple[int, ...] | None = None  # with states: the steps where the robot fell (Segment.falls); None: not kept


class Contents(NamedTuple):
    """What a database's files hold, read: the manifest's settings, the live preferences in insertion order
    with their splits, the segments they use (in order of first use), and the chunks left out as damaged."""

    max_prefs: int
    val_fraction: float
    rng_state: dict
    counter: int
    preferences: list  # [(Entry, split)]
    segments: list  # [SegmentRecord]
    damaged: list  # [DamagedChunk]
    lost: int | None


class PrefDBFiles:
    """A PrefDB's files (the module docstring): where it last saved, the chunks there, the segments and log
    operations they hold, so that the next ``save`` appends. One per PrefDB; ``load`` and ``check`` read."""

    def __init__(self):
        self.saved_to: Path | None = None
        self.chunks: list[str] = []
        self.on_disk: set[str] = set()
        self.ops_on_disk = 0
        self.next_chunk = 0

    def writes_whole(self, path: Path, n_log: int, n_live: int) -> bool:
        """Whether the next save to ``path`` writes one whole chunk: a first save there, or one whose log
        (``n_log`` operations since the last save) has grown to twice what is live (``n_live`` entries)."""
        return self.saved_to != path.resolve() or self.ops_on_disk + n_log > 2 * n_live + COMPACT_SLACK

    def holds(self, seg_id: str) -> bool:
        """Whether a chunk already written holds the segment."""
        return seg_id in self.on_disk

    def save(self, path: Path, whole: bool, ops: list[list], segments: list[SegmentRecord], manifest: dict,
             damaged: list[DamagedChunk]) -> None:
        """Append a chunk of ``segments`` and ``ops`` (with ``whole``: every live entry as an add, and every
        segment) to ``path``, then the manifest (``manifest``: max_prefs, val_fraction, counter, n_prefs,
        rng_state); a whole save deletes the chunks no longer listed and keeps ``damaged`` ones aside."""
        chunks = [] if whole else list(self.chunks)
        if whole:  # a folder may hold another database's chunks (a run that loaded --load_prefs_dir): above them
            self.next_chunk = max(self.next_chunk, 1 + max(
                (int(p.stem) for p in chunks_dir(path).glob("*.npz") if p.stem.isdigit()), default=-1))
        if ops or segments or whole:
            name = f"{self.next_chunk:06d}.npz"  # numbers only grow: never overwrites a listed chunk
            _write_chunk(chunks_dir(path) / name, segments, ops)
            self.next_chunk += 1
            chunks.append(name)
        npz_json.write(path, {}, {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest, "chunks": chunks})
        new_ids = {s.id for s in segments}
        self.saved_to, self.chunks = path.resolve(), chunks
        self.on_disk = new_ids if whole else self.on_disk | new_ids
        self.ops_on_disk = len(ops) if whole else self.ops_on_disk + len(ops)
        if whole:  # the old chunks (and any a crash left behind) are no longer listed: delete them
            damaged_names = {d.path.name for d in damaged}  # ... but keep a damaged one aside, for a post-mortem
            for old in chunks_dir(path).iterdir():
                if old.name not in chunks and (old.suffix in (".npz", ".tmp")):
                    try:
                        if old.name in damaged_names:
                            old.rename(old.with_name(old.name + ".damaged"))
                        else:
                            old.unlink()
                    except OSError:
                        pass

    @classmethod
    def load(cls, path: str | Path, max_prefs: int | None, skip_damaged: bool,
             build: Callable[[Contents, "PrefDBFiles"], DB]) -> DB:
        """``build(contents, files)`` of the database saved at ``path`` (read, never written; ``max_prefs``
        overrides the stored bound): ``files`` knows what is on disk, so the next save there appends. A damaged
        chunk raises PrefDBDamaged, or with ``skip_damaged`` is left out with its preferences (``contents.damaged``,
        ``contents.lost``; the next save rewrites the database whole). Any other damage: PrefDBError."""
        try:
            return build(*cls._read(Path(path), max_prefs, skip_damaged))
        except PrefDBDamaged:
            raise
        except FileNotFoundError as e:
            why = "no such file" if Path(e.filename or "") == Path(path) else f"missing {e.filename}"
        except Exception as e:  # zip, npy, JSON, zlib or shape damage: all mean the same to the user
            why = str(e) if isinstance(e, (_Bad, npz_json.NpzJsonError)) else f"{type(e).__name__}: {e}"
        raise PrefDBError(f"cannot read preference database {path}: {' '.join(why.split())}") from None

    @classmethod
    def check(cls, path: str | Path) -> int:
        """Read every file of the database at ``path`` (the manifest, each chunk: zip checksums included)
        without decoding a segment, and replay its log; returns how many preferences it holds. A damaged
        chunk: PrefDBDamaged (naming it, with the preferences it costs); anything else: PrefDBError."""
        try:
            meta, version = _read_manifest(Path(path))
            chunks, damaged = _read_chunks(Path(path), meta, version, keep_arrays=False)
            live, where = _replay(chunks, lenient=bool(damaged))
        except PrefDBDamaged:
            raise
        except FileNotFoundError as e:
            why = "no such file" if Path(e.filename or "") == Path(path) else f"missing {e.filename}"
        except Exception as e:  # noqa: BLE001 -- as in load
            why = str(e) if isinstance(e, (_Bad, npz_json.NpzJsonError)) else f"{type(e).__name__}: {e}"
        else:
            kept = sum(1 for op in live.values() if op[1] in where and op[2] in where)
            if damaged:
                raise PrefDBDamaged(Path(path), damaged, kept, _lost(meta, kept))
            return kept
        raise PrefDBError(f"cannot read preference database {path}: {' '.join(why.split())}") from None

    @classmethod
    def _read(cls, path: Path, max_prefs: int | None, skip_damaged: bool) -> tuple[Contents, PrefDBFiles]:
        meta, version = _read_manifest(path)
        chunks, damaged = _read_chunks(path, meta, version)
        # replay the log, then decode only the segments that live entries use (the newest copy of each)
        live, where = _replay(chunks, lenient=bool(damaged))
        lost = 0
        if damaged:
            kept = sum(1 for op in live.values() if op[1] in where and op[2] in where)
            if not skip_damaged:
                raise PrefDBDamaged(path, damaged, kept, _lost(meta, kept))
            live = {o: op for o, op in live.items() if op[1] in where and op[2] in where}
            lost = _lost(meta, kept)
        preferences, segments = [], {}
        for order in sorted(live):
            _, id1, id2, mu1, mu2, _, split = live[order]
            if split not in SPLITS:
                raise _Bad(f"a preference has split {split!r}")
            for sid in (id1, id2):
                if sid not in segments:
                    if sid not in where:
                        raise _Bad(f"a {split} preference points at a missing segment")
                    segments[sid] = _decode_segment(*where[sid])
            if (mu1, mu2) not in VALID_MU:
                raise _Bad(f"a {split} preference has invalid mu {(mu1, mu2)}")
            preferences.append((Entry(id1, id2, (float(mu1), float(mu2)), order), split))
        files = cls()
        if version == FORMAT_VERSION and not damaged:  # with damaged chunks left out, the next save is whole
            files.saved_to, files.chunks = path.resolve(), list(meta["chunks"])
            files.on_disk, files.ops_on_disk = set(where), sum(len(c[3]) for c in chunks)
            files.next_chunk = 1 + max((int(Path(n).stem) for n in files.chunks), default=-1)
        contents = Contents(meta["max_prefs"] if max_prefs is None else max_prefs, meta["val_fraction"],
                            meta["rng_state"], int(meta["counter"]), preferences, list(segments.values()),
                            damaged, lost)
        return contents, files


def _write_chunk(path: Path, segments: list[SegmentRecord], ops: list[list]) -> None:
    parts, rewards, segs, offset, r_offset = [], [], [], 0, 0
    for s in segments:
        obs_z = zlib.compress(s.obs.data, 1)
        segs.append({"id": s.id, "obs_shape": list(s.obs.shape), "obs_dtype": s.obs.dtype.name,
                     "frames_shape": list(s.frames_shape), "obs_offset": offset, "obs_nbytes": len(obs_z),
                     "frames_offset": offset + len(obs_z), "frames_nbytes": len(s.frames_z),
                     "rewards_offset": r_offset, "length": len(s.true_rewards),
                     "env_id": s.env_id, "worker": s.worker, "step": s.step})
        parts += [obs_z, s.frames_z]
        offset += len(obs_z) + len(s.frames_z)
        if s.states_z is not None:  # a MuJoCo clip's recorded states, after its frames
            segs[-1].update({"states_shape": list(s.states_shape), "states_offset": offset,
                             "states_nbytes": len(s.states_z)})
            parts.append(s.states_z)
            offset += len(s.states_z)
            if s.falls is not None:  # the steps where the robot fell (Segment.falls), for review's fall mark
                segs[-1]["falls"] = list(s.falls)
        rewards.append(s.true_rewards)
        r_offset += len(s.true_rewards)
    npz_json.write(path, {"blob": np.frombuffer(b"".join(parts), np.uint8),
                          "true_rewards": np.concatenate(rewards or [np.zeros(0, np.float32)])},
                   {"format": CHUNK_FORMAT, "segments": segs, "ops": ops})


def _read_npz(path: Path, want: set[str], what: str) -> tuple[dict, dict]:
    return npz_json.read(path, what, want, type_names=True)


def _lost(meta: dict, kept: int) -> int | None:
    return max(0, int(meta["n_prefs"]) - kept) if "n_prefs" in meta else None


def _read_manifest(path: Path) -> tuple[dict, int]:
    _, meta = _read_npz(path, {"meta"}, "preference database")
    if meta.get("format") != FORMAT:
        raise _Bad(f"not a drlhp preference database (format {meta.get('format')!r})")
    version = meta.get("format_version")
    if version not in (1, FORMAT_VERSION):
        raise _Bad(f"format version {version}, this drlhp reads 1 and {FORMAT_VERSION}")
    return meta, version


def _read_chunks(path: Path, meta: dict, version: int,
                 keep_arrays: bool = True) -> tuple[list[tuple], list[DamagedChunk]]:
    """[(name, arrays or None, segment metas, log)] of the readable chunks, and the damaged ones."""
    want = {"blob", "true_rewards", "meta"}
    if version == 1:  # one file: every segment, then the entries of each split
        arrays, meta = _read_npz(path, want, "preference database")
        return [(path.name, arrays if keep_arrays else None, meta["segments"],
                 [["add", a, b, m1, m2, o, split] for split in SPLITS for a, b, m1, m2, o in meta[split]])], []
    chunks, damaged = [], []
    for name in meta["chunks"]:
        file = chunks_dir(path) / name
        try:
            c_arrays, c_meta = _read_npz(file, want, "preference database chunk")
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


def _decode_segment(arrays: dict, m: dict, chunk: str) -> SegmentRecord:
    blob, rewards = arrays["blob"], arrays["true_rewards"]
    if blob.dtype != np.uint8 or rewards.dtype != np.float32:
        raise _Bad(f"blob/true_rewards have dtypes {blob.dtype}/{rewards.dtype}, want uint8/float32")
    raw = blob.data
    r = rewards[m["rewards_offset"]:m["rewards_offset"] + m["length"]].copy()
    try:
        frames_z = bytes(raw[m["frames_offset"]:m["frames_offset"] + m["frames_nbytes"]])
        _unzip(frames_z, m["frames_shape"])
        dtype = m.get("obs_dtype", "uint8")  # absent: a file from before float segments
        if dtype not in OBS_DTYPES:
            raise ValueError(f"observations of dtype {dtype!r}, want one of {OBS_DTYPES}")
        obs = _unzip(raw[m["obs_offset"]:m["obs_offset"] + m["obs_nbytes"]], m["obs_shape"], np.dtype(dtype))
        states_z = states_shape = None
        if "states_offset" in m:  # absent: no states recorded, or a file from before they were kept
            states_z = bytes(raw[m["states_offset"]:m["states_offset"] + m["states_nbytes"]])
            states_shape = tuple(m["states_shape"])
            if len(states_shape) != 2 or states_shape[0] != m["length"]:
                raise ValueError(f"states of shape {states_shape}, want ({m['length']}, S)")
            _unzip(states_z, states_shape, np.float64)
        falls = m.get("falls")  # absent: no fall flags kept (a file from before they were, or no states)
        if falls is not None:
            if states_z is None:
                raise ValueError("fall flags without states")
            if (not isinstance(falls, list) or any(isinstance(t, bool) or not isinstance(t, int) for t in falls)
                    or any(not 0 <= t < m["length"] for t in falls) or falls != sorted(set(falls))):
                raise ValueError(f"fall steps {str(falls)[:80]}: want increasing steps in [0, {m['length']})")
            falls = tuple(falls)
    except (zlib.error, ValueError) as e:
        raise _Bad(f"chunk {chunk}: segment {m['id']}: compressed data damaged ({e})") from None
    if len(r) != m["length"] or segment_id(obs, r) != m["id"]:
        raise _Bad(f"chunk {chunk}: segment {m['id']} does not match its content hash")
    return SegmentRecord(m["id"], obs, frames_z, m["frames_shape"], r, m["env_id"], m["worker"], m["step"],
                         states_z, states_shape, falls)


class _Bad(Exception):
    """Internal: a readable file whose content is not a valid preference database."""

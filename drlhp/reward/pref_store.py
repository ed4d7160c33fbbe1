"""What the preference database (drlhp.reward.pref_db) holds in memory: its entries, its stored segments,
and the row store of their decoded observations.

Observations are held decoded in one preallocated array of rows (``_RowStore``: uint8, or float32 for a
Box-action env's (T, D) segments; the first segment stored sets which), so a training batch is one
fancy-index gather. Frame stacks are stored as their frames: a (T, H, W, K) clip whose stack slides
by one frame per step takes T + K - 1 rows of (H, W), not T * K (a clip that crosses a reset keeps all
T * K). What a person watches (``frames``) stays zlib-compressed, and so do a MuJoCo clip's recorded simulator
states (``states``, (T, nq + nv) float64: what review draws the clip from; a Hopper clip's are about 18 kB raw).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

SPLITS = ("train", "val")


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
    states_z: bytes | None = None  # a MuJoCo clip's recorded simulator states (T, S) float64, zlib; None: none recorded
    states_shape: tuple[int, ...] | None = None
    falls: tuple[int, ...] | None = None  # with states: the steps where the robot fell (Segment.falls); None: not kept


class _RowStore:
    """Decoded observations: rows of one array (uint8, or float32), grown by half when full, freed rows reused.

    A (T, H, W, K) uint8 frame stack (K > 1) is stored as (H, W) frames; anything else as (T,) rows of its
    per-step shape. ``gather(rows)`` turns a batch of row indices back into observations."""

    def __init__(self, obs_shape: tuple[int, ...], dtype=np.uint8):
        self.obs_shape, self.dtype = tuple(obs_shape), np.dtype(dtype)
        if self.dtype not in (np.uint8, np.float32):
            raise ValueError(f"PrefDB holds uint8 or float32 observations, not {self.dtype}")
        self.stacked = len(obs_shape) == 3 and obs_shape[-1] > 1 and self.dtype == np.uint8
        self.row_shape = obs_shape[:2] if self.stacked else self.obs_shape
        self.data = np.empty((0, *self.row_shape), self.dtype)
        self.free: list[int] = []  # a stack: the lowest free row is used first
        self.rows_stored = 0  # rows ever put here (each reused row counts again)

    @property
    def nbytes_used(self) -> int:
        return (len(self.data) - len(self.free)) * int(np.prod(self.row_shape)) * self.dtype.itemsize

    @property
    def rows_used(self) -> int:
        return len(self.data) - len(self.free)

    def refuses(self, obs: np.ndarray) -> str | None:
        """Why ``obs`` (T, ...) cannot be stored here (one line), or None."""
        if obs.dtype != self.dtype:
            return f"PrefDB holds {self.dtype} observations, got {obs.dtype} (one database holds one kind of env)"
        if tuple(obs.shape[1:]) != self.obs_shape:
            return f"PrefDB holds observations of shape {self.obs_shape}, got {obs.shape[1:]}"
        return None

    def put(self, obs: np.ndarray) -> np.ndarray:
        """Store one segment's (T, *obs_shape) observations; returns its row indices."""
        why = self.refuses(obs)
        if why:
            raise ValueError(why)
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
        self.rows_stored += len(units)
        return idx[local]

    def release(self, rows: np.ndarray) -> None:
        self.free.extend(np.unique(rows)[::-1].tolist())

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """rows (..., T[, K]) -> observations (..., T, *obs_shape), a new contiguous array. A frame stack is
        gathered one stack position at a time straight into its place, not as (..., K, H, W) with the K axis
        then moved last (a transpose with 4 bytes innermost): gathering went from 20% to 10% of make run's
        pretraining, 1.07x on the whole (bench/pretrain_speed.py --compare; docs/results/speed.md, session 11)."""
        if not self.stacked:
            return self.data[rows]
        out = np.empty((*rows.shape[:-1], *self.row_shape, rows.shape[-1]), self.dtype)
        for k in range(rows.shape[-1]):
            out[..., k] = self.data[rows[..., k]]
        return out

    def _grow(self, need: int) -> None:
        old = len(self.data)
        new = max(old + need, old * 3 // 2, 64)
        data = np.empty((new, *self.row_shape), self.dtype)
        data[:old] = self.data
        self.data = data
        self.free[:0] = range(new - 1, old - 1, -1)  # below the free rows already held: used last


def _unzip(z: bytes, shape, dtype=np.uint8) -> np.ndarray:
    return np.frombuffer(zlib.decompress(z), dtype).reshape(shape)

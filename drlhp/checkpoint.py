"""Policy checkpoints: one ``policy-<updates>.npz`` per save, written atomically, loaded without pickle.

Each file holds the network weights, the RMSprop slots, the action-sampling RNG state, and a JSON
string ``meta`` with the counters a resumed run needs (updates, timesteps, episodes, recent returns,
running wall time). The newest few are kept.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from drlhp.atomic import write_npz

CKPT_PATTERN = re.compile(r"^policy-(\d+)\.npz$")
FORMAT_VERSION = 1
KEEP = 3
NPZ_MAGIC = b"PK\x03\x04"  # every archive np.savez writes starts so


class CheckpointError(Exception):
    """A checkpoint that is missing, corrupt or of another format."""


def npz_problem(path: str | Path, what: str) -> str | None:
    """Why ``path`` cannot be a drlhp ``what`` (an .npz archive), told before numpy reads it, or None.

    numpy takes any file that is neither an archive nor an array for a pickle, and its error then
    suggests ``allow_pickle``: no use to someone who gave the wrong file.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(len(NPZ_MAGIC))
    except OSError as e:
        return e.strerror or type(e).__name__
    return None if head == NPZ_MAGIC else f"not a drlhp {what} (not an .npz archive)"


def save_policy_checkpoint(ckpt_dir: str | Path, updates: int, state: dict[str, np.ndarray], meta: dict) -> Path:
    ckpt_dir = Path(ckpt_dir)
    path = ckpt_dir / f"policy-{updates}.npz"
    meta = {**meta, "format_version": FORMAT_VERSION, "updates": updates}
    write_npz(path, {**state, "meta": np.array(json.dumps(meta))})
    for old in sorted(_checkpoints(ckpt_dir))[:-KEEP]:
        old[1].unlink(missing_ok=True)
    return path


def _checkpoints(ckpt_dir: Path) -> list[tuple[int, Path]]:
    if not ckpt_dir.is_dir():
        return []
    return [(int(m.group(1)), p) for p in ckpt_dir.iterdir() if (m := CKPT_PATTERN.match(p.name))]


def find_latest_checkpoint(path: str | Path) -> Path | None:
    """The newest policy checkpoint in ``path``, in ``path/checkpoints``, or ``path`` itself if a file."""
    path = Path(path)
    if path.is_file():
        return path
    for d in (path, path / "checkpoints"):
        found = sorted(_checkpoints(d))
        if found:
            return found[-1][1]
    return None


def load_policy_checkpoint(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    """(state arrays, meta) of the newest checkpoint at ``path``; CheckpointError if none or unreadable."""
    ckpt = find_latest_checkpoint(path)
    if ckpt is None:
        raise CheckpointError(f"no policy checkpoint (policy-<N>.npz) in {path}")
    problem = npz_problem(ckpt, "policy checkpoint")
    if problem:
        raise CheckpointError(f"cannot read policy checkpoint {ckpt}: {problem}")
    try:
        with np.load(ckpt, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("meta"))) if "meta" in arrays else None
    except Exception as e:  # zip, npy or JSON damage: all mean the same to the user
        raise CheckpointError(f"cannot read policy checkpoint {ckpt}: {' '.join(str(e).split())}") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"cannot read policy checkpoint {ckpt}: not a drlhp policy checkpoint "
                              "(no drlhp meta in it)")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"policy checkpoint {ckpt} has format {meta.get('format_version')}, "
                              f"this drlhp reads {FORMAT_VERSION}")
    meta["path"] = str(ckpt)
    return arrays, meta

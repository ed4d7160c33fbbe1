"""drlhp's one file format: an .npz archive of plain arrays plus a JSON ``meta`` string.

Policy checkpoints (``drlhp.policy.checkpoint``), reward predictor checkpoints (``drlhp.reward.checkpoint``)
and the preference database (``drlhp.reward.pref_db``) are all written with ``write`` (atomic, see
``drlhp.records.atomic``) and read with ``read``: never with ``allow_pickle``, and a file that is not one of
ours gives ``NpzJsonError`` with a short reason instead of numpy's hint to load it with pickle.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from drlhp.records.atomic import write_npz

NPZ_MAGIC = b"PK\x03\x04"  # every archive np.savez writes starts so


class NpzJsonError(Exception):
    """A file that is not a drlhp npz+JSON file, or is damaged; the message is a short reason."""


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


def write(path: str | Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """``arrays`` plus ``meta`` (as JSON) to ``path``, atomically."""
    write_npz(Path(path), {**arrays, "meta": np.array(json.dumps(meta))})


def read(path: str | Path, what: str, want: set[str] | None = None,
         type_names: bool = False) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays without meta, meta dict) of the file at ``path``, a drlhp ``what``.

    ``want``: the arrays to read (``meta`` among them), each required; None: all, and ``meta`` required.
    OSError from opening it (a missing file, say) passes through; anything else wrong raises NpzJsonError: not
    an archive, a wanted array missing, meta not a JSON dict, or zip/npy/JSON damage (its message on
    one line, after its exception's type name if ``type_names``).
    """
    with open(path, "rb") as f:
        if f.read(len(NPZ_MAGIC)) != NPZ_MAGIC:
            raise NpzJsonError(f"not a drlhp {what} (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = (want if want is not None else {"meta"}) - set(data.files)
            if missing:
                raise NpzJsonError(f"not a drlhp {what} (no {', '.join(sorted(missing))} in it)")
            arrays = {k: data[k] for k in (want if want is not None else data.files)}
        meta = json.loads(str(arrays.pop("meta")))
    except NpzJsonError:
        raise
    except Exception as e:  # zip, npy or JSON damage: all mean the same to the user
        why = f"{type(e).__name__}: {e}" if type_names else str(e)
        raise NpzJsonError(" ".join(why.split())) from None
    if not isinstance(meta, dict):
        raise NpzJsonError(f"not a drlhp {what} (meta is not a dict)")
    return arrays, meta


def read_or_raise(path: str | Path, what: str, error: type[Exception]) -> tuple[dict[str, np.ndarray], dict]:
    """``read`` with every failure, OSError included, as ``error("cannot read <what> <path>: <reason>")``."""
    try:
        return read(path, what)
    except OSError as e:
        why = e.strerror or type(e).__name__
    except NpzJsonError as e:
        why = str(e)
    raise error(f"cannot read {what} {path}: {why}")

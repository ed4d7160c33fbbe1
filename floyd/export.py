"""A run's policy as a small model folder (what the docs replay, under models/): weights only, in float16,
with the run's record beside them.

    python -m floyd export RUN --out models/pong-prefs [--checkpoint PATH]

The folder holds ``policy-<N>.npz`` (the newest checkpoint's network weights in float16 and its counters;
no optimizer state, about a quarter of a checkpoint) and the run's ``summary.json``, ``config.json``,
``run.json``, ``progress.csv`` and ``curves.png``. ``python run.py watch --env ENV --load_policy_ckpt_dir
FOLDER`` replays it; --load_policy_ckpt_dir also starts a training run from it (a fresh optimizer).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from drlhp.policy.checkpoint import FORMAT_VERSION, CheckpointError, find_latest_checkpoint, load_policy_checkpoint
from drlhp.runtime import npz_json
from floyd.index import FloydError

RECORD = ("summary.json", "config.json", "run.json", "progress.csv", "curves.png")


def weights_only(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A checkpoint's network weights in float16; RMSprop slots and the RNG state left out."""
    weights = {k: np.asarray(v, np.float16) for k, v in state.items() if k.startswith("weight_")}
    if not weights:
        raise FloydError("the checkpoint holds no network weights (weight_0, ...)")
    return weights


def export_model(run_dir: str | Path, out: str | Path, checkpoint: str | Path | None = None) -> Path:
    """Writes the model folder ``out`` from ``run_dir`` (its newest checkpoint, or ``checkpoint``); returns
    the policy file. FloydError (one line) if the run lacks a checkpoint or a record file, or ``out`` is a
    file or a folder with something in it."""
    run_dir, out = Path(run_dir), Path(out)
    missing = [name for name in RECORD if not (run_dir / name).is_file()]
    if missing:
        raise FloydError(f"{run_dir} has no {', '.join(missing)}: export a run that has finished or stopped")
    source = Path(checkpoint) if checkpoint else find_latest_checkpoint(run_dir)
    if source is None:
        raise FloydError(f"no policy checkpoint in {run_dir}")
    try:
        state, meta = load_policy_checkpoint(source)
    except CheckpointError as e:
        raise FloydError(str(e)) from None
    summary_steps = json.loads((run_dir / "summary.json").read_text()).get("timesteps")
    if summary_steps != meta.get("timesteps"):
        raise FloydError(f"{run_dir}'s summary.json is at {summary_steps} agent steps but the checkpoint "
                         f"{meta['path']} at {meta.get('timesteps')}: export a run (or sitting) that has stopped, "
                         "or name the checkpoint that its summary describes")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FloydError(f"{out} exists and is not an empty folder; choose another --out or remove it")
    out.mkdir(parents=True, exist_ok=True)
    keep = {k: v for k, v in meta.items() if k not in ("path", "format_version")}
    policy = out / Path(meta["path"]).name
    npz_json.write(policy, weights_only(state), {**keep, "format_version": FORMAT_VERSION, "weights_only": True,
                                                  "exported_from": str(meta["path"])})
    for name in RECORD:
        shutil.copyfile(run_dir / name, out / name)
    return policy

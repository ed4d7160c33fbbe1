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

from drlhp.policy.checkpoint import CheckpointError, load_policy_checkpoint, save_weights_only
from floyd.index import FloydError

RECORD = ("summary.json", "config.json", "run.json", "progress.csv", "curves.png")


def export_model(run_dir: str | Path, out: str | Path, checkpoint: str | Path | None = None) -> Path:
    """Writes the model folder ``out`` from ``run_dir`` (its newest checkpoint, or ``checkpoint``); returns
    the policy file. FloydError (one line) if the run lacks a checkpoint or a record file, or ``out`` is a
    file or a folder with something in it."""
    run_dir, out = Path(run_dir), Path(out)
    missing = [name for name in RECORD if not (run_dir / name).is_file()]
    if missing:
        raise FloydError(f"{run_dir} has no {', '.join(missing)}: export a run that has finished or stopped")
    try:
        state, meta = load_policy_checkpoint(checkpoint or run_dir)  # the newest, in run_dir/checkpoints
    except CheckpointError as e:
        raise FloydError(str(e)) from None
    summary_steps = json.loads((run_dir / "summary.json").read_text()).get("timesteps")
    if summary_steps != meta.get("timesteps"):
        raise FloydError(f"{run_dir}'s summary.json is at {summary_steps} agent steps but the checkpoint "
                         f"{meta['path']} at {meta.get('timesteps')}: export a run (or sitting) that has stopped, "
                         "or name the checkpoint that its summary describes")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FloydError(f"{out} exists and is not an empty folder; choose another --out or remove it")
    keep = {k: v for k, v in meta.items() if k not in ("path", "format_version")}
    out.mkdir(parents=True, exist_ok=True)
    try:
        policy = save_weights_only(out / Path(meta["path"]).name, state, {**keep, "exported_from": meta["path"]})
    except CheckpointError as e:
        raise FloydError(str(e)) from None
    for name in RECORD:
        shutil.copyfile(run_dir / name, out / name)
    return policy

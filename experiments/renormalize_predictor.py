#!/usr/bin/env python
"""Reset a saved reward predictor's normalization from many clips of a preference database.

    python experiments/renormalize_predictor.py RUN_DIR PREFS [--segments 200] [--save]

RUN_DIR holds reward_predictor/reward_predictor.npz and config.json (its architecture); PREFS is a
preference database (a prefs.npz or a run directory). Prints the per-step standard deviation of the
normalized reward over the newest 400 clips before and after setting the statistics from the newest
--segments clips (replacing, not blending), and with --save writes them into the checkpoint. Made for
issue 12's E2 (docs/results/pong.md): predictors saved by pretrain_reward_predictor before 2026-11-23 took
their statistics from 20 clips, which measured a Pong predictor's spread 6x too small.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import threading
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout


def load_run_trainer(run: Path, prefs, script: str, predictor=None):
    """(a RewardTrainer with the run's architecture and the predictor loaded, the preference database ``prefs``:
    a prefs.npz or a run directory, every entry kept). ``predictor``: a .npz to load instead of the run's own.
    TensorFlow must be configured first."""
    from drlhp.reward.checkpoint import PREDICTOR_FILE, PREFS_FILE, find_file, saved_reward_config
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    cfg = saved_reward_config(run)
    if cfg is None:
        raise SystemExit(f"{script}: no readable config.json in {run}")
    db = PrefDB.load(find_file(prefs, PREFS_FILE), max_prefs=10**9)
    trainer = RewardTrainer(db.segment_obs(db.segment_ids()[0]).shape[1:], cfg, db, threading.Lock(), seed=0)
    trainer.load(Path(predictor) if predictor else run / PREDICTOR_FILE)
    return trainer, db


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("prefs")
    ap.add_argument("--segments", type=int, default=200)
    ap.add_argument("--save", action="store_true")
    args = ap.parse_args(argv)
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(1, 1, seed=0)
    from drlhp.reward.checkpoint import PREDICTOR_FILE
    from drlhp.reward.trainer import FIRST_NORM_FACTOR

    run = Path(args.run_dir)
    trainer, db = load_run_trainer(run, args.prefs, "renormalize_predictor.py")
    ids = db.segment_ids()
    obs = np.concatenate([db.segment_obs(i) for i in ids[-400:]])

    def spread(when: str) -> None:
        e = trainer.ensemble
        print(f"{when}: reward std over {min(400, len(ids))} clips {e.reward(obs).std():.4f}; "
              f"raw mean {e.norm_mean}, raw std {e.norm_std}")

    spread("before")
    trainer.ensemble.norm.is_set = False  # replace, not blend
    trainer.cfg = dataclasses.replace(trainer.cfg, norm_segments=args.segments // FIRST_NORM_FACTOR)
    trainer.publish()  # the first publication: from 10x norm_segments clips
    spread("after")
    if args.save:
        trainer.save(run / PREDICTOR_FILE)
        print(f"saved {run / PREDICTOR_FILE}")


if __name__ == "__main__":
    main()

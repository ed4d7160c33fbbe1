"""A fresh reward predictor trained offline on a preference database, and its reward as the MuJoCo diagnoses score it.
Shared by mujoco_predictor_retrain.py, mujoco_predictor_repair.py and mujoco_short_clips.py.

    run_reward_config(run)         the run's RewardConfig (its config.json), convolutions in float32
    train_fresh(db, cfg, seed, steps, fixed_l2=None)   a RewardTrainer on float32 inputs trained ``steps`` steps,
                                   L2 adapted every eval_interval steps as in a run (or held at ``fixed_l2``)
    normalized_reward(ensemble, rows)   x -> 0.05 x each member's raw output z-scored over ``rows``, averaged
"""

import json
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.reward.pref_db import PrefDB
from drlhp.reward.trainer import RewardTrainer


def run_reward_config(run) -> RewardConfig:
    recorded = json.loads((Path(run) / "config.json").read_text())["reward"]
    cfg = RewardConfig(**{k: v for k, v in recorded.items() if k in RewardConfig.__dataclass_fields__})
    return replace(cfg, bfloat16="off")


def train_fresh(db: PrefDB, cfg: RewardConfig, seed: int, steps: int, fixed_l2: float | None = None) -> RewardTrainer:
    shape = db.segment_obs(db.entries("train")[0].id1).shape[1:]
    tr = RewardTrainer(shape, cfg, db, threading.Lock(), seed, obs_dtype=np.float32)
    if fixed_l2 is not None:
        tr.l2[:] = fixed_l2
    for i in range(steps):
        tr.train_step()
        if fixed_l2 is None and (i + 1) % cfg.eval_interval == 0:
            tr.evaluate()
    return tr


def normalized_reward(ensemble, rows: np.ndarray):
    raw = ensemble.predict(rows)
    mu, sd = raw.mean(1, keepdims=True), raw.std(1, keepdims=True)
    return lambda x: 0.05 * ((ensemble.predict(x) - mu) / sd).mean(0)

"""Offline: train a fresh predictor ensemble on a saved run's own preference database (no RL, no new labels) and
score the episodes mujoco_predictor_diag.py saved (its .npz), to see whether the predictor's training, not its
data, makes it rank its own run's policy above the baselines.

    python experiments/mujoco_predictor_retrain.py RUN_DIR EPISODES.npz --steps 4000 --l2 adapt|FLOAT [--seed 0]

Variants: ``--l2 adapt`` the run's rule (L2 adapted every eval_interval steps to keep val/train loss in 1.1-1.5);
a number: that L2 fixed. The run's RewardConfig otherwise (3 members, lr, batch 16, random_answer_prob 0.1).
Reports DB train/val accuracy and, per policy of the npz, the mean episode sum of 0.05 x (each member's raw output
z-scored over the DB's rows, averaged), as mujoco_predictor_diag.py's table."""

import argparse
import json
from pathlib import Path

import numpy as np

from drlhp.reward.pref_db import PrefDB
from fresh_predictor import normalized_reward, run_reward_config, train_fresh
from mujoco_diag_episodes import policy_returns

p = argparse.ArgumentParser()
p.add_argument("run")
p.add_argument("npz")
p.add_argument("--steps", type=int, default=4000)
p.add_argument("--l2", default="adapt")
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()

cfg = run_reward_config(args.run)
db = PrefDB.load(Path(args.run) / "prefs" / "prefs.npz")
fixed = None if args.l2 == "adapt" else float(args.l2)
tr = train_fresh(db, cfg, args.seed, args.steps, fixed)
ev = tr.evaluate()
reward = normalized_reward(tr.ensemble, db.obs_rows())


def acc(split):
    ents = db.entries(split)
    c = [
        (reward(db.segment_obs(e.id1)).sum() > reward(db.segment_obs(e.id2)).sum()) == (e.mu[0] > e.mu[1])
        for e in ents
        if e.mu[0] != e.mu[1]
    ]
    return round(float(np.mean(c)), 3)


print(
    json.dumps(
        {
            "run": args.run,
            "steps": args.steps,
            "l2": args.l2,
            "l2_end": tr.l2.tolist(),
            "db_train_acc": acc("train"),
            "db_val_acc": acc("val"),
            "policies": {
                n: {"pred": round(a, 1), "true": round(b, 0)} for n, (a, b) in policy_returns(args.npz, reward).items()
            },
        }
    )
)

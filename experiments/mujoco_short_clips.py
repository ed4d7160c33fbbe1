"""Offline, issue 61's H61d: would a bad seed's own clips, cut shorter, have taught its predictor that the fall-free
behaviour is better? No RL and no new policy data: the run's preference database, each labelled pair replaced by one
window of ``--window`` steps of each clip (a random offset in each, seeded), labelled again by the synthetic oracle
on the window's true rewards (the larger sum preferred, equal sums a tie: pref_interface/oracle.py), so that both
databases hold the same pairs, as many labels and the same policy's behaviour; only the clip's length differs. A
fresh ensemble (the run's RewardConfig, L2 adapted as in the run) is trained on each for ``--steps`` steps, per
``--seeds``, and scores the episodes mujoco_predictor_diag.py saved (its .npz: another run's fall-free policy beside
this run's own), as mujoco_predictor_retrain.py does.

    MUJOCO_GL=egl PYTHONPATH=. python experiments/mujoco_short_clips.py RUN_DIR EPISODES.npz --window 47
        [--steps 4000] [--seeds 0 1 2]

Prints, per database and training seed: the share of its clips without a fall, the database's validation accuracy,
and per policy of the npz the mean predicted and true episode return.
"""

import argparse
import json
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.processes.messages import Preference, Segment
from drlhp.reward.pref_db import PrefDB
from fresh_predictor import normalized_reward, run_reward_config, train_fresh
from mujoco_diag_episodes import policy_returns
from mujoco_mechanism import FALL_CUT  # a step's oracle reward below this is a fall (the penalty 100)
from pref_interface.oracle import SyntheticOracle


def windowed(db: PrefDB, window: int, rng: np.random.Generator) -> PrefDB:
    """A database of the same pairs, each clip cut to one random window of ``window`` steps, labelled anew."""
    oracle = SyntheticOracle()
    out = PrefDB(max_prefs=len(db) + 1, seed=int(rng.integers(1 << 30)))
    for split in ("train", "val"):
        for e in db.entries(split):
            segs = []
            for sid in (e.id1, e.id2):
                obs, rew = db.segment_obs(sid), db.segment_rewards(sid)
                k = int(rng.integers(0, len(rew) - window + 1))
                segs.append(Segment(obs=obs[k : k + window].copy(), frames=np.zeros((window, 0, 0), np.uint8),
                                    true_rewards=np.asarray(rew[k : k + window], np.float32), env_id="cut",
                                    worker=0, step=0))
            out.add(Preference(segs[0], segs[1], oracle.label(segs[0], segs[1])))
    return out


def fall_free_share(db: PrefDB) -> float:
    clips = [sid for split in ("train", "val") for e in db.entries(split) for sid in (e.id1, e.id2)]
    return float(np.mean([(db.segment_rewards(s) >= FALL_CUT).all() for s in clips]))


def train_and_score(db: PrefDB, cfg: RewardConfig, seed: int, steps: int, npz: str) -> dict:
    tr = train_fresh(db, cfg, seed, steps)
    ev = tr.evaluate()
    reward = normalized_reward(tr.ensemble, db.obs_rows())
    scores = policy_returns(npz, reward)
    return {"val_accuracy": round(float(ev.get("reward/val_accuracy", float("nan"))), 3),
            "policies": {n: {"pred": round(a, 1), "true": round(b)} for n, (a, b) in scores.items()}}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("npz")
    p.add_argument("--window", type=int, required=True)
    p.add_argument("--steps", type=int, default=4000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = p.parse_args()
    cfg = run_reward_config(args.run)
    db = PrefDB.load(Path(args.run) / "prefs" / "prefs.npz")
    cut = windowed(db, args.window, np.random.default_rng(12345))
    for name, d in (("full clips", db), (f"{args.window}-step windows", cut)):
        for seed in args.seeds:
            res = train_and_score(d, cfg, seed, args.steps, args.npz)
            print(json.dumps({"db": name, "labels": len(d), "fall_free_clips": round(fall_free_share(d), 3),
                              "seed": seed, **res}), flush=True)


if __name__ == "__main__":
    main()

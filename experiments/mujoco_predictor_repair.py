"""Offline: the same clips, other pairs. Takes every clip of a run's preference database, draws N new pairs among
them uniformly (across the run's whole history, where the run paired clips of its recent pool), labels them by the
oracle (the clips' stored task rewards), trains a fresh RewardEnsemble (the run's network and input, fixed L2) and
scores mujoco_predictor_diag.py's saved episodes (.npz) as mujoco_predictor_retrain.py does. --pairs db: the run's own
pairs instead (the control, same training code).
    python experiments/mujoco_predictor_repair.py RUN_DIR EPISODES.npz --pairs 1400|db --steps 1500"""

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.reward.model import RewardEnsemble
from drlhp.reward.pref_db import PrefDB
from fresh_predictor import normalized_reward
from mujoco_diag_episodes import policy_returns

p = argparse.ArgumentParser()
p.add_argument("run")
p.add_argument("npz")
p.add_argument("--pairs", default="1400")
p.add_argument("--steps", type=int, default=1500)
p.add_argument("--members", type=int, default=1)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()
db = PrefDB.load(Path(args.run) / "prefs" / "prefs.npz")
ids = db.segment_ids()
obs = {i: db.segment_obs(i) for i in ids}
ret = {i: float(db.segment_rewards(i).sum()) for i in ids}
rng = np.random.default_rng(args.seed)
if args.pairs == "db":
    pairs = [(e.id1, e.id2, e.mu) for e in db.train + db.val if e.mu[0] != e.mu[1]]
else:
    pairs = []
    while len(pairs) < int(args.pairs):
        a, b = rng.choice(len(ids), 2, replace=False)
        if ret[ids[a]] != ret[ids[b]]:
            pairs.append((ids[a], ids[b], (1.0, 0.0) if ret[ids[a]] > ret[ids[b]] else (0.0, 1.0)))
cfg = replace(RewardConfig(), n_members=args.members, batchnorm=False, dropout=0.0, bfloat16="off")
rows = np.concatenate(list(obs.values()))
ens = RewardEnsemble((rows.shape[1],), cfg, args.seed, np.float32)
ens.set_input_norm(rows.mean(0), rows.std(0))
s1 = np.stack([obs[a] for a, _, _ in pairs])
s2 = np.stack([obs[b] for _, b, _ in pairs])
mu = np.array([m for _, _, m in pairs], np.float32)
l2 = np.full(args.members, 1e-4, np.float32)
for _ in range(args.steps):
    idx = rng.integers(0, len(pairs), (args.members, cfg.batch_size))
    ens.train_step(s1[idx], s2[idx], mu[idx], l2)
reward = normalized_reward(ens, rows)
dbacc = float(
    np.mean(
        [
            (reward(obs[e.id1]).sum() > reward(obs[e.id2]).sum()) == (e.mu[0] > e.mu[1])
            for e in db.val
            if e.mu[0] != e.mu[1]
        ]
    )
)
pol = policy_returns(args.npz, reward)
tr = [n for n in pol if n != "random"]
rk = lambda a: np.argsort(np.argsort(a))  # noqa: E731
print(
    json.dumps(
        {
            "run": args.run,
            "pairs": args.pairs,
            "n_pairs": len(pairs),
            "clips": len(ids),
            "steps": args.steps,
            "run_val_pairs_acc": round(dbacc, 3),
            "rank_corr_trained": round(
                float(np.corrcoef(rk([pol[n][0] for n in tr]), rk([pol[n][1] for n in tr]))[0, 1]), 2
            ),
            "policies": {n: {"pred": round(a, 1), "true": round(b)} for n, (a, b) in pol.items()},
        }
    )
)

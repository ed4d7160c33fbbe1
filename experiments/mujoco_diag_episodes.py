"""The episodes mujoco_predictor_diag.py saves (its .npz: keys POLICY|EPISODE|x, the predictor's inputs, and
POLICY|EPISODE|true, the oracle's rewards), scored by a reward function: per policy, the mean predicted and the mean
true episode return. Shared by mujoco_predictor_retrain.py and mujoco_predictor_repair.py."""
from collections import defaultdict

import numpy as np


def policy_returns(npz_path, reward) -> dict[str, tuple[float, float]]:
    """{policy: (mean of reward(x).sum(), mean true return)} over its saved episodes, policies sorted by name."""
    d = np.load(npz_path)
    per = defaultdict(list)
    for k in d.files:
        name, i, kind = k.split("|")[:3]
        if kind == "x":
            per[name].append((reward(d[k]).sum(), d[f"{name}|{i}|true"].sum()))
    return {n: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v]))) for n, v in sorted(per.items())}

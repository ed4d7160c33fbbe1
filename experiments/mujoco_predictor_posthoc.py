"""Post-hoc measures on mujoco_predictor_diag.py's saved episodes (its --out with .npz): per predictor, over the
trained policies' steps (no random policy), how well it follows the oracle's reward away from falls.

* ordinary-step correlation: predicted vs true reward on steps farther than 10 from any fall (the oracle there:
  forward velocity + 1), per step and over 20-step windows;
* correlation of the predictor with the torso's forward velocity (Hopper obs[5], Walker2d obs[8]) on those steps;
* per policy: the mean predicted reward on its ordinary steps (in sd-0.05 units x 20, i.e. per-step z) and the
  mean true reward there: does the predictor pay the baseline's faster gait more than its own run's?
    python experiments/mujoco_predictor_posthoc.py /tmp/mjdiag/hopper2.npz"""

import sys
from collections import defaultdict

import numpy as np

d = np.load(sys.argv[1])
xvel = 5 if "opper" in sys.argv[1] else 8
eps = defaultdict(dict)
for k in d.files:
    parts = k.split("|")
    name, i, kind = parts[0], int(parts[1]), parts[2]
    eps[(name, i)][kind if kind != "pred" else "pred|" + parts[3]] = d[k]
preds = sorted({k.split("|", 1)[1] for e in eps.values() for k in e if k.startswith("pred|")})
names = sorted({n for n, _ in eps})
for q in preds:
    P, T, V, W_p, W_t, per = [], [], [], [], [], {}
    for (name, i), e in sorted(eps.items()):
        r, t, f, x = e["pred|" + q], e["true"], e["fell"], e["x"]
        near = np.zeros(len(r), bool)
        for k in np.flatnonzero(f):
            near[max(0, k - 10) : k + 11] = True
        ok = ~near
        per.setdefault(name, []).append((r[ok].mean(), t[ok].mean(), ok.sum()))
        if name == "random":
            continue
        P.append(r[ok])
        T.append(t[ok])
        V.append(x[ok, xvel])
        for s in range(0, len(r) - 20, 20):
            if ok[s : s + 20].all():
                W_p.append(r[s : s + 20].sum())
                W_t.append(t[s : s + 20].sum())
    P, T, V = map(np.concatenate, (P, T, V))
    def c(a, b):
        return float(np.corrcoef(a, b)[0, 1])
    print(
        f"{q}: trained policies, ordinary steps (>10 from a fall): corr(pred,true) step {c(P, T):.3f}, "
        f"20-step windows {c(W_p, W_t):.3f} (n={len(W_p)}); corr(pred, x-velocity obs[{xvel}]) {c(P, V):.3f}"
    )
    sd = P.std()
    for name in names:
        m = np.array(per[name])
        print(
            f"    {name:24s} ordinary steps: pred mean {m[:, 0].mean() / sd:+.2f} sd-units  "
            f"true mean {m[:, 1].mean():.2f}"
        )

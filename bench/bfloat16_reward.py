#!/usr/bin/env python
"""Does a trained predictor keep its reward when its convolutions compute in bfloat16 (issue 20)?

    python bench/bfloat16_reward.py RUN_DIR [--clips 512]

Loads RUN_DIR's reward predictor and its preference database, and runs the same float32 weights twice
on the same clips: once as trained (float32), once with --reward_bfloat16 on (the convolutions in
bfloat16). It prints, per member: the raw output's mean and spread (std over steps) in float32; the
bfloat16 error (std of bfloat16 - float32 over steps) as a share of that spread; the correlation of the
two per-step rewards and of the two clip sums; the share of the database's pairs whose predicted
preference flips; and the validation accuracy with each. A trained Pong predictor carries an offset of
about 40 in its raw output against a spread of about 0.13 (docs/results/speed.md, session 11): if rounding the
features to 8 bits of mantissa costs a large share of that spread, bfloat16 must stay off for it.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--clips", type=int, default=512, help="clips (of the database's newest) to compare on")
    ap.add_argument("--pairs", type=int, default=512, help="validation pairs for the accuracy and the flips")
    args = ap.parse_args(argv)

    from drlhp.processes.cpu import BFLOAT16_FLAGS, cpu_flags, cpu_model
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(1, 1, seed=0, onednn="auto")
    from drlhp.reward.checkpoint import load_predictor, saved_reward_config
    from drlhp.reward.model import RewardEnsemble
    from drlhp.reward.pref_db import PrefDB

    run = Path(args.run_dir)
    cfg = saved_reward_config(run)
    if cfg is None:
        print(f"{run}: no readable config.json", file=sys.stderr)
        return 2
    state, meta = load_predictor(run / "reward_predictor")
    db = PrefDB.load(run / "prefs" / "prefs.npz")
    ids = db.newest_segment_ids(args.clips)
    obs = np.stack([db.segment_obs(i) for i in ids])  # (N, T, *obs_shape)
    n, t = obs.shape[:2]
    flags = sorted(f for f in cpu_flags() if f in BFLOAT16_FLAGS)
    print(f"CPU: {cpu_model()} ({' '.join(flags) or 'no bfloat16 flags'}); {run}: predictor step "
          f"{meta.get('steps')}, {n} clips of {t} steps, {len(db)} preferences")

    val = db.entries("val")
    idx = np.arange(max(0, len(val) - args.pairs), len(val))
    out = {}
    for name, setting in (("float32", "off"), ("bfloat16", "on")):
        ens = RewardEnsemble(obs.shape[2:], replace(cfg, bfloat16=setting), seed=0)
        ens.set_state(state)
        raw = np.concatenate([ens.predict(obs[i:i + 32].reshape(-1, *obs.shape[2:]))
                              for i in range(0, n, 32)], axis=1)  # (M, N*T)
        diffs, accs = [], []
        for i in range(0, len(idx), 32):  # chunks: 32 pairs of 25-step clips at a time
            s1, s2, mu = db.batch("val", idx[i:i + 32])
            d = (ens.predict(s1.reshape(-1, *obs.shape[2:])).reshape(-1, len(mu), t).sum(2)
                 - ens.predict(s2.reshape(-1, *obs.shape[2:])).reshape(-1, len(mu), t).sum(2))
            diffs.append(d)
            strict = mu[:, 0] != mu[:, 1]
            accs.append(((d > 0) == (mu[:, 0] > mu[:, 1]))[:, strict])
        out[name] = (raw, np.concatenate(diffs, axis=1), np.concatenate(accs, axis=1).mean(axis=1))
    raw32, d32, acc32 = out["float32"]
    raw16, d16, acc16 = out["bfloat16"]
    for m in range(raw32.shape[0]):
        a, b = raw32[m], raw16[m]
        sums32, sums16 = a.reshape(n, t).sum(1), b.reshape(n, t).sum(1)
        flips = np.mean((d32[m] > 0) != (d16[m] > 0))
        print(f"member {m}: float32 raw mean {a.mean():+.4f}, spread (std over steps) {a.std():.4f}; "
              f"bfloat16 error: mean {np.mean(b - a):+.4f}, std {np.std(b - a):.4f} "
              f"= {np.std(b - a) / a.std():.1%} of the spread; per-step correlation {np.corrcoef(a, b)[0, 1]:.4f}, "
              f"clip-sum correlation {np.corrcoef(sums32, sums16)[0, 1]:.4f}; predicted preference flips on "
              f"{flips:.1%} of {d32.shape[1]} validation pairs; validation accuracy "
              f"{acc32[m]:.3f} (float32) vs {acc16[m]:.3f} (bfloat16)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())

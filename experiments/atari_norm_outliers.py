#!/usr/bin/env python
"""Which clips of an Atari run's preference database inflate its reward normalization's spread?

    python experiments/atari_norm_outliers.py RUN_DIR [--predictor NPZ] [--newest 1000] [--window 100]
                                             [--png OUT.png]

Made for Pong H59 seed 2's collapse (docs/results/pong.md, session 36): its normalization, measured at each
publication on the newest 100 clips' frames (--reward_norm_momentum 1), went from a spread of 0.09 to 3.1,
then 12.9, in steps that each lasted a few publications, and the policy's game fell apart meanwhile. Steps
like these come from single clips whose frames the predictor scores far from all others, while they are among
the newest 100.

Scores the frames of the newest --newest clips (in the order they were stored) with the predictor (default:
the run's own, reward_predictor/reward_predictor.npz; a milestone's file with --predictor), and prints
- the spread of raw outputs over every window of --window consecutive clips, as the publications measured it
  (the largest windows, and the median), and how much of each large spread one clip makes;
- the clips farthest from the median, in robust standard deviations (1.4826 x the median absolute deviation):
  where in the run they were made (agent step, worker), their true rewards, their frames' brightness;
and with --png a strip of the most extreme clips' frames (the newest frame of each stack) to look at.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout (experiments/ is on the path as the
                                                                 # script's own folder: load_run_trainer)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--predictor", help="a predictor .npz (default: the run's own)")
    ap.add_argument("--newest", type=int, default=1000)
    ap.add_argument("--window", type=int, default=100)
    ap.add_argument("--png")
    args = ap.parse_args(argv)
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(1, 1, seed=0)
    from renormalize_predictor import load_run_trainer

    run = Path(args.run_dir)
    trainer, db = load_run_trainer(run, run, "atari_norm_outliers.py", args.predictor)
    ids = db.segment_ids()[-args.newest:]
    raw = [trainer.ensemble.predict(db.segment_obs(i)).mean(axis=0) for i in ids]  # (T,) per clip, members averaged
    flat = np.concatenate(raw)
    med = float(np.median(flat))
    rsd = max(1.4826 * float(np.median(np.abs(flat - med))), 1e-9)
    print(f"{len(ids)} clips, {flat.size} frames: raw median {med:.3f}, robust sd {rsd:.4f}, sd {flat.std():.4f}, "
          f"min {flat.min():.2f}, max {flat.max():.2f}")

    w = args.window
    spreads = []
    for k in range(0, max(1, len(ids) - w + 1)):
        x = np.concatenate(raw[k:k + w])
        spreads.append(float(x.std()))
    spreads = np.array(spreads)
    print(f"spread over windows of {w} clips: median {np.median(spreads):.4f}, max {spreads.max():.4f} "
          f"({spreads.max() / np.median(spreads):.1f}x the median)")
    for k in np.argsort(spreads)[::-1][:5]:
        clips = raw[k:k + w]
        worst = int(np.argmax([np.abs(c - med).max() for c in clips]))
        without = np.concatenate(clips[:worst] + clips[worst + 1:]).std()
        s = db.segment(ids[k + worst])
        print(f"  window at clip {k}: spread {spreads[k]:.4f}; without its farthest clip ({ids[k + worst]}, "
              f"agent step {s.step}) {without:.4f}")

    dev = np.array([np.abs(c - med).max() / rsd for c in raw])
    order = np.argsort(dev)[::-1][:12]
    print("farthest clips (robust sds from the median: max over frames; frames beyond 10):")
    for j in order:
        s = db.segment(ids[j])
        beyond = int((np.abs(raw[j] - med) / rsd > 10).sum())
        obs = s.obs.astype(np.float32)
        print(f"  {ids[j]}: {dev[j]:8.1f} sds, {beyond:2d}/{len(raw[j])} frames beyond 10, agent step {s.step}, "
              f"worker {s.worker}, true rewards {s.true_rewards.sum():+.0f} "
              f"(nonzero at {np.flatnonzero(s.true_rewards).tolist()}), raw {raw[j].min():.2f}..{raw[j].max():.2f}, "
              f"brightness {obs.mean():.1f}")
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = order[:6]
        fig, axes = plt.subplots(len(rows), 8, figsize=(12, 1.7 * len(rows)))
        for r, j in enumerate(rows):
            obs = db.segment_obs(ids[j])
            far = np.argsort(np.abs(raw[j] - med))[::-1][:8]
            for c, t in enumerate(sorted(far)):
                ax = axes[r, c]
                ax.imshow(obs[t][..., -1], cmap="gray", vmin=0, vmax=255)
                ax.set_title(f"{ids[j][:8]} t{t} {(raw[j][t] - med) / rsd:+.0f}sd", fontsize=6)
                ax.axis("off")
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()

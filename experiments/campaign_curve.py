#!/usr/bin/env python
"""The Pong campaign's curve (issue 19): true return, episode length and returns per game against agent
steps and against running time, every sitting marked, from a run's progress.csv, to one PNG.

    python experiments/campaign_curve.py RUN_DIR [--out docs/pong_campaign.png] [--title TEXT]

Running time is the policy's training time summed over sittings (system/wall_s); a sitting starts where
system/sitting changes (dotted lines). Random play's figures (experiments/campaign_check.py) are drawn grey.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))
from campaign_check import RANDOM_LENGTH, RANDOM_RETURNS  # noqa: E402
from drlhp.records.curves import pyplot, read_progress_csv, save_png  # noqa: E402

PANELS = (("policy/true_return_last100", "true return (last 100 games)", -20.4),
          ("policy/episode_length_last100", "episode length (agent steps)", RANDOM_LENGTH),
          ("policy/returns_per_game_last100", "returns per game", RANDOM_RETURNS))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    cols = read_progress_csv(args.run_dir / "progress.csv")
    if not cols.get("step"):
        print(f"{args.run_dir}: no progress.csv", file=sys.stderr)
        return 2
    n = len(cols["step"])
    column = lambda key: cols.get(key) or [math.nan] * n  # noqa: E731
    steps = [s / 1e6 for s in cols["step"]]
    hours = [w / 3600 for w in column("system/wall_s")]
    sitting = column("system/sitting")
    starts = [i for i in range(1, n) if sitting[i] != sitting[i - 1] and not math.isnan(sitting[i])]
    plt = pyplot()
    fig, axes = plt.subplots(len(PANELS), 2, figsize=(11, 8.5), sharex="col")
    for row, (key, label, baseline) in enumerate(PANELS):
        ys = column(key)
        for col, xs in enumerate((steps, hours)):
            ax = axes[row][col]
            ax.plot(xs, ys, lw=1.2)
            ax.axhline(baseline, color="grey", lw=0.8, ls="--", label="random play" if row == 0 else None)
            for i in starts:
                ax.axvline(xs[i], color="k", lw=0.6, ls=":")
            if col == 0:
                ax.set_ylabel(label)
            ax.grid(alpha=0.3)
    axes[-1][0].set_xlabel("agent steps (millions)")
    axes[-1][1].set_xlabel("running time (hours; sittings dotted)")
    axes[0][0].legend(loc="upper left", fontsize=8)
    fig.suptitle(args.title or f"{args.run_dir.name}: {len(starts) + 1} sitting(s), {steps[-1]:.2f}M agent steps, "
                 f"{hours[-1]:.2f} h")
    fig.tight_layout()
    out = save_png(fig, args.out or args.run_dir / "campaign.png")
    print(f"curve: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

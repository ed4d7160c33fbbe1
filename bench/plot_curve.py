#!/usr/bin/env python
"""Plot a run's true return against agent steps and wall time, from its progress.csv, to a PNG.

    python bench/plot_curve.py RUN_DIR [--out curve.png] [--title TEXT] [--target 18]
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_progress(run_dir: Path) -> dict[str, list[float]]:
    with open(run_dir / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    cols: dict[str, list[float]] = {}
    for key in rows[0] if rows else []:
        cols[key] = [float(r[key]) if r.get(key) not in (None, "") else float("nan") for r in rows]
    return cols


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run_dir", type=Path)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--title", default=None)
    p.add_argument("--target", type=float, default=None, help="draw a horizontal line at this return")
    args = p.parse_args()
    data = read_progress(args.run_dir)
    steps = [s / 1e6 for s in data["step"]]
    ret = data["policy/true_return_last100"]
    hours = [w / 3600 for w in data["system/wall_s"]]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, x, label in ((axes[0], steps, "agent steps (millions)"), (axes[1], hours, "wall time (hours)")):
        ax.plot(x, ret, lw=1.5)
        if args.target is not None:
            ax.axhline(args.target, color="grey", ls="--", lw=1, label=f"target {args.target:g}")
            ax.legend(loc="lower right")
        ax.set_xlabel(label)
        ax.set_ylabel("true return, mean of last 100 episodes")
        ax.grid(alpha=0.3)
    fig.suptitle(args.title or args.run_dir.name)
    fig.tight_layout()
    out = args.out or args.run_dir / "curve.png"
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()

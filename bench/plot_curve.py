#!/usr/bin/env python
"""Plot runs' true return against agent steps and wall time, from their progress.csv, to one PNG.

    python bench/plot_curve.py RUN_DIR [RUN_DIR ...] [--labels A B ...] [--out curve.png]
                               [--title TEXT] [--target 18] [--with_setup]

--with_setup: the time axis is the run's whole running time (bench/running_time.py): the policy's
training time plus what came before it (gathering the initial preferences, pretraining the predictor).
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from drlhp.runtime.run_paths import RunPaths  # noqa: E402


def read_progress(run_dir: Path) -> dict[str, list[float]]:
    with open(RunPaths(run_dir) / RunPaths.PROGRESS, newline="") as f:
        rows = list(csv.DictReader(f))
    cols: dict[str, list[float]] = {}
    for key in rows[0] if rows else []:
        cols[key] = [float(r[key]) if r.get(key) not in (None, "") else float("nan") for r in rows]
    return cols


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("run_dirs", type=Path, nargs="+")
    p.add_argument("--labels", nargs="*", default=None, help="one per run (default: folder names)")
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--title", default=None)
    p.add_argument("--target", type=float, default=None, help="draw a horizontal line at this return")
    p.add_argument("--with_setup", action="store_true",
                   help="time axis: running time including gathering and pretraining (bench/running_time.py)")
    args = p.parse_args()
    labels = args.labels or [d.name for d in args.run_dirs]
    if len(labels) != len(args.run_dirs):
        p.error("give one label per run directory")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for run_dir, name in zip(args.run_dirs, labels):
        data = read_progress(run_dir)
        steps = [s / 1e6 for s in data["step"]]
        setup_s = 0.0
        if args.with_setup:
            import running_time  # bench/running_time.py, beside this script

            setup_s = running_time.summary(run_dir)["setup_s"]
        hours = [(setup_s + w) / 3600 for w in data["system/wall_s"]]
        for ax, x in ((axes[0], steps), (axes[1], hours)):
            ax.plot(x, data["policy/true_return_last100"], lw=1.5, label=name)
    time_label = ("running time (hours), gathering and pretraining included" if args.with_setup
                  else "policy training time (hours)")
    for ax, label in ((axes[0], "agent steps (millions)"), (axes[1], time_label)):
        if args.target is not None:
            ax.axhline(args.target, color="grey", ls="--", lw=1, label=f"target {args.target:g}")
        ax.legend(loc="lower right")
        ax.set_xlabel(label)
        ax.set_ylabel("true return, mean of last 100 episodes")
        ax.grid(alpha=0.3)
    fig.suptitle(args.title or ", ".join(labels))
    fig.tight_layout()
    out = args.out or args.run_dirs[0] / "curve.png"
    fig.savefig(out, dpi=100)
    print(out)


if __name__ == "__main__":
    main()

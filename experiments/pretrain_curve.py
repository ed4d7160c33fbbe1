#!/usr/bin/env python
"""A run's pretraining curve (validation accuracy against predictor steps), and where the early-stop rule
(--reward_pretrain_patience P, --reward_pretrain_min_gain G) would have stopped it, for several P.

    python experiments/pretrain_curve.py RUN_DIR [RUN_DIR ...] [--patience 10 20 40] [--min_gain 0.005]

Reads <run_dir>/progress_reward.csv: its pretraining rows are the evaluations before the predictor's first
online step (rows without reward/online_steps; all rows of a pretrain_reward_predictor run). The rule is
drlhp.reward.trainer.pretrain_rule (the trainer's own): a new best must beat the old by G; P evaluations
without one stop it. Runs recorded before the validation pairs were fixed (commit 45d73fa) drew them anew at
every evaluation: their curves are noisier, so the rule stops them later than it would today.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from drlhp.reward.trainer import pretrain_rule  # noqa: E402


def pretraining_curve(run_dir: Path) -> list[tuple[int, float]]:
    rows = list(csv.DictReader((run_dir / "progress_reward.csv").open()))
    out = []
    for row in rows:
        if row.get("reward/online_steps"):
            break
        acc = row.get("reward/val_accuracy")
        if acc not in (None, ""):
            out.append((int(float(row["step"])), float(acc)))
    return out


def stop_point(curve: list[tuple[int, float]], patience: int, min_gain: float) -> tuple[int, float, float] | None:
    """(step, accuracy there, best so far) where the rule stops, or None: it runs to the end."""
    best, since = math.nan, 0
    for step, acc in curve:
        best, since, _ = pretrain_rule(best, since, acc, min_gain)
        if since >= patience:
            return step, acc, best
    return None


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dirs", nargs="+", type=Path)
    p.add_argument("--patience", type=int, nargs="+", default=[10, 20, 40])
    p.add_argument("--min_gain", type=float, default=0.005)
    args = p.parse_args()
    for run_dir in args.run_dirs:
        curve = pretraining_curve(run_dir)
        if not curve:
            print(f"{run_dir}: no pretraining evaluations in progress_reward.csv")
            continue
        last_step, last_acc = curve[-1]
        print(f"{run_dir}: {len(curve)} evaluations, last at step {last_step}: validation accuracy {last_acc:.3f}")
        marks = sorted({round(f * (len(curve) - 1)) for f in (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1)})
        print("  step:     " + " ".join(f"{curve[i][0]:>6d}" for i in marks))
        print("  accuracy: " + " ".join(f"{curve[i][1]:6.3f}" for i in marks))
        for patience in args.patience:
            stop = stop_point(curve, patience, args.min_gain)
            if stop is None:
                print(f"  patience {patience:3d}: runs to the end (step {last_step})")
            else:
                step, acc, best = stop
                print(f"  patience {patience:3d}: stops at step {step} ({100 * (1 - step / last_step):.0f}% of the "
                      f"steps saved): accuracy {acc:.3f} there, best {best:.3f}; at the end {last_acc:.3f}")


if __name__ == "__main__":
    main()

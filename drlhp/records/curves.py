"""A run's curves, drawn at the end of every run into <run_dir>/curves.png (drlhp.run.pipeline), with
matplotlib's Agg backend (no display needed); the reader of the progress CSVs and the drawing helpers
that floyd's compare figure uses too.

    write_run_curves(run_dir)   <run_dir>/curves.png: true return (and success rate), predicted return,
                                predictor accuracy, policy entropy; the panels the run has data for
    read_progress_csv(path)     progress.csv / progress_reward.csv as columns of floats

Imports nothing heavy at module level (matplotlib when drawing): floyd lists runs without it.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from drlhp.records.atomic import write_bytes
from drlhp.records.run_paths import RunPaths

TRUE_RETURN = "policy/true_return_last100"
SUCCESS = "policy/success_rate_last100"


def read_progress_csv(path: Path) -> dict[str, list[float]]:
    """A progress CSV as columns of floats (empty or bad cells: nan; rows of the wrong width: skipped,
    e.g. a last row being written). Missing or unreadable file: {}."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return {}
    if not rows:
        return {}
    header, body = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
    cols: dict[str, list[float]] = {k: [] for k in header}
    for row in body:
        for key, cell in zip(header, row):
            try:
                cols[key].append(float(cell) if cell != "" else float("nan"))
            except ValueError:
                cols[key].append(float("nan"))
    return cols


def pyplot():
    """matplotlib's pyplot on the Agg backend (imported here: listing runs loads no matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def points(cols: dict, x_key: str, y_key: str) -> tuple[list[float], list[float]]:
    """(xs, ys) of two columns of read_progress_csv, where neither is NaN."""
    xs, ys = cols.get(x_key, []), cols.get(y_key, [])
    pairs = [(x, y) for x, y in zip(xs, ys) if not (math.isnan(x) or math.isnan(y))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def save_png(fig, path: Path) -> Path:
    """``fig`` as a PNG at ``path``, atomically."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    write_bytes(path, buf.getvalue())
    return path


def write_run_curves(run_dir: str | Path, out: str | Path | None = None) -> Path | None:
    """Draw the run's main curves into <run_dir>/curves.png (or ``out``); None when it has no metrics."""
    run_dir = Path(run_dir)
    policy = read_progress_csv(RunPaths(run_dir) / RunPaths.PROGRESS)
    reward = read_progress_csv(run_dir / RunPaths.PROGRESS_REWARD)
    panels = []  # (title, x label, [(label, xs, ys, style)])
    true_ret = points(policy, "step", TRUE_RETURN)
    success = points(policy, "step", SUCCESS)
    if true_ret[0]:
        panels.append(("true return (mean of last 100 episodes)", "agent steps",
                       [("true return", *true_ret, "-")], success))
    predicted = points(policy, "step", "policy/predicted_return_last100")
    if predicted[0]:
        panels.append(("predicted return (mean of last 100 episodes)", "agent steps",
                       [("predicted return", *predicted, "-")], None))
    accuracy = [(label, *points(reward, "step", key), style)
                for label, key, style in (("training", "reward/train_accuracy", "--"),
                                          ("validation", "reward/val_accuracy", "-"))]
    accuracy = [a for a in accuracy if a[1]]
    if accuracy:
        panels.append(("reward predictor accuracy", "predictor training steps", accuracy, None))
    entropy = points(policy, "step", "policy/entropy")
    if entropy[0]:
        panels.append(("policy entropy", "agent steps", [("entropy", *entropy, "-")], None))
    if not panels:
        return None
    plt = pyplot()
    n_cols = 2 if len(panels) > 1 else 1
    n_rows = math.ceil(len(panels) / n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(5.5 * n_cols, 3.6 * n_rows), squeeze=False)
    for ax, (title, xlabel, lines, right) in zip(axes.flat, panels):
        for label, xs, ys, style in lines:
            ax.plot(xs, ys, style, lw=1.5, label=label)
        if right is not None and right[0]:
            twin = ax.twinx()
            twin.plot(*right, ":", color="tab:green", lw=1.5, label="success rate")
            twin.set_ylabel("success rate (last 100)", color="tab:green")
            twin.set_ylim(-0.05, 1.05)
        if len(lines) > 1:
            ax.legend(loc="best", fontsize="small")
        ax.set_title(title, fontsize="medium")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(_title(run_dir), fontsize="medium")
    fig.tight_layout()
    try:
        return save_png(fig, Path(out) if out else RunPaths(run_dir).curves)
    finally:
        plt.close(fig)


def _title(run_dir: Path) -> str:
    """``<name>: <mode> on <env>, seed <seed> (<status>)``, from the run's summary, config and status."""
    paths, found = RunPaths(run_dir), {}
    for name in (paths.status, paths.config, paths.summary):  # the latter win, as in floyd's table
        try:
            value = json.loads(Path(name).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            found.update({k: v for k, v in value.items() if v is not None})
    return (f"{run_dir.name}: {found.get('mode') or '?'} on {found.get('env') or '?'}, seed {found.get('seed')} "
            f"({found.get('status') or 'unknown'})")

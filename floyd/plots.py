"""The compare figure of several runs, drawn with matplotlib's Agg backend (no display needed); a run's
own curves.png is drlhp.records.curves', drawn at the end of every run.

    compare(entries, out)       one PNG of several runs' true return against agent steps; runs whose
                                configs differ only in seed (and run directory) are one group, drawn
                                as their mean with the min-max spread and each seed faintly.
"""
from __future__ import annotations

from pathlib import Path

from drlhp.records.curves import SUCCESS, TRUE_RETURN, points, pyplot, read_progress_csv, save_png
from drlhp.records.run_paths import RunPaths
from drlhp.records.run_record import flatten
from floyd.index import FloydError, RunEntry

# Config keys that do not make two runs different configurations.
NOT_CONFIGURATION = {"seed", "run_dir", "load_policy_ckpt_dir"}


def configuration(entry: RunEntry) -> tuple | None:
    """What makes a run's configuration (its config less seed and run directory), hashable; None if unknown."""
    if entry.config is None:
        return None
    return tuple(sorted((k, repr(v)) for k, v in flatten(entry.config).items() if k not in NOT_CONFIGURATION))


def group_runs(entries: list[RunEntry]) -> list[list[RunEntry]]:
    """Runs of one configuration together (in the order first seen); a run with no config alone."""
    groups: dict = {}
    for i, e in enumerate(entries):
        groups.setdefault(configuration(e) or ("alone", i), []).append(e)
    return list(groups.values())


def _group_labels(groups: list[list[RunEntry]]) -> list[str]:
    """Each group named by what sets it apart from the others (else mode and env)."""
    flats = [flatten(g[0].config) if g[0].config else None for g in groups]
    keys = sorted({k for f in flats if f for k in f} - NOT_CONFIGURATION)
    differing = [k for k in keys if len({repr(f.get(k)) for f in flats if f}) > 1]
    labels = []
    for g, f in zip(groups, flats):
        if f is None or len(groups) == 1 or not differing:
            base = f"{g[0].mode or '?'} on {g[0].env or '?'}" if f else g[0].name
        else:
            base = ", ".join(f"{k.split('.')[-1]}={f.get(k)}" for k in differing[:3])
        if len(g) > 1:
            seeds = [e.seed for e in g]
            base += (f" ({len(g)} seeds: {', '.join(map(str, seeds))})" if len(set(seeds)) == len(seeds)
                     else f" ({len(g)} runs, seeds {', '.join(map(str, seeds))})")
        elif f is not None:
            base += f" (seed {g[0].seed}: {g[0].name})"
        labels.append(base)
    return labels


def compare(entries: list[RunEntry], out: str | Path, title: str | None = None) -> tuple[Path, list[str]]:
    """One PNG of the runs' curves (true return, and success rate where there is one, against agent
    steps). Returns the file and notes on runs left out (no progress.csv, no true return yet)."""
    import numpy as np

    notes, curves = [], {}
    for e in entries:
        cols = read_progress_csv(e.path / RunPaths.PROGRESS)
        xs, ys = points(cols, "step", TRUE_RETURN)
        if not xs:
            notes.append(f"{e.name}: left out: no true-return curve (no progress.csv, or no episode finished)")
            continue
        curves[e.name] = {TRUE_RETURN: (xs, ys), SUCCESS: points(cols, "step", SUCCESS)}
    plotted = [e for e in entries if e.name in curves]
    if not plotted:
        raise FloydError("nothing to compare: none of the runs has a true-return curve in progress.csv")
    groups = group_runs(plotted)
    labels = _group_labels(groups)
    metrics = [TRUE_RETURN] + ([SUCCESS] if any(curves[e.name][SUCCESS][0] for e in plotted) else [])
    plt = pyplot()
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.2), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, metric in zip(axes[0], metrics):
        for i, (group, label) in enumerate(zip(groups, labels)):
            color = colors[i % len(colors)]
            runs = [curves[e.name][metric] for e in group if curves[e.name][metric][0]]
            if not runs:
                continue
            if len(runs) == 1:
                ax.plot(*runs[0], color=color, lw=1.8, label=label)
                continue
            for xs, ys in runs:
                ax.plot(xs, ys, color=color, lw=0.8, alpha=0.35)
            lo, hi = max(r[0][0] for r in runs), min(r[0][-1] for r in runs)
            grid = np.linspace(lo, hi, 200) if hi > lo else np.array([lo])
            stack = np.stack([np.interp(grid, xs, ys) for xs, ys in runs])
            ax.fill_between(grid, stack.min(0), stack.max(0), color=color, alpha=0.2)
            ax.plot(grid, stack.mean(0), color=color, lw=2.0, label=f"{label}: mean, min-max")
        ax.set_xlabel("agent steps")
        ax.set_ylabel("true return (last 100 episodes)" if metric == TRUE_RETURN
                      else "success rate (last 100 episodes)")
        ax.grid(alpha=0.3)
    if title is None:
        title = ", ".join(e.name for e in plotted) if len(plotted) <= 4 else f"{len(plotted)} runs"
    fig.suptitle(title, fontsize="medium")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, min(0.5, 0.04 + 0.05 * len(names)), 1, 1))  # the legend below the panels
    try:
        return save_png(fig, Path(out)), notes
    finally:
        plt.close(fig)

"""Issue 29's curves: the true return (last 100 episodes) against agent steps on each MuJoCo task, PPO on the true
reward (experiments/mujoco_true.sh) and from 1,400 synthetic labels (mujoco_prefs.sh), seeds as mean and
spread (min to max), and any variant run dashed: a tag (l1400-<tag>-seed-N) other than the preset's now
(PRESET_TAG, as mujoco_table.py), and PPO paid without the control cost (runs/mujoco/true-nocost); the random
policy's return dotted.
    python experiments/mujoco_curves.py [runs/mujoco] [docs/mujoco_curves.png]"""
import csv
import json
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

TASKS = ("Hopper-v5", "HalfCheetah-v5", "Walker2d-v5", "Swimmer-v5", "Ant-v5", "Reacher-v5", "InvertedPendulum-v5",
         "InvertedDoublePendulum-v5")
root = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/mujoco")
out = Path(sys.argv[2] if len(sys.argv) > 2 else "docs/mujoco_curves.png")
RANDOM = {r["task"]: r["random_return"] for r in map(json.loads, (root / "random.jsonl").read_text().splitlines())}
GRID = np.linspace(0, 1e6, 41)
TAGS = {"ent0": "entropy bonus 0", "ent01": "entropy bonus 0.01"}  # what a run directory's tag changed
PRESET_TAG = {"HalfCheetah-v5": "ent0", "Reacher-v5": "ent0", "Ant-v5": "ent0"}  # drlhp/config/presets.py, session 16


def curve(run: Path) -> np.ndarray:
    """The run's true return (last 100 episodes) on GRID (NaN before its first progress line)."""
    rows = [r for r in csv.DictReader(open(run / "progress.csv")) if r["policy/true_return_last100"]]
    steps = np.array([float(r["step"]) for r in rows])
    values = np.array([float(r["policy/true_return_last100"]) for r in rows])
    return np.where(GRID >= steps[0], np.interp(GRID, steps, values), np.nan)


def groups(task: str) -> dict[str, list[Path]]:
    found = defaultdict(list)
    for run in sorted((root / "true" / task).glob("seed-*")):
        found["PPO, true reward"].append(run)
    for run in sorted((root / "true-nocost" / task).glob("seed-*")):
        found["PPO, true reward, paid without the control cost"].append(run)
    for run in sorted((root / "prefs" / task).glob("l*-seed-*")):
        labels, _, tag = run.name.rsplit("-seed-", 1)[0][1:].partition("-")
        if tag == PRESET_TAG.get(task, ""):
            found[f"preferences, {int(labels):,} labels"].append(run)
        else:  # a variant: what its tag changed, or the bonus before the preset's change
            found[f"preferences, {int(labels):,} labels, {TAGS.get(tag, tag) or 'entropy bonus 0.01'}"].append(run)
    return {k: [r for r in v if (r / "summary.json").exists()] for k, v in found.items()}  # finished runs only


fig, axes = plt.subplots(2, 4, figsize=(16, 7))
for ax, task in zip(axes.flat, TASKS):
    for label, runs in groups(task).items():
        if not runs:
            continue
        ys = np.array([curve(r) for r in runs])
        mean = np.nanmean(ys, axis=0)
        style = "--" if label.count(", ") > 1 else "-"  # a variant (a tag) dashed
        line, = ax.plot(GRID, mean, style, label=f"{label} ({len(runs)} seed{'s' if len(runs) > 1 else ''})")
        if len(runs) > 1:
            ax.fill_between(GRID, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), alpha=0.2, color=line.get_color())
    ax.axhline(RANDOM[task], color="grey", linestyle=":", label="random policy")
    ax.set_title(task)
    ax.set_xlabel("agent steps")
    ax.legend(fontsize=6)
axes[0, 0].set_ylabel("true return (last 100 episodes)")
axes[1, 0].set_ylabel("true return (last 100 episodes)")
fig.suptitle("MuJoCo, fixed-length episodes: PPO on the true reward against PPO from synthetic preferences "
             "(drlhp, 2-core AMD EPYC)")
fig.tight_layout()
fig.savefig(out, dpi=80)
print(out)

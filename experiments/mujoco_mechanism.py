"""H61's measures (docs/results/mujoco.md, issue 61): what sinks a bad MuJoCo preference seed, read from run
directories (no training, no simulation).

    PYTHONPATH=. python experiments/mujoco_mechanism.py RUN_DIR [RUN_DIR ...] [--baseline TASK=RETURN ...]
                                                        [--out FILE.json]

For each run (a finished or stopped preference run of a MuJoCo task), by thirds of its planned agent steps:

* the fresh-label accuracy (reward/fresh_label_accuracy: the ensemble's agreement with each label before it trains
  on it, over the last 100 labels; progress_reward.csv, whose steps are the predictor's, each row placed at the agent
  step by which that many labels had been given), the mean of the values logged in the third;
* the policy's predicted return and the oracle's (policy/predicted_return_last100, policy/task_return_last100) at
  the third's end, and pred_true_corr (the per-step correlation of the two rewards in the rollout), the third's mean;
* the labels given in the third (the label of insertion order k was given when progress_prefs.csv's labels_given
  first passed k), their clips' age at labelling (agent steps from the clip's cut to its label; the median) and the
  share of labelled clips with a fall in them (a step whose oracle reward is below -50: the fall penalty is 100);
* post hoc (H61c), the run's final predictor on its own database's labels that prefer one clip: its accuracy on
  pairs whose clips differ in falls and on the others, over the later half of the labels.

A run is ``bad`` below 0.8 of its task's baseline (--baseline, default the kept baselines' means in
docs/mujoco_runs.csv as H61 names them), ``good`` at 0.9 or more, else ``middle``. Prints one line a run and, per
task, the bad and good seeds' means of each measure; --out writes everything as JSON.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout, as every experiment puts it

from drlhp.records.curves import read_progress_csv  # noqa: E402

FALL_CUT = -50.0
# H61's baselines: the kept baseline arm's mean return in docs/mujoco_runs.csv (seeds 0-5; HalfCheetah 0-8)
BASELINES = {"Hopper-v5": 3370.9, "HalfCheetah-v5": 5299.0, "InvertedDoublePendulum-v5": 9332.8,
             "InvertedPendulum-v5": 1000.0, "Walker2d-v5": 3583.5}


def column(cols: dict[str, list[float]], name: str) -> tuple[np.ndarray, np.ndarray]:
    """(steps, values) of a progress CSV's rows (drlhp.records.curves.read_progress_csv's columns) where ``name``
    has a value."""
    steps, values = np.array(cols.get("step", []), float), np.array(cols.get(name, []), float)
    if len(values) != len(steps):
        return np.zeros(0), np.zeros(0)
    keep = ~np.isnan(values)
    return steps[keep], values[keep]


def third_of(step: float, total: float) -> int:
    return min(2, int(3 * step / total))


def by_third(steps: np.ndarray, values: np.ndarray, total: float, pick, digits: int) -> list[float | None]:
    """``pick`` (np.mean, or the last value) of the values logged in each third of the run (None: none there)."""
    out = []
    for i in range(3):
        keep = (steps > i * total / 3) & (steps <= (i + 1) * total / 3)
        out.append(round(float(pick(values[keep])), digits) if keep.any() else None)
    return out


def mean_by_third(steps: np.ndarray, values: np.ndarray, total: float) -> list[float | None]:
    return by_third(steps, values, total, np.mean, 3)


def at_ends(steps: np.ndarray, values: np.ndarray, total: float, digits: int = 1) -> list[float | None]:
    """The last value logged in each third."""
    return by_third(steps, values, total, lambda v: v[-1], digits)


def label_steps(prefs_cols: dict) -> callable:
    """order -> the agent step at which that label (0-based insertion order) had been given."""
    steps, given = column(prefs_cols, "prefs/labels_given")
    if not len(steps):
        return lambda order: math.nan
    given = np.maximum.accumulate(given)

    def step_of(order: int) -> float:
        i = int(np.searchsorted(given, order + 1, side="left"))
        return float(steps[min(i, len(steps) - 1)])

    return step_of


def fresh_by_agent_step(reward_cols: dict, prefs_cols: dict) -> tuple[np.ndarray, np.ndarray]:
    """The fresh-label accuracy against agent steps: progress_reward.csv counts the predictor's own training steps,
    so each row is placed at the agent step by which the labeller had given as many labels as the predictor had
    received then (prefs/received against progress_prefs.csv's labels_given)."""
    accuracy = np.array(reward_cols.get("reward/fresh_label_accuracy", []), float)
    received = np.array(reward_cols.get("prefs/received", []), float)
    if not len(accuracy) or len(received) != len(accuracy):
        return np.zeros(0), np.zeros(0)
    keep = ~np.isnan(accuracy)
    step_of = label_steps(prefs_cols)
    agent = np.array([step_of(int(0 if np.isnan(r) else r) - 1) for r in received[keep]])
    return agent, accuracy[keep]


def labels_by_third(run: Path, total: float, step_of) -> tuple[dict, list]:
    """Per third: labels, median clip age, share of labelled clips with a fall; and the labels as rows
    (order, step, ids, mu, falls) for the post-hoc check."""
    from drlhp.reward.pref_db import PrefDB

    db = PrefDB.load(run / "prefs" / "prefs.npz")
    labels = []
    for split in ("train", "val"):
        for e in db.entries(split):
            s1, s2 = db.segment(e.id1), db.segment(e.id2)
            f1 = int((np.asarray(s1.true_rewards) < FALL_CUT).sum())
            f2 = int((np.asarray(s2.true_rewards) < FALL_CUT).sum())
            step = step_of(e.order)
            labels.append({"order": e.order, "step": step, "ages": (step - s1.step, step - s2.step),
                           "falls": (f1, f2), "mu": tuple(e.mu), "id1": e.id1, "id2": e.id2})
    out = {"labels": [0, 0, 0], "median_clip_age": [None] * 3, "clips_with_fall": [None] * 3}
    for i in range(3):
        mine = [lab for lab in labels if lab["step"] > 0 and third_of(lab["step"], total) == i]  # not the initial
        out["labels"][i] = len(mine)
        if mine:
            ages = [a for lab in mine for a in lab["ages"]]
            out["median_clip_age"][i] = round(float(np.median(ages)))
            out["clips_with_fall"][i] = round(float(np.mean([f > 0 for lab in mine for f in lab["falls"]])), 3)
    return out, labels, db


def posthoc_falls(run: Path, labels: list, db) -> dict:
    """The final predictor on its own later half of labels (by insertion order): accuracy on the strict pairs that
    differ in falls and on the rest; and on the ties (a tie is the oracle's word that two clips are worth the same),
    the ensemble's mean |P[clip 1 better] - 0.5|, beside the same on the strict pairs: the agreement the fresh-label
    accuracy cannot see (it scores strict labels only)."""
    from drlhp.learned_reward import SavedPredictor

    pred = SavedPredictor(run, center=0)
    if not labels:
        return {}
    median = np.median([lab["order"] for lab in labels])
    late = [lab for lab in labels if lab["order"] > median]
    right, differ, strict, gap = [], [], [], []
    for lab in late:
        raw1 = pred.raw(db.segment_obs(lab["id1"])).sum(axis=1).astype(np.float64)  # (members,) clip sums
        raw2 = pred.raw(db.segment_obs(lab["id2"])).sum(axis=1).astype(np.float64)
        p = float(np.mean(0.5 * (1.0 + np.tanh((raw1 - raw2) / 2.0))))  # the ensemble's P[clip 1 better]
        strict.append(lab["mu"][0] != lab["mu"][1])
        right.append((p > 0.5) == (lab["mu"][0] > lab["mu"][1]))
        differ.append(lab["falls"][0] != lab["falls"][1])
        gap.append(abs(p - 0.5))
    right, differ, strict, gap = np.array(right), np.array(differ), np.array(strict), np.array(gap)

    def mean(values, mask):
        return round(float(values[mask].mean()), 3) if mask.any() else None

    return {"late_labels": len(late), "late_ties": int((~strict).sum()),
            "acc_differ_by_falls": mean(right, strict & differ), "n_differ_by_falls": int((strict & differ).sum()),
            "acc_same_falls": mean(right, strict & ~differ),
            "tie_p_gap": mean(gap, ~strict), "strict_p_gap": mean(gap, strict)}


def measure(run: Path, baselines: dict, posthoc: bool = True) -> dict:
    config = json.loads((run / "config.json").read_text())
    summary = json.loads((run / "summary.json").read_text()) if (run / "summary.json").exists() else {}
    task, seed = config["env"], config.get("seed")
    total = float(config.get("total_timesteps") or 1e6 * float(config.get("million_timesteps", 1)))
    policy = read_progress_csv(run / "progress.csv")
    reward = read_progress_csv(run / "progress_reward.csv")
    prefs = read_progress_csv(run / "progress_prefs.csv")
    ret = summary.get("task_return_last100")
    if ret is None:
        s, v = column(policy, "policy/task_return_last100")
        ret = float(v[-1]) if len(v) else None
    base = baselines.get(task)
    ratio = None if ret is None or not base else ret / base
    verdict = None if ratio is None else ("bad" if ratio < 0.8 else "good" if ratio >= 0.9 else "middle")
    out = {"run": str(run), "task": task, "seed": seed, "return": ret, "ratio": None if ratio is None else
           round(ratio, 3), "verdict": verdict,
           "fresh_accuracy": mean_by_third(*fresh_by_agent_step(reward, prefs), total),
           "predicted_return": at_ends(*column(policy, "policy/predicted_return_last100"), total),
           "true_return": at_ends(*column(policy, "policy/task_return_last100"), total),
           "pred_true_corr": mean_by_third(*column(policy, "policy/pred_true_corr"), total),
           "std_mean": at_ends(*column(policy, "policy/std_mean"), total, digits=3),
           # the free feed (the predictor's pair-updates per agent step so far) at each third's end: a run beside
           # other work trains its predictor less per agent step than an idle one (H44)
           "feed": at_ends(*column(policy, "feed/pair_updates_per_agent_step"), total, digits=3),
           "fresh_label_accuracy_run": summary.get("fresh_label_accuracy")}
    if (run / "prefs" / "prefs.npz").exists():
        by_third, labels, db = labels_by_third(run, total, label_steps(prefs))
        out.update(by_third)
        if posthoc and (run / "reward_predictor").exists():
            out["posthoc_late_labels"] = posthoc_falls(run, labels, db)
    return out


def summarize(results: list[dict]) -> dict:
    """Per task: the bad and good seeds' means of each by-third measure."""
    table = {}
    for task in sorted({r["task"] for r in results}):
        table[task] = {}
        for verdict in ("bad", "good"):
            mine = [r for r in results if r["task"] == task and r["verdict"] == verdict]
            row = {"seeds": [r["seed"] for r in mine]}
            for key in ("fresh_accuracy", "pred_true_corr", "predicted_return", "true_return", "clips_with_fall"):
                vals = np.array([[np.nan if v is None else v for v in r.get(key, [None] * 3)] for r in mine], float)
                row[key] = [None if not len(vals) or np.isnan(vals[:, i]).all() else
                            round(float(np.nanmean(vals[:, i])), 3) for i in range(3)] if len(vals) else None
            table[task][verdict] = row
    return table


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--baseline", nargs="*", default=[], help="TASK=RETURN, overriding H61's baselines")
    p.add_argument("--no_posthoc", action="store_true", help="skip the final predictor's check on its labels")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    baselines = dict(BASELINES)
    for item in args.baseline:
        task, _, value = item.partition("=")
        baselines[task] = float(value)
    results = []
    for run in args.runs:
        if not (run / "config.json").exists():
            print(f"{run}: no config.json, skipped")
            continue
        r = measure(run, baselines, posthoc=not args.no_posthoc)
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "run"}), flush=True)
    table = summarize(results)
    for task, row in table.items():
        print(task, json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps({"runs": results, "by_task": table}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

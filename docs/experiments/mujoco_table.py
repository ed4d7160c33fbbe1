"""Issue 38's MuJoCo table, built from docs/mujoco_runs.csv ALONE (one row a run: mujoco_record.py,
mujoco_random.py), printed as markdown for docs/results.md (or, ``--readme``, the README's compact form).

    python docs/experiments/mujoco_table.py [--csv FILE] [--readme] [--baseline baseline] [--arms 700 1400]
        [--compare ARM ...]

**Refusals.** Any row of the file whose status is not ``finished``, or whose timesteps are below its arm's budget
(BUDGETS: 1M agent steps for every trained arm; the random rows none), is refused: one line naming the run, exit 2,
nothing printed. Record the run again when it has finished (or replace it).

**The measure** (``return``): the mean over the last 100 fixed-length episodes of the reward the oracle pays (the
task's reward without the control cost, with the fall penalty), for every arm. **The baseline** is ONE arm,
``baseline``: PPO paid exactly that reward (train_policy_with_original_rewards --no-ppo_control_cost, the same
episodes). **The headline** is the ratio of returns, mean(preferences) / mean(baseline), each arm's mean +- sd over
its seeds beside it with the seeds listed; on Reacher, and only there (negative returns, no falls), the normalized
score (mean(preferences) - mean(random)) / (mean(baseline) - mean(random)), random from the ``random`` rows. A ratio
where the baseline's mean is not above 0 means nothing and is shown as "-". A cell of fewer than 3 seeds says so.
**The side column**: PPO paid gymnasium's standard reward in gymnasium's own episodes (arm ``standard``: --fall_rule
end), its ``return_standard`` (gymnasium's own return), beside published PPO at 1M steps
(docs/experiments/ppo_published.md), which is measured the same way.
``--compare ARM ...``: both measures of each named arm per task (the fall comparison: baseline 1400
penalty-baseline penalty-1400; under the two rules the oracle's returns differ by construction, gymnasium's
``return_standard`` is the common measure).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from mujoco_runs_csv import CSV_PATH, TASKS, read_rows

DEFAULT_BUDGET = 1_000_000  # agent steps of every trained arm (the mujoco preset's 1M)
BUDGETS = {"random": 0, "random-penalty": 0}
NORMALIZED_TASKS = ("Reacher-v5",)  # negative returns, no falls: (prefs - random) / (baseline - random)
MIN_SEEDS = 3
# PPO at 1M agent steps on gymnasium's reward, from docs/experiments/ppo_published.md (older task versions: -v5
# has none published): CleanRL pr-424 (-v4, 3 seeds), baselines ppo2's Mujoco1M (-v2, 6 seeds), the SB3 zoo (Ant-v3)
PUBLISHED = {"Hopper-v5": "2,383 ± 272 (CleanRL -v4)", "HalfCheetah-v5": "1,443 ± 46 (CleanRL -v4)",
             "Walker2d-v5": "2,288 ± 572 (CleanRL -v4)", "Swimmer-v5": "111 (baselines -v2)",
             "Ant-v5": "1,327 ± 452 (SB3 zoo -v3)", "Reacher-v5": "-6.7 (baselines -v2)",
             "InvertedPendulum-v5": "963 ± 22 (CleanRL -v4)", "InvertedDoublePendulum-v5": "7,103 (baselines -v2)"}


class Refused(Exception):
    """A row the table will not use; its text is the one line printed."""


def budget(arm: str) -> int:
    return BUDGETS.get(arm, 0 if arm.startswith("random") else DEFAULT_BUDGET)


def check_rows(rows: list[dict]) -> None:
    """Raises Refused for the first row not finished or short of its arm's budget."""
    for r in rows:
        name = f"{r['task']} arm {r['arm']} seed {r['seed']}"
        if r["status"] != "finished":
            raise Refused(f"{name}: status {r['status'] or '(none)'}, not finished")
        if int(r["timesteps"]) < budget(r["arm"]):
            raise Refused(f"{name}: {int(r['timesteps']):,} agent steps, below the arm's budget of "
                          f"{budget(r['arm']):,}")


def arm_values(rows: list[dict], task: str, arm: str, column: str = "return") -> dict[int, float]:
    """{seed: value} of one task's arm (rows without the column's value left out)."""
    return {int(r["seed"]): float(r[column]) for r in rows
            if r["task"] == task and r["arm"] == arm and r[column] not in ("", None)}


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"


def cell(values: dict[int, float]) -> str:
    """mean ± sd (seeds ...), saying so where fewer than MIN_SEEDS."""
    if not values:
        return "-"
    v = list(values.values())
    text = _num(statistics.mean(v)) + (f" ± {_num(statistics.stdev(v))}" if len(v) > 1 else "")
    few = f"; {len(v)}, fewer than {MIN_SEEDS}" if len(v) < MIN_SEEDS else ""
    return f"{text} (seeds {', '.join(str(s) for s in sorted(values))}{few})"


def score(task: str, prefs: dict[int, float], base: dict[int, float], random: dict[int, float]) -> float | None:
    """The headline: mean(prefs) / mean(baseline); on NORMALIZED_TASKS (prefs - random) / (baseline - random)."""
    if not prefs or not base:
        return None
    p, b = statistics.mean(prefs.values()), statistics.mean(base.values())
    if task in NORMALIZED_TASKS:
        if not random:
            return None
        r = statistics.mean(random.values())
        return (p - r) / (b - r) if b != r else None
    return p / b if b > 0 else None


def score_text(task: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" + (" (normalized)" if task in NORMALIZED_TASKS else "")


def table(rows: list[dict], baseline: str, arms: list[str], readme: bool) -> list[str]:
    out = []
    if readme:
        out.append("| task | PPO, oracle's reward | " + " | ".join(f"{a} labels" for a in arms) + " |")
        out.append("| --- | --- | " + " | ".join("---" for _ in arms) + " |")
    else:
        out.append("| task | random | PPO, oracle's reward (baseline) | "
                   + " | ".join(f"{a} labels | ratio {a}" for a in arms)
                   + " | PPO, standard reward (standard) | published PPO, 1M |")
        out.append("| --- | --- | --- | " + " | ".join("--- | ---" for _ in arms) + " | --- | --- |")
    counts = {a: {0.9: 0, 1.0: 0} for a in arms}
    for task in TASKS:
        base, rand = arm_values(rows, task, baseline), arm_values(rows, task, "random")
        cells = []
        for a in arms:
            prefs = arm_values(rows, task, a)
            s = score(task, prefs, base, rand)
            for level in counts[a]:
                counts[a][level] += s is not None and s >= level
            cells.append(f"{score_text(task, s)}: {cell(prefs)}" if readme
                         else f"{cell(prefs)} | {score_text(task, s)}")
        if readme:
            out.append(f"| {task} | {cell(base)} | " + " | ".join(cells) + " |")
        else:
            standard = arm_values(rows, task, "standard", "return_standard")
            out.append(f"| {task} | {cell(rand)} | {cell(base)} | " + " | ".join(cells)
                       + f" | {cell(standard)} | {PUBLISHED.get(task, '-')} |")
    out.append("")
    out.append(f"The ratio of returns to the `{baseline}` arm (PPO paid the oracle's reward); Reacher: "
               f"(prefs - random) / (baseline - random). " + "; ".join(
                   f"{a} labels: {counts[a][0.9]} of {len(TASKS)} tasks at 0.9 or more, {counts[a][1.0]} at 1.0 or more"
                   for a in arms) + ".")
    return out


def compare(rows: list[dict], arms: list[str]) -> list[str]:
    out = ["| task | " + " | ".join(f"{a}: return | {a}: return_standard" for a in arms) + " |",
           "| --- | " + " | ".join("--- | ---" for _ in arms) + " |"]
    for task in TASKS:
        cells = [f"{cell(arm_values(rows, task, a))} | {cell(arm_values(rows, task, a, 'return_standard'))}"
                 for a in arms]
        if any(c != "- | -" for c in cells):
            out.append(f"| {task} | " + " | ".join(cells) + " |")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--csv", type=Path, default=CSV_PATH)
    p.add_argument("--readme", action="store_true", help="the README's compact table")
    p.add_argument("--baseline", default="baseline")
    p.add_argument("--arms", nargs="+", default=["700", "1400"])
    p.add_argument("--compare", nargs="+", metavar="ARM", help="both measures of these arms, per task")
    args = p.parse_args(argv)
    try:
        rows = read_rows(args.csv)
        check_rows(rows)
    except (Refused, ValueError) as e:
        print(f"mujoco_table: refused: {e}", file=sys.stderr)
        return 2
    lines = compare(rows, args.compare) if args.compare else table(rows, args.baseline, args.arms, args.readme)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 38's MuJoCo table, built from docs/mujoco_runs.csv ALONE (one row a run: mujoco_record.py,
mujoco_random.py), printed as markdown for docs/results/mujoco.md (or, ``--readme``, the README's compact form).

    python experiments/mujoco_table.py [--csv FILE] [--readme] [--baseline baseline baseline-ent01]
        [--arms 700 1400] [--compare ARM ...] [--seeds 0 1 2]

**Refusals.** Any row of the file whose status is not ``finished``, or whose timesteps are below its arm's budget
(BUDGETS: 1M agent steps for every trained arm; the random rows none), is refused: one line naming the run, exit 2,
nothing printed. Record the run again when it has finished (or replace it).

**The measure** (``return``): the mean over the last 100 fixed-length episodes of the reward the oracle pays (the task's
reward without the control cost, with the fall penalty), for every arm. **The baseline** is PPO paid exactly that reward
(train_policy_with_original_rewards --no-ppo_control_cost, the same episodes), tuned as the preference arm is: of the
``--baseline`` arms (default ``baseline`` and ``baseline-ent01``, the preset's entropy bonus 0 and the preference arm's
0.01: H49), per task the one with 3 or more seeds and the higher mean stands, and the table names it where it is not the
first (a task where no candidate has 3 seeds keeps the first). **The headline** is the ratio of returns,
mean(preferences) / mean(baseline), each arm's mean +- sd over its seeds beside it with the seeds listed; on Reacher,
and only there (negative returns, no falls), the normalized score (mean(preferences) - mean(random)) / (mean(baseline) -
mean(random)), random from the ``random`` rows. A ratio where the baseline's mean is not above 0 means nothing and is
shown as "-". A cell of fewer than 3 seeds says so.
**The side column**: PPO paid gymnasium's standard reward in gymnasium's own episodes (arm ``standard``: --fall_rule
end), its ``return_standard`` (gymnasium's own return), beside published PPO at 1M steps
(experiments/ppo_published.md), which is measured the same way.
``--tasks TASK ...``: those tasks only (the teachers' table: ``--arms 1400 mistake10 equal --tasks Hopper-v5
Walker2d-v5``). ``--efficiency [--plot FILE]``: issue 39's label efficiency, the ratio against labels (``--arms``,
default 175 350 700 1400) on ``--tasks`` (default Hopper-v5 HalfCheetah-v5): each seed's return / the baseline's
mean, their mean, and the fewest labels at which every one of 3 or more seeds holds 0.9; the picture with --plot.
``--seeds S ...``: the seeds every cell takes, default 0 1 2 (the table's 3 seeds on every task); rows of other
seeds (H51's HalfCheetah seeds 3-9) enter only when named, e.g. ``--seeds 0 1 2 3 4 5 6 7 8 9``.
An ``--arms`` item may be a comma-separated group of candidates (``1400,1400-ls1,1400-ls2``): per task the one that
stands by the baseline's rule fills the column, named where it is not the first (H55, H56: a setting tried on both
arms, each arm keeping its better).
``--intervals``: issue 61's held-out figures instead of the table, per task and preference column: the seeds, the mean
ratio (the headline), the interquartile mean of the seeds' ratios, a 95% bootstrap interval (both arms' seeds
resampled) and the worst seed's ratio (experiments/ratio_intervals.py), with the counts the issue judges by.
``--compare ARM ...``: both measures of each named arm per task (the fall comparison: baseline 1400-random
penalty-baseline penalty-1400-random; under the two rules the oracle's returns differ by construction, gymnasium's
``return_standard`` is the common measure).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from mujoco_runs_csv import CSV_PATH, TASKS, million_steps, read_rows

DEFAULT_BUDGET = 1_000_000  # agent steps of every trained arm (the mujoco preset's 1M)
BUDGETS = {"random": 0, "random-penalty": 0}
NORMALIZED_TASKS = ("Reacher-v5",)  # negative returns, no falls: (prefs - random) / (baseline - random)
MIN_SEEDS = 3
TABLE_SEEDS = (0, 1, 2)  # the seeds of every cell unless --seeds names others
# PPO at 1M agent steps on gymnasium's reward, from experiments/ppo_published.md (older task versions: -v5
# has none published): CleanRL pr-424 (-v4, 3 seeds), baselines ppo2's Mujoco1M (-v2, 6 seeds), the SB3 zoo (Ant-v3:
# the zoo's MuJoCo defaults, deterministic evaluation, on a task whose 84 contact forces read zero under MuJoCo 2+,
# gym issue 1541; -v5 observes them and charges their cost, so it is not -v5's figure)
PUBLISHED = {"Hopper-v5": "2,383 ± 272 (CleanRL -v4)", "HalfCheetah-v5": "1,443 ± 46 (CleanRL -v4)",
             "Walker2d-v5": "2,288 ± 572 (CleanRL -v4)", "Swimmer-v5": "111 (baselines -v2)",
             "Ant-v5": "1,327 ± 452 (SB3 zoo -v3, no contact forces)", "Reacher-v5": "-6.7 (baselines -v2)",
             "InvertedPendulum-v5": "963 ± 22 (CleanRL -v4)", "InvertedDoublePendulum-v5": "7,103 (baselines -v2)"}


class Refused(Exception):
    """A row the table will not use; its text is the one line printed."""


def budget(arm: str) -> int:
    """Agent steps a finished run of ``arm`` has done at least: an arm named ``-Nm`` N million (H53), the random
    rows none, every other arm the preset's 1M."""
    named = million_steps(arm)
    if named is not None:
        return named * 1_000_000
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


def full_candidates(rows: list[dict], task: str, candidates: list[str]) -> list[tuple[str, dict[int, float]]]:
    """(arm, {seed: return}) of each candidate with MIN_SEEDS or more seeds on ``task``, in the candidates' order."""
    return [(a, v) for a in candidates if len(v := arm_values(rows, task, a)) >= MIN_SEEDS]


def pick_arm(rows: list[dict], task: str, candidates: list[str]) -> tuple[str, dict[int, float]]:
    """(arm, {seed: return}) of the candidate that stands for ``task``, among the baseline's candidates or a
    column's group of preference arms alike: of the candidates with MIN_SEEDS or more seeds, the one with the higher
    mean over the seeds they all have (the first on a tie; with the default --seeds that is seeds 0-2 of each; with
    more seeds named, a candidate run on more of them is not judged by its extra seeds: H51's `baseline` on seeds 0-9
    against `baseline-ent01` on 0-2 is judged on 0-2), and where they share fewer than MIN_SEEDS, the first of them;
    the first candidate where none has MIN_SEEDS. A later candidate with MIN_SEEDS stands over a first with fewer
    (baseline_note and pref_note say which tasks were compared). The arm's values are all of its seeds."""
    full = full_candidates(rows, task, candidates)
    if not full:
        return candidates[0], arm_values(rows, task, candidates[0])
    shared = set.intersection(*(set(v) for _, v in full))
    if len(shared) < MIN_SEEDS:
        return full[0]
    return max(full, key=lambda av: statistics.mean(av[1][s] for s in shared))  # max keeps the first of equals


def arm_cell(arm: str, values: dict[int, float], candidates: list[str]) -> str:
    """cell(values), naming the arm where it is not the first candidate."""
    text = cell(values)
    if arm == candidates[0] or text == "-":
        return text
    return text.replace(")", f"; `{arm}`)", 1)


def baseline_note(rows: list[dict], tasks, candidates: list[str]) -> str:
    """What the ratios are to: the one arm, or the rule and the tasks on which two or more candidates were
    compared (each with MIN_SEEDS or more seeds)."""
    if len(candidates) == 1:
        return f"the `{candidates[0]}` arm"
    compared = [t for t in tasks if len(full_candidates(rows, t, candidates)) >= 2]
    names = ", ".join(f"`{a}`" for a in candidates)
    where = (f"compared on {', '.join(compared)}; elsewhere fewer than {MIN_SEEDS} seeds of all but one"
             if compared else f"no task has {MIN_SEEDS} seeds of two of them yet")
    return (f"the better of {names} per task ({MIN_SEEDS} or more seeds, the higher mean; named where not "
            f"`{candidates[0]}`: {where})")


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


def arm_title(arm: str) -> str:
    return f"{arm} labels" if arm.isdigit() else arm


def arm_groups(arms: list[str]) -> list[list[str]]:
    """``--arms`` items as candidate groups: ``1400,1400-ls1,1400-ls2`` is one column whose cell per task is the
    candidate that stands by pick_arm's rule (tuned alike: the preference arm picks among the settings the baseline
    picks among, H55/H56), named where it is not the first; a plain ``1400`` is a group of one."""
    return [item.split(",") for item in arms]


def pref_note(rows: list[dict], tasks, groups: list[list[str]]) -> str:
    """Where a column chose among candidates: the rule and the tasks, else nothing."""
    notes = []
    for group in groups:
        if len(group) > 1:
            compared = [t for t in tasks if len(full_candidates(rows, t, group)) >= 2]
            notes.append(f" Column {arm_title(group[0])}: the better of {', '.join(f'`{a}`' for a in group)} "
                         f"per task (the baseline's rule; compared on {', '.join(compared) or 'no task'}).")
    return "".join(notes)


def table(rows: list[dict], baseline: list[str], arms: list[str], readme: bool, tasks=TASKS) -> list[str]:
    groups = arm_groups(arms)
    titles = [arm_title(g[0]) for g in groups]
    out = []
    if readme:
        out.append("| task | PPO, oracle's reward | " + " | ".join(titles) + " |")
        out.append("| --- | --- | " + " | ".join("---" for _ in titles) + " |")
    else:
        out.append("| task | random | PPO, oracle's reward (baseline) | "
                   + " | ".join(f"{t} | ratio {g[0]}" for t, g in zip(titles, groups))
                   + " | PPO, standard reward (standard) | published PPO, 1M |")
        out.append("| --- | --- | --- | " + " | ".join("--- | ---" for _ in titles) + " | --- | --- |")
    counts = [{0.9: 0, 1.0: 0} for _ in titles]
    for task in tasks:
        base_arm, base = pick_arm(rows, task, baseline)
        rand = arm_values(rows, task, "random")
        cells = []
        for count, group in zip(counts, groups):
            kept, prefs = pick_arm(rows, task, group)
            s = score(task, prefs, base, rand)
            for level in count:
                count[level] += s is not None and s >= level
            text = arm_cell(kept, prefs, group)
            cells.append(f"{score_text(task, s)}: {text}" if readme else f"{text} | {score_text(task, s)}")
        if readme:
            out.append(f"| {task} | {arm_cell(base_arm, base, baseline)} | " + " | ".join(cells) + " |")
        else:
            standard = arm_values(rows, task, "standard", "return_standard")
            out.append(f"| {task} | {cell(rand)} | {arm_cell(base_arm, base, baseline)} | " + " | ".join(cells)
                       + f" | {cell(standard)} | {PUBLISHED.get(task, '-')} |")
    out.append("")
    out.append(f"The ratio of returns to {baseline_note(rows, tasks, baseline)} (PPO paid the oracle's reward); "
               "Reacher: (prefs - random) / (baseline - random). " + "; ".join(
                   f"{t}: {c[0.9]} of {len(tasks)} tasks at 0.9 or more, {c[1.0]} at 1.0 or more"
                   for t, c in zip(titles, counts)) + "." + pref_note(rows, tasks, groups))
    return out


def interval_table(rows: list[dict], baseline: list[str], arms: list[str], tasks=TASKS) -> list[str]:
    """``--intervals``: per task and preference column, the cell's ratio_summary, and per column the counts issue 61
    judges by (the mean at 0.9 or more, the interval's lower end above 0.8, any seed below 0.5)."""
    from ratio_intervals import ratio_summary

    out = ["| task | column (arm) | seeds | ratio (mean) | interquartile mean | 95% bootstrap interval | worst seed |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    groups = arm_groups(arms)
    counts = {g[0]: {"mean 0.9": 0, "low 0.8": 0, "below 0.5": []} for g in groups}
    for task in tasks:
        _, base = pick_arm(rows, task, baseline)
        rand = arm_values(rows, task, "random")
        random_mean = statistics.mean(rand.values()) if task in NORMALIZED_TASKS and rand else None
        for group in groups:
            kept, prefs = pick_arm(rows, task, group)
            name = arm_title(group[0]) + ("" if kept == group[0] else f" (`{kept}`)")
            r = None
            if not (task in NORMALIZED_TASKS and random_mean is None):  # Reacher without random rows: no ratio
                try:  # no seed in an arm, or a baseline not above 0: no ratio either
                    r = ratio_summary(list(prefs.values()), list(base.values()), random_mean)
                except ValueError:
                    pass
            if r is None:
                out.append(f"| {task} | {name} | {len(prefs)} | - | - | - | - |")
                continue
            c = counts[group[0]]
            c["mean 0.9"] += r.mean >= 0.9
            c["low 0.8"] += r.low > 0.8
            if r.worst < 0.5:
                c["below 0.5"].append(task)
            few = f" (fewer than {MIN_SEEDS})" if r.seeds < MIN_SEEDS else ""
            norm = " (normalized)" if random_mean is not None else ""
            out.append(f"| {task} | {name} | {r.seeds}{few} | {r.mean:.2f}{norm} | {r.iqm:.2f} "
                       f"| {r.low:.2f}-{r.high:.2f} | {r.worst:.2f} |")
    out.append("")
    out.append(f"Ratios to {baseline_note(rows, tasks, baseline)}. " + "; ".join(
        f"{arm_title(g)}: {c['mean 0.9']} of {len(tasks)} tasks at 0.9 or more, {c['low 0.8']} with the interval's "
        f"lower end above 0.8, seeds below 0.5 of the baseline: {', '.join(c['below 0.5']) or 'none'}"
        for g, c in counts.items()) + ".")
    return out


def efficiency(rows: list[dict], baseline: list[str], arms: list[str], tasks) -> tuple[list[str], dict]:
    """Issue 39's table: per task and label count, each seed's ratio to the baseline's mean, and the fewest labels
    at which every seed (3 or more) holds 0.9. Returns the lines and {task: {labels: [ratios]}} for the picture."""
    out = ["| task | baseline (PPO, oracle's reward) | "
           + " | ".join(f"{a} labels: ratio (seeds' ratios)" for a in arms) + " | fewest labels at 0.9 on every seed |",
           "| --- | --- | " + " | ".join("---" for _ in arms) + " | --- |"]
    ratios: dict[str, dict[int, list[float]]] = {}
    for task in tasks:
        base_arm, base = pick_arm(rows, task, baseline)
        b = statistics.mean(base.values()) if base else None
        ratios[task], cells, fewest = {}, [], None
        for a in arms:
            prefs = arm_values(rows, task, a)
            if not prefs or b is None or b <= 0:
                cells.append("-")
                continue
            seed_ratios = {s: v / b for s, v in sorted(prefs.items())}
            ratios[task][int(a)] = list(seed_ratios.values())
            n = len(prefs)
            few = f"; {n} seed{'s' * (n > 1)}, fewer than {MIN_SEEDS}" if n < MIN_SEEDS else ""
            cells.append(f"{statistics.mean(seed_ratios.values()):.2f} ("
                         + ", ".join(f"{s}: {r:.2f}" for s, r in seed_ratios.items()) + few + ")")
            if fewest is None and len(prefs) >= MIN_SEEDS and min(seed_ratios.values()) >= 0.9:
                fewest = a
        out.append(f"| {task} | {arm_cell(base_arm, base, baseline)} | " + " | ".join(cells)
                   + f" | {fewest or 'none measured'} |")
    out += ["", f"Each seed's return / the mean of {baseline_note(rows, tasks, baseline)}."]
    return out, ratios


def plot_efficiency(ratios: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for task, by_labels in ratios.items():
        xs = sorted(by_labels)
        if not xs:
            continue
        line, = ax.plot(xs, [statistics.mean(by_labels[x]) for x in xs], marker="o", label=task)
        for x in xs:
            ax.scatter([x] * len(by_labels[x]), by_labels[x], color=line.get_color(), alpha=0.35, s=14)
    ax.axhline(0.9, color="grey", linestyle="--", linewidth=1)
    ax.axhline(1.0, color="grey", linewidth=1)
    ax.set_xscale("log", base=2)
    counts = sorted({x for by_labels in ratios.values() for x in by_labels})
    ax.set_xticks(counts, [f"{x:,}" for x in counts])
    ax.minorticks_off()
    ax.set_xlabel("labels (synthetic oracle)")
    ax.set_ylabel("return / PPO on the oracle's reward")
    ax.set_title("Label efficiency, 1M agent steps (dots: seeds)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


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
    p.add_argument("--baseline", nargs="+", default=["baseline", "baseline-ent01"],
                   help="the baseline's candidate arms; per task the one with 3 or more seeds and the higher "
                        "mean stands")
    p.add_argument("--arms", nargs="+", default=["700", "1400"])
    p.add_argument("--compare", nargs="+", metavar="ARM", help="both measures of these arms, per task")
    p.add_argument("--tasks", nargs="+", help="these tasks only")
    p.add_argument("--efficiency", action="store_true", help="the ratio against labels (issue 39)")
    p.add_argument("--intervals", action="store_true",
                   help="per cell: mean, interquartile mean, 95%% bootstrap interval and worst seed (issue 61)")
    p.add_argument("--plot", type=Path, help="with --efficiency: the picture, as a PNG")
    p.add_argument("--seeds", nargs="+", type=int, default=list(TABLE_SEEDS),
                   help="the seeds every cell takes (default 0 1 2, the table's seeds on every task)")
    args = p.parse_args(argv)
    try:
        rows = read_rows(args.csv)
        check_rows(rows)
    except (Refused, ValueError) as e:
        print(f"mujoco_table: refused: {e}", file=sys.stderr)
        return 2
    rows = [r for r in rows if int(r["seed"]) in args.seeds]
    if args.efficiency:
        arms = args.arms if args.arms != ["700", "1400"] else ["175", "350", "700", "1400"]
        lines, ratios = efficiency(rows, args.baseline, arms, args.tasks or ["Hopper-v5", "HalfCheetah-v5"])
        if args.plot:
            plot_efficiency(ratios, args.plot)
    elif args.compare:
        lines = compare(rows, args.compare)
    elif args.intervals:
        lines = interval_table(rows, args.baseline, args.arms, args.tasks or TASKS)
    else:
        lines = table(rows, args.baseline, args.arms, args.readme, args.tasks or TASKS)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

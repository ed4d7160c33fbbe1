#!/usr/bin/env python
"""Issue 37's tables and picture, from run directories alone: the Pong start experiments, the preset's seeds, their
curves.

    python experiments/pong_seeds.py start runs/pong-start          # every ARM/seed-N under it
    python experiments/pong_seeds.py seeds runs/pong-preset/seed-0 runs/pong-preset/seed-1 ...
    python experiments/pong_seeds.py curves RUN_DIR... [--lineage models/pong-prefs] [--out docs/pong_seeds.png]

``start``: each arm, each seed: returns per game and the true return (last 100 games) at 0.5M, 1M and 1.5M agent
steps; whether the seed rallies at 1M (returns per game >= 6 at the 1M checkpoint, issue 37's measure, judged as the
campaign's 1M rule was: the state at 1M); and the first step at which its returns per game reached 6 with 100 games
in the window (an early peak that falls back, as seed 2's 6.7 at 0.19M, shows here and not as a rally).
``seeds``: each seed's true return at 1M, 2M, 4M, 6M, 8M, 10M and at its end, the labels it used, the agent steps
and hours to +15 and to +19 ("not reached"), where session 18's plateau rule first fires (from 4M agent steps, a
true return below +15 that has not risen by 1 point over the last 2M agent steps; the rule may stop a seed, so a
run past that step went on by choice), its status and CPU. Hours are the policy's own training time summed
over sittings (system/wall_s: gathering and pretraining, a few minutes, are not in it).
``curves``: the true return of every seed against agent steps, their mean and spread (min to max), beside the
old lineage (models/pong-prefs: +18.3 from one lineage with two changes made part-way).

A figure "at" a checkpoint is the last logged value at or before it; a run that has not reached a checkpoint
shows a blank there. Nothing here imports TensorFlow.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
from drlhp.records.curves import pyplot, read_progress_csv, save_png  # noqa: E402

RALLY = 6.0  # returns per game: issue 37's "a seed rallies"
START_AT = (500_000, 1_000_000, 1_500_000)
SEEDS_AT = (1_000_000, 2_000_000, 4_000_000, 6_000_000, 8_000_000, 10_000_000)
TARGETS = (15.0, 19.0)
PLATEAU_FROM, PLATEAU_SPAN, PLATEAU_RISE = 4_000_000, 2_000_000, 1.0  # session 18's rule (below)
RETURN, RETURNS, WALL = ("policy/true_return_last100", "policy/returns_per_game_last100", "system/wall_s")


def at(cols: dict, key: str, step: float) -> float:
    """The last value of ``key`` logged at or before ``step`` (nan if none, or if the run never got that far)."""
    steps = cols.get("step") or []
    if not steps or steps[-1] < step:
        return math.nan
    value = math.nan
    for s, v in zip(steps, cols.get(key) or []):
        if s > step:
            break
        value = v
    return value


def first_reaching(cols: dict, key: str, level: float) -> int | None:
    """The index of the first row whose ``key`` is at least ``level``, or None."""
    for i, v in enumerate(cols.get(key) or []):
        if not math.isnan(v) and v >= level:
            return i
    return None


def labels_at(run_dir: Path, step: float) -> float:
    """Labels given by the time the policy had ``step`` agent steps (the preference interface's log)."""
    cols = read_progress_csv(run_dir / "progress_prefs.csv")
    value = math.nan
    for s, v in zip(cols.get("step") or [], cols.get("prefs/labels_given") or []):
        if s > step:
            break
        value = v
    return value


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def cpu(run_dir: Path) -> str:
    sittings = read_json(run_dir / "run.json").get("sittings") or [{}]
    names = []
    for s in sittings:
        name = (s.get("machine") or {}).get("cpu", "?")
        if name not in names:
            names.append(name)
    return " / ".join(names)


def fmt(x: float, digits: int = 2) -> str:
    return "" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def start_rows(root: Path) -> list[str]:
    out = ["| arm | seed | returns per game 0.5M / 1M / 1.5M | true return 0.5M / 1M / 1.5M | rallies at 1M (>= 6) | "
           "first >= 6 (100 games in the window) | agent steps | CPU |", "| --- " * 8 + "|"]
    for arm in sorted(p for p in root.iterdir() if p.is_dir()):
        for run in sorted(arm.glob("seed-*"), key=lambda p: int(p.name.split("-")[-1])):
            cols = read_progress_csv(run / "progress.csv")
            if not cols.get("step"):
                out.append(f"| {arm.name} | {run.name[5:]} | | | not started | | {cpu(run)} |")
                continue
            games = cols.get("policy/episodes") or [math.nan] * len(cols[RETURNS])
            full = {**cols, RETURNS: [r if n >= 100 else math.nan for r, n in zip(cols[RETURNS], games)]}
            i = first_reaching(full, RETURNS, RALLY)
            first = f"{cols['step'][i] / 1e6:.2f}M" if i is not None else "never"
            at_1m = at(cols, RETURNS, 1_000_000)
            rallied = "not yet" if math.isnan(at_1m) else "yes" if at_1m >= RALLY else "no"
            out.append(f"| {arm.name} | {run.name[5:]} | "
                       + " / ".join(fmt(at(cols, RETURNS, s), 1) for s in START_AT) + " | "
                       + " / ".join(fmt(at(cols, RETURN, s)) for s in START_AT)
                       + f" | {rallied} | {first} | {int(cols['step'][-1]):,} | {cpu(run)} |")
    return out


def reached(cols: dict, run_dir: Path, level: float) -> str:
    i = first_reaching(cols, RETURN, level)
    if i is None:
        return "not reached"
    step, labels = cols["step"][i], labels_at(run_dir, cols["step"][i])
    with_labels = "" if math.isnan(labels) else f", {labels:,.0f} labels"
    return f"{step / 1e6:.2f}M, {cols[WALL][i] / 3600:.2f} h{with_labels}"


def plateau(cols: dict) -> str:
    """The first logged step from 4M at which the plateau rule fires: the true return below +15 and less than 1 point
    above its value 2M agent steps before; "not fired" (or "before 4M" for a run that has not got there)."""
    steps = cols.get("step") or []
    if not steps or steps[-1] < PLATEAU_FROM:
        return "before 4M"
    for step, value in zip(steps, cols[RETURN]):
        if step < PLATEAU_FROM or math.isnan(value) or value >= TARGETS[0]:
            continue
        before = at(cols, RETURN, step - PLATEAU_SPAN)
        if not math.isnan(before) and value - before < PLATEAU_RISE:
            return f"fires at {step / 1e6:.2f}M ({before:.2f} to {value:.2f})"
    return "not fired"


def seed_rows(runs: list[Path]) -> list[str]:
    out = ["| run | " + " | ".join(f"{s // 1_000_000}M" for s in SEEDS_AT) + " | end | labels | agent steps | "
           "hours | to +15 | to +19 | plateau rule | status | CPU |",
           "| --- " * (len(SEEDS_AT) + 10) + "|"]  # run, the checkpoints, end ... CPU
    for run in runs:
        cols = read_progress_csv(run / "progress.csv")
        if not cols.get("step"):
            out.append(f"| {run} | not started |")
            continue
        end = cols[RETURN][-1]
        summary = read_json(run / "summary.json")
        logged = labels_at(run, cols["step"][-1])  # a running seed's summary.json is its last sitting's
        labels = max(float(summary.get("labels_given", 0)), 0.0 if math.isnan(logged) else logged)
        status = read_json(run / "status.json").get("status")  # a model folder (floyd export) has none:
        status = status or ("finished (target)" if summary.get("reached_target") else "exported")  # its summary says
        out.append(f"| {run} | " + " | ".join(fmt(at(cols, RETURN, s)) for s in SEEDS_AT)
                   + f" | {fmt(end)} | {float(labels):,.0f} | {int(cols['step'][-1]):,} | "
                   f"{cols[WALL][-1] / 3600:.2f} | {reached(cols, run, TARGETS[0])} | {reached(cols, run, TARGETS[1])} "
                   f"| {plateau(cols)} | {status} | {cpu(run)} |")
    return out


def curves(runs: list[Path], lineage: Path | None, out: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    grid = [i * 50_000 for i in range(0, 201)]
    series = []
    for run in runs:
        cols = read_progress_csv(run / "progress.csv")
        if not cols.get("step"):
            continue
        ax.plot([s / 1e6 for s in cols["step"]], cols[RETURN], lw=0.8, alpha=0.6, label=run.name)
        series.append([at(cols, RETURN, g) for g in grid])
    if series:
        xs, lo, hi, mean = [], [], [], []
        for j, g in enumerate(grid):
            values = [s[j] for s in series if not math.isnan(s[j])]
            if len(values) == len(series):  # mean and spread only where every seed has got to
                xs.append(g / 1e6)
                lo.append(min(values))
                hi.append(max(values))
                mean.append(sum(values) / len(values))
        ax.fill_between(xs, lo, hi, alpha=0.2, color="C0", label=f"spread of {len(series)} seeds")
        ax.plot(xs, mean, lw=2.0, color="C0", label="mean")
    if lineage is not None:
        cols = read_progress_csv(lineage / "progress.csv")
        if cols.get("step"):
            ax.plot([s / 1e6 for s in cols["step"]], cols[RETURN], lw=1.2, color="k", ls="--",
                    label=f"old lineage ({lineage.name})")
    for level in TARGETS:
        ax.axhline(level, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("agent steps (millions)")
    ax.set_ylabel("true return (last 100 games)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return save_png(fig, out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("start").add_argument("root", type=Path)
    sub.add_parser("seeds").add_argument("runs", type=Path, nargs="+")
    c = sub.add_parser("curves")
    c.add_argument("runs", type=Path, nargs="+")
    c.add_argument("--lineage", type=Path, default=None)
    c.add_argument("--out", type=Path, default=Path("docs/pong_seeds.png"))
    args = ap.parse_args(argv)
    if args.what == "start":
        if not args.root.is_dir():
            print(f"{args.root}: no such directory", file=sys.stderr)
            return 2
        print("\n".join(start_rows(args.root)))
    elif args.what == "seeds":
        print("\n".join(seed_rows(args.runs)))
    else:
        print(f"curves: {curves(args.runs, args.lineage, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

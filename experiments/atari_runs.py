#!/usr/bin/env python
"""The Atari table (issue 59): every run of it in docs/atari_runs.csv, one row a run, and the table and curves made
from that file alone.

    python experiments/atari_runs.py record RUN_DIR [--at_million 5]     a run's row (its score at 5M agent steps)
    python experiments/atari_runs.py random GAME ... [--games_played 10]  a random policy's row (arm "random")
    python experiments/atari_runs.py table [--at_million 5] [--readme]    the table, from the CSV
    python experiments/atari_runs.py curves --plot docs/atari_curves.png RUN_DIR ...   both arms' curves, by game

A row: game (its <Game>NoFrameskip-v4 id), arm ("ppo": PPO on the game's clipped score, train_policy_with_original_
rewards; a number: the label budget of a run from synthetic preferences, initial labels included; "random"), seed,
labels (given by the row's agent steps), timesteps (the row's agent steps), status (the run's: finished, stopped,
...), score (the mean game score over the last 100 full games, unclipped: the run's policy/true_return_last100),
hours (of training, by the row's agent steps), cpu. ``record`` reads the run's progress at the last logged row at or
before --at_million (the whole run where it ended sooner); the table takes a row only where it reached the budget
(within 1% of it) or finished sooner (Pong at +19), and names the others it leaves out.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mujoco_runs_csv import read_rows, upsert  # noqa: E402  (the atomic, locked writer of the MuJoCo file)

CSV_PATH = Path(__file__).resolve().parents[1] / "docs" / "atari_runs.csv"
COLUMNS = ("game", "arm", "seed", "labels", "timesteps", "status", "score", "hours", "cpu")
KEY = ("game", "arm", "seed")
GAMES = ("Pong", "BeamRider", "Breakout", "Enduro", "Qbert", "Seaquest", "SpaceInvaders")
# The paper's figure 3 (A2C, 50M agent steps... its x axis: 50M timesteps; 3,300 to 10,000 synthetic labels), in words,
# and Ibarz et al. 2018 (DQN, no demonstrations, 6,800 labels, 50M steps), as issue 59 quotes them.
PAPER = {"Pong": "close to RL", "BeamRider": "matches RL", "Breakout": "below RL", "Enduro": "near 0",
         "Qbert": "near RL, slower", "Seaquest": "near RL, slower", "SpaceInvaders": "below RL"}
IBARZ = {"Pong": 19, "BeamRider": 3000, "Breakout": 100, "Enduro": 1600, "Qbert": 5800, "Seaquest": 1000}
STEP, SCORE, WALL = "step", "policy/true_return_last100", "system/wall_s"


def env_id(game: str) -> str:
    return f"{game}NoFrameskip-v4"


def game_of(env: str) -> str:
    if not env.endswith("NoFrameskip-v4"):
        raise ValueError(f"not an Atari run: {env}")
    return env[: -len("NoFrameskip-v4")]


def _order(row: dict) -> tuple:
    game = GAMES.index(row["game"]) if row["game"] in GAMES else len(GAMES)
    arm = {"random": 0, "ppo": 1}.get(row["arm"], 2)
    return game, row["game"], arm, row["arm"], int(row["seed"]) if str(row["seed"]).isdigit() else 0


def rows(path: Path = CSV_PATH) -> list[dict]:
    return read_rows(path, COLUMNS)


def write(new: list[dict], path: Path = CSV_PATH) -> None:
    upsert(new, path, COLUMNS, KEY, _order)


def _csv(path: Path) -> list[dict]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(f"atari_runs: {path}: no such file (not a drlhp run directory?)") from None


def _cpu(run: dict) -> str:
    return next(((s.get("machine") or {}).get("cpu") for s in reversed(run.get("sittings") or [])
                 if (s.get("machine") or {}).get("cpu")), "")


def row_of(run_dir: Path, at_million: float = 5.0) -> dict:
    """The CSV row of a run directory, read at the last logged progress row at or before ``at_million``."""
    run_dir = Path(run_dir)
    config = _json(run_dir / "config.json")
    if (run_dir / "status.json").exists():
        status = _json(run_dir / "status.json").get("status", "")
    else:  # a run exported by floyd (models/): its summary says whether it finished at its target
        status = "finished" if _json(run_dir / "summary.json").get("reached_target") else "exported"
    game = game_of(config["env"])
    preferences = config["mode"] == "train_policy_with_preferences"
    if not preferences and config["mode"] != "train_policy_with_original_rewards":
        raise SystemExit(f"atari_runs: {run_dir} is a {config['mode']} run, not one of the table's")
    if not preferences and config.get("algo") != "ppo":
        raise SystemExit(f"atari_runs: {run_dir} trained {config.get('algo')} on the score; the table's arm is PPO")
    prefs = config["prefs"]
    arm = str(prefs["n_initial_prefs"] + prefs["n_labels"]) if preferences else "ppo"
    budget = int(round(at_million * 1e6))
    progress = [r for r in _csv(run_dir / "progress.csv") if r.get(SCORE) not in (None, "")]
    upto = [r for r in progress if float(r[STEP]) <= budget * 1.01]
    if not upto:
        raise SystemExit(f"atari_runs: {run_dir}: no progress row with a score (too early?)")
    last = upto[-1]
    step = int(float(last[STEP]))
    labels = 0
    if preferences:
        given = [r for r in _csv(run_dir / "progress_prefs.csv")
                 if r.get("prefs/labels_given") not in (None, "") and float(r[STEP]) <= step]
        labels = int(float(given[-1]["prefs/labels_given"])) if given else 0
    ended_here = last is progress[-1]
    if preferences and ended_here and not labels:  # no labels' log kept (an exported model): the summary's count
        labels = int(_json(run_dir / "summary.json").get("labels_given") or 0)
    return {"game": game, "arm": arm, "seed": config["seed"], "labels": labels, "timesteps": step,
            "status": status if ended_here else f"{status} later", "score": round(float(last[SCORE]), 2),
            "hours": round(float(last[WALL]) / 3600, 3), "cpu": _cpu(_json(run_dir / "run.json"))}


def random_row(game: str, games: int = 10, seed: int = 0) -> dict:
    """A random policy's mean game score over ``games`` full games (uniform actions, the table's env)."""
    import numpy as np

    import envs
    from drlhp.processes.cpu import cpu_model

    vec = envs.make_vec_env(env_id(game), 8)
    vec.reset(seed)
    rng = np.random.default_rng(seed)
    scores: list[float] = []
    steps = 0
    while len(scores) < games:
        result = vec.step(rng.integers(0, vec.n_actions, vec.n_envs))
        steps += vec.n_envs
        scores += [e.true_return for e in result.finished]
    vec.close()
    return {"game": game, "arm": "random", "seed": seed, "labels": 0, "timesteps": steps, "status": "finished",
            "score": round(float(np.mean(scores[:games])), 2), "hours": 0, "cpu": cpu_model()}


def in_table(row: dict, budget: int) -> bool:
    """A row the table takes: at the budget (within 1%) or finished sooner."""
    return int(row["timesteps"]) >= 0.99 * budget or row["status"] == "finished"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _num(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.1f}"


def table(all_rows: list[dict], at_million: float = 5.0) -> tuple[str, list[str]]:
    """(the markdown table, the rows left out with why) of every game at the budget."""
    budget = int(round(at_million * 1e6))
    kept = [r for r in all_rows if r["arm"] == "random" or in_table(r, budget)]
    left_out = [f"{r['game']} {r['arm']} seed {r['seed']}: {int(r['timesteps']) / 1e6:.2f}M of {at_million:g}M "
                f"agent steps, {r['status']}" for r in all_rows if r not in kept]
    lines = ["| game | from preferences (score, seed, labels) | PPO on the score | ratio | random | "
             "hours (prefs / PPO) | "
             "paper (fig. 3) | Ibarz et al. | CPU |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for game in GAMES:
        mine = [r for r in kept if r["game"] == game]
        ppo = [r for r in mine if r["arm"] == "ppo"]
        rand = _mean([float(r["score"]) for r in mine if r["arm"] == "random"])
        q = _mean([float(r["score"]) for r in ppo])
        budgets = sorted({r["arm"] for r in mine if r["arm"] not in ("ppo", "random")}, key=int) or [None]
        for budget in budgets:  # a row per label budget (Pong has two), PPO and random beside each
            prefs = [r for r in mine if r["arm"] == budget]
            if not prefs and not ppo and math.isnan(rand):
                continue
            p = _mean([float(r["score"]) for r in prefs])
            ratio = f"{p / q:.2f}" if prefs and ppo and q > 0 else "-"
            seeds = ", ".join(f"{_num(float(r['score']))} (seed {r['seed']}, {int(r['labels']):,} labels)"
                              for r in prefs) or "-"
            hours = " / ".join(_num(_mean([float(r["hours"]) for r in arm])) for arm in (prefs, ppo))
            cpus = sorted({r["cpu"] for r in prefs + ppo if r["cpu"]})
            name = f"{game} ({int(budget):,} labels planned)" if budget else game
            lines.append(f"| {name} | {seeds} | {', '.join(_num(float(r['score'])) for r in ppo) or '-'} | {ratio} | "
                         f"{_num(rand)} | {hours} | {PAPER[game]} | {IBARZ.get(game, '-')} | {'; '.join(cpus)} |")
    return "\n".join(lines), left_out


def curves(run_dirs: list[Path], out: Path) -> None:
    """The mean score of the last 100 games against agent steps, both arms of each game in one panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs: dict[str, list] = {}
    for d in map(Path, run_dirs):
        config = _json(d / "config.json")
        arm = "PPO on the score" if config["mode"] == "train_policy_with_original_rewards" else (
            f"preferences ({config['prefs']['n_initial_prefs'] + config['prefs']['n_labels']:,} labels)")
        rows_ = [r for r in _csv(d / "progress.csv") if r.get(SCORE) not in (None, "")]
        runs.setdefault(game_of(config["env"]), []).append(
            (f"{arm}, seed {config['seed']}", [float(r[STEP]) / 1e6 for r in rows_], [float(r[SCORE]) for r in rows_]))
    games = [g for g in GAMES if g in runs]
    cols = min(4, len(games)) or 1
    fig, axes = plt.subplots(math.ceil(len(games) / cols), cols, figsize=(4 * cols, 3 * math.ceil(len(games) / cols)),
                             squeeze=False)
    for ax, game in zip(axes.flat, games):
        for label, x, y in runs[game]:
            ax.plot(x, y, label=label, lw=1)
        ax.set_title(game)
        ax.set_xlabel("million agent steps")
        ax.set_ylabel("score, last 100 games")
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(games):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("run_dirs", nargs="+", type=Path)
    r.add_argument("--at_million", type=float, default=5.0)
    r.add_argument("--csv", type=Path, default=CSV_PATH)
    rn = sub.add_parser("random")
    rn.add_argument("games", nargs="+", choices=GAMES)
    rn.add_argument("--games_played", type=int, default=10, help="full games to average")
    rn.add_argument("--seed", type=int, default=0)
    rn.add_argument("--csv", type=Path, default=CSV_PATH)
    t = sub.add_parser("table")
    t.add_argument("--at_million", type=float, default=5.0)
    t.add_argument("--csv", type=Path, default=CSV_PATH)
    c = sub.add_parser("curves")
    c.add_argument("run_dirs", nargs="+", type=Path)
    c.add_argument("--plot", type=Path, required=True)
    args = p.parse_args(argv)
    if args.cmd == "record":
        new = [row_of(d, args.at_million) for d in args.run_dirs]
        write(new, args.csv)
        for row in new:
            print(", ".join(f"{k}={row[k]}" for k in COLUMNS))
    elif args.cmd == "random":
        new = [random_row(g, args.games_played, args.seed) for g in args.games]
        write(new, args.csv)
        for row in new:
            print(", ".join(f"{k}={row[k]}" for k in COLUMNS))
    elif args.cmd == "table":
        text, left_out = table(rows(args.csv), args.at_million)
        print(text)
        for line in left_out:
            print(f"not in the table (unfinished at the budget): {line}")
    else:
        curves(args.run_dirs, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

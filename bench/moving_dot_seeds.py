#!/usr/bin/env python
"""MovingDot from synthetic preferences over several seeds: how many learn, and how long each takes.

    python bench/moving_dot_seeds.py --seeds 0 1 2 3 4 [--threshold 0.8] [--runs_dir runs/moving_dot_seeds]
                                     [--json OUT] [--overwrite] [-- extra run.py args]

For each seed S, ONE AFTER ANOTHER (never two at once: each run is already three processes), runs

    python run.py --env MovingDot-v0 --synthetic_prefs --seed S --run_dir <runs_dir>/seed<S> EXTRA

where EXTRA is what follows `--` on this command line, or DEFAULT_ARGS below when there is no `--`
(DEFAULT_ARGS is meant to match the Makefile's `run` target). Each run's output goes to
<runs_dir>/seed<S>.log; a short progress line per seed is printed here. Then each run's summary.json is
read and a table printed: seed, exit code, success_rate_last100, whether it reached --threshold, wall
time (measured here, around the whole subprocess: TensorFlow start-up, gathering and pretraining
included), labels given, agent steps, the agent steps and wall time to the first log row with success
>= 0.8 (first_success), and the predictor's predicted/true segment-return correlation;
then "N of M seeds reached success_rate_last100 >= T; wall time mean X, max Y".

A run that fails is a row with its exit code (the script goes on with the next seed). Existing
<runs_dir>/seed<S> directories are refused (run.py would resume them) unless --overwrite, which
deletes them first. Exit code: 0 if every run exited 0, 1 if any failed, 130 on Ctrl-C (the rows
finished so far are still printed).

Example, tiny (a smoke test, about a minute per seed on 2 cores):
    python bench/moving_dot_seeds.py --seeds 0 -- --million_timesteps 0.002 --n_envs 4 \\
        --segment_length 5 --n_initial_prefs 20 --n_initial_epochs 1 --n_labels 20
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from drlhp.runtime.formatting import format_duration, format_number
from drlhp.runtime.run_paths import RunPaths

REPO = Path(__file__).resolve().parent.parent
# The Makefile's `run` target: MovingDot's default preset (drlhp/presets.py) applies with no flag.
DEFAULT_ARGS: list[str] = []
PROGRESS_EVERY_S = 30.0


def run_seed(seed: int, runs_dir: Path, extra: list[str], python: str) -> dict:
    """One run.py run in a subprocess, its output to <runs_dir>/seed<S>.log; returns its row."""
    run_dir = runs_dir / f"seed{seed}"
    log_path = runs_dir / f"seed{seed}.log"
    cmd = [python, str(REPO / "run.py"), "--env", "MovingDot-v0", "--synthetic_prefs", "--seed", str(seed),
           "--run_dir", str(run_dir), *extra]
    print(f"[seed {seed}] start -> {run_dir} (log {log_path})", flush=True)
    last_print = time.perf_counter()
    last_policy = ""
    t0 = time.perf_counter()
    with open(log_path, "w") as log:
        log.write(" ".join(cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                bufsize=1)
        try:
            for line in proc.stdout:
                log.write(line)
                if line.startswith("[policy]"):
                    last_policy = line
                if last_policy and time.perf_counter() - last_print >= PROGRESS_EVERY_S:
                    last_print = time.perf_counter()
                    print(f"[seed {seed}] {format_duration(last_print - t0)} {_short(last_policy)}", flush=True)
            code = proc.wait()
        except KeyboardInterrupt:
            # run.py got the same Ctrl-C (same process group): let it save and stop.
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    wall = time.perf_counter() - t0
    row = {"seed": seed, "exit_code": code, "wall_s": round(wall, 1), "run_dir": str(run_dir)}
    try:
        summary = json.loads(RunPaths(run_dir).summary.read_text())
    except (OSError, ValueError):
        summary = {}
    for key in ("success_rate_last100", "labels_given", "n_preferences", "timesteps", "pred_true_corr"):
        row[key] = summary.get(key)
    row.update(first_success(run_dir, wall))
    print(f"[seed {seed}] exit {code} after {format_duration(wall)}: success_rate_last100 "
          f"{format_number(row['success_rate_last100'], '.2f')}, {format_number(row['timesteps'], ',')} steps, "
          f"{format_number(row['labels_given'])} labels", flush=True)
    return row


def first_success(run_dir: Path, wall: float, threshold: float = 0.8) -> dict:
    """Agent steps and wall time to the first log row with success_rate_last100 >= threshold (progress.csv;
    one row per --log_interval, so both are known to within one interval). The wall time counts the run's
    set-up (TensorFlow's start, gathering, pretraining: the whole run's wall time less the policy's
    training time, system/wall_s) plus the policy's training time at that row."""
    import csv

    try:
        with open(RunPaths(run_dir) / RunPaths.PROGRESS, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return {"steps_to_success": None, "time_to_success_s": None}
    num = lambda r, k: float(r[k]) if r.get(k) not in (None, "") else None  # noqa: E731
    rows = [r for r in rows if num(r, "system/wall_s") is not None]
    setup = wall - num(rows[-1], "system/wall_s") if rows else None
    for r in rows:
        if (num(r, "policy/success_rate_last100") or 0.0) >= threshold:
            return {"steps_to_success": int(num(r, "step")),
                    "time_to_success_s": round(setup + num(r, "system/wall_s"), 1)}
    return {"steps_to_success": None, "time_to_success_s": None}


def _short(policy_line: str) -> str:
    """The [policy] progress line without the parts that do not matter here."""
    parts = [p.strip() for p in policy_line.strip().split("|")]
    keep = [p for p in parts if p.startswith(("[policy]", "success", "true return", "eta"))]
    return " | ".join(keep)


def add_reached(rows: list[dict], threshold: float) -> None:
    for r in rows:
        sr = r.get("success_rate_last100")
        r["reached"] = r["exit_code"] == 0 and sr is not None and sr >= threshold


def table(rows: list[dict], threshold: float) -> str:
    header = ("seed", "exit", "success_last100", f"reached>={threshold:g}", "wall", "labels", "steps",
              "steps to 0.8", "time to 0.8", "pred/true corr")
    lines = [[str(r["seed"]), str(r["exit_code"]), format_number(r["success_rate_last100"], ".2f"),
              format_number(r["reached"]), format_duration(r["wall_s"]), format_number(r["labels_given"]),
              format_number(r["timesteps"], ","), format_number(r.get("steps_to_success"), ","),
              format_duration(r.get("time_to_success_s")), format_number(r["pred_true_corr"], ".3f")]
             for r in rows]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(header)]
    out = ["  ".join(h.rjust(w) for h, w in zip(header, widths))]
    out += ["  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in lines]
    return "\n".join(out)


def final_line(rows: list[dict], threshold: float) -> str:
    walls = [r["wall_s"] for r in rows]
    n = sum(1 for r in rows if r["reached"])
    mean = sum(walls) / len(walls) if walls else None
    return (f"{n} of {len(rows)} seeds reached success_rate_last100 >= {threshold:g}; "
            f"wall time mean {format_duration(mean)}, max {format_duration(max(walls) if walls else None)}")


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    else:
        extra = list(DEFAULT_ARGS)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                epilog="Arguments after -- go to run.py (default: DEFAULT_ARGS in this file).")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--threshold", type=float, default=0.8, help="success_rate_last100 that counts as learned")
    p.add_argument("--runs_dir", default="runs/moving_dot_seeds", help="run directories <runs_dir>/seed<S>")
    p.add_argument("--json", default=None, help="write the rows to this JSON file")
    p.add_argument("--overwrite", action="store_true", help="delete existing <runs_dir>/seed<S> first")
    p.add_argument("--python", default=sys.executable, help="interpreter for run.py (default: this one)")
    args = p.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        p.error("--seeds: each seed once")
    return args, extra


def main(argv: list[str] | None = None) -> int:
    args, extra = parse_args(sys.argv[1:] if argv is None else argv)
    runs_dir = Path(args.runs_dir)
    if not runs_dir.is_absolute():
        runs_dir = Path.cwd() / runs_dir
    existing = [runs_dir / f"seed{s}" for s in args.seeds if (runs_dir / f"seed{s}").exists()]
    if existing and not args.overwrite:
        print(f"moving_dot_seeds.py: error: {', '.join(map(str, existing))} exist(s); run.py would resume "
              f"them: pass --overwrite to delete them, or another --runs_dir", file=sys.stderr)
        return 2
    for d in existing:
        shutil.rmtree(d)
    runs_dir.mkdir(parents=True, exist_ok=True)
    print(f"MovingDot-v0 from synthetic preferences, seeds {args.seeds}, one at a time; run.py args: "
          f"{' '.join(extra) or '(defaults)'}", flush=True)
    rows, interrupted = [], False
    try:
        for seed in args.seeds:
            rows.append(run_seed(seed, runs_dir, extra, args.python))
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: the table has the seeds that finished", file=sys.stderr, flush=True)
    add_reached(rows, args.threshold)
    if rows:
        print()
        print(table(rows, args.threshold))
    print(final_line(rows, args.threshold), flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"threshold": args.threshold, "run_args": extra, "rows": rows},
                                              indent=2) + "\n")
        print(f"rows -> {args.json}")
    if interrupted:
        return 130
    return 0 if all(r["exit_code"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""The same run with N seeds, as many at once as the machine has cores, then a table of the results.

    python -m floyd seeds --n 3 [--threshold T] [--metric KEY] [--parallel K] [--name NAME] -- RUN.PY ARGS
    python -m floyd seeds --backend ray [--ray_address A] --n 3 -- RUN.PY ARGS   (each seed a Ray task:
                                                                               floyd/ray_seeds.py)

Each seed S runs ``python run.py RUN.PY ARGS --seed S --run_dir <runs_dir>/<name>/seed<S>`` (its output
also in <name>/seed<S>.log); at most min(N, cores) run at once. Then, from each run's summary.json: a
row per seed (exit code, status, steps, true return, success rate, the metric) and the line
"k of N reached METRIC >= T". The rows go to <runs_dir>/<name>/seeds.json as well.
"""
from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

from drlhp.cli import command
from drlhp.runtime.atomic import write_json
from drlhp.runtime.formatting import format_duration, format_number
from drlhp.runtime.interrupts import INTERRUPTED_EXIT
from floyd.index import FloydError
from floyd.seed_rows import done_line, seed_row

DEFAULT_THRESHOLDS = {"success_rate_last100": 0.9}
AUTO_METRICS = ("success_rate_last100", "true_return_last100")


def check_run_args(run_args: list[str]):
    """run.py's parser and input checks on the arguments, once for all seeds (one-line FloydError with
    run.py's message if they fail); the parsed namespace."""
    from drlhp.checks import UsageError, check_inputs
    from drlhp.config import build_parser, config_from_args

    parser = build_parser()

    def error(message):
        raise FloydError(f"the run.py arguments after -- are not valid: {message}")

    parser.error = error
    for a in run_args:
        if a in ("--seed", "--run_dir") or a.startswith(("--seed=", "--run_dir=")):
            raise FloydError(f"leave {a.split('=')[0]} out of the run.py arguments: seeds sets it for each run")
    args = parser.parse_args(run_args)
    if not args.env:
        raise FloydError("the run.py arguments need --env")
    try:
        check_inputs(config_from_args(args))  # what every seed's run.py would refuse, before any starts
    except UsageError as e:
        error(str(e))
    return args


def run_seeds(run_args: list[str], seeds: list[int], group_dir: Path, parallel: int,
              python: str = sys.executable) -> tuple[list[dict], bool]:
    """Run every seed (at most ``parallel`` at once); returns the rows (in seed order) and whether the
    user interrupted."""
    group_dir.mkdir(parents=True, exist_ok=True)
    pending = list(seeds)
    running: dict[int, tuple[subprocess.Popen, float, object]] = {}
    rows: dict[int, dict] = {}
    interrupted = False
    try:
        while pending or running:
            while pending and len(running) < parallel:
                seed = pending.pop(0)
                run_dir = group_dir / f"seed{seed}"
                log = open(group_dir / f"seed{seed}.log", "w")
                cmd = [*command(python), *run_args, "--seed", str(seed), "--run_dir", str(run_dir)]
                proc = subprocess.Popen(cmd, cwd=os.getcwd(), stdout=log, stderr=subprocess.STDOUT)
                running[seed] = (proc, time.monotonic(), log)
                print(f"[seed {seed}] started -> {run_dir}", flush=True)
            for seed, (proc, t0, log) in list(running.items()):
                if proc.poll() is not None:
                    log.close()
                    del running[seed]
                    rows[seed] = seed_row(seed, proc.returncode, time.monotonic() - t0, group_dir / f"seed{seed}")
                    print(done_line(rows[seed]), flush=True)
            time.sleep(0.5)
    except KeyboardInterrupt:
        interrupted = True
        print("\n[floyd] interrupted: waiting for the running seeds to save and stop...", file=sys.stderr, flush=True)
        for seed, (proc, t0, log) in running.items():
            try:  # they got the same Ctrl-C (same process group): they save a checkpoint and exit
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
            rows[seed] = seed_row(seed, proc.returncode, time.monotonic() - t0, group_dir / f"seed{seed}")
    return [rows[s] for s in seeds if s in rows], interrupted


def choose_metric(rows: list[dict], metric: str | None) -> str:
    if metric:
        return metric
    for key in AUTO_METRICS:
        if any(r["summary"].get(key) is not None for r in rows):
            return key
    return AUTO_METRICS[-1]


def add_reached(rows: list[dict], metric: str, threshold: float | None) -> None:
    for r in rows:
        value = r["summary"].get(metric)
        r["metric"] = value if isinstance(value, (int, float)) else None
        r["reached"] = (None if threshold is None else
                        r["exit_code"] == 0 and r["metric"] is not None and r["metric"] >= threshold)


def table(rows: list[dict], metric: str, threshold: float | None) -> str:
    show_metric = metric not in ("true_return_last100", "success_rate_last100")
    header = ["seed", "exit", "status", "steps", "true return", "success"]
    header += [metric] if show_metric else []
    header += [f"reached {metric} >= {threshold:g}"] if threshold is not None else []
    header += ["wall", "run_dir"]
    lines = []
    for r in rows:
        line = [str(r["seed"]), str(r["exit_code"]), r["status"], format_number(r["timesteps"], ","),
                format_number(r["true_return_last100"], ".2f"), format_number(r["success_rate_last100"], ".2f")]
        line += [format_number(r["metric"])] if show_metric else []
        line += [format_number(r["reached"])] if threshold is not None else []
        line += [format_duration(r["wall_s"]), r["run_dir"]]
        lines.append(line)
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    return "\n".join(out)


def final_line(rows: list[dict], n_seeds: int, metric: str, threshold: float | None) -> str:
    walls = [r["wall_s"] for r in rows]
    timing = (f"; wall time mean {format_duration(sum(walls) / len(walls))}, max {format_duration(max(walls))}"
              if walls else "")
    failed = sum(1 for r in rows if r["exit_code"] != 0)
    failed_text = f"; {failed} exited non-zero" if failed else ""
    if threshold is None:
        return f"{len(rows)} of {n_seeds} seeds ran (no --threshold for {metric}: nothing counted){failed_text}{timing}"
    n = sum(1 for r in rows if r["reached"])
    return f"{n} of {n_seeds} seeds reached {metric} >= {threshold:g}{failed_text}{timing}"


def main(opts, run_args: list[str], runs_dir: Path) -> int:
    parsed = check_run_args(run_args)
    seeds = opts.seeds if opts.seeds is not None else list(range(opts.first_seed, opts.first_seed + opts.n))
    if not seeds or len(set(seeds)) != len(seeds):
        raise FloydError("give each seed once (--n N, or --seeds S ...)")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    group_dir = runs_dir / (opts.name or f"seeds-{parsed.env}-{parsed.mode}-{stamp}")
    if group_dir.exists() and any(group_dir.iterdir()):
        raise FloydError(f"{group_dir} already exists and is not empty; pass another --name")
    parallel = opts.parallel or min(len(seeds), os.cpu_count() or 1)
    print(f"[floyd] {len(seeds)} seeds {seeds}, {parallel} at a time -> {group_dir}; run.py {' '.join(run_args)}",
          flush=True)
    if getattr(opts, "backend", "local") == "ray":  # each seed a Ray task (floyd/ray_seeds.py)
        from floyd.ray_seeds import run_seeds_ray

        rows, interrupted = run_seeds_ray(run_args, seeds, group_dir, parallel, opts.ray_address)
    else:
        rows, interrupted = run_seeds(run_args, seeds, group_dir, parallel)
    metric = choose_metric(rows, opts.metric)
    threshold = opts.threshold if opts.threshold is not None else DEFAULT_THRESHOLDS.get(metric)
    add_reached(rows, metric, threshold)
    print()
    print(table(rows, metric, threshold))
    print(final_line(rows, len(seeds), metric, threshold), flush=True)
    write_json(group_dir / "seeds.json", {"run_args": run_args, "seeds": seeds, "parallel": parallel,
                                          "metric": metric, "threshold": threshold, "interrupted": interrupted,
                                          "rows": [{k: v for k, v in r.items() if k != "summary"} for r in rows]})
    print(f"[floyd] rows -> {group_dir / 'seeds.json'}; their curves: python -m floyd compare {group_dir}", flush=True)
    if interrupted:
        return INTERRUPTED_EXIT
    return 0 if all(r["exit_code"] == 0 for r in rows) else 1

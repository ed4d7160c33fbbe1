"""The same run with N seeds, as many at once as the machine has cores (or as Ray tasks), then a table.

    python -m floyd seeds --n 3 [--threshold T] [--metric KEY] [--parallel K] [--name NAME] -- RUN.PY ARGS
    python -m floyd seeds --backend ray [--ray_address A] --n 3 -- RUN.PY ARGS   (each seed a Ray task)

Each seed S runs ``python run.py RUN.PY ARGS --seed S --run_dir <runs_dir>/<name>/seed<S>`` (its output
also in <name>/seed<S>.log); at most min(N, cores) run at once (``--parallel 1``: one after another, as
the timed MovingDot seeds of docs/results/moving-dot.md ran). Then, from each run's summary.json and progress.csv: a
row per seed (exit code, status, steps, true return, success rate, the metric, labels given, the
predictor's predicted/true return correlation, and the agent steps and wall time to the first log row
where the metric reached T; that wall time counts the run's set-up, gathering and pretraining) and the
line "k of N reached METRIC >= T". The rows go to <runs_dir>/<name>/seeds.json as well.

``--backend ray``: each seed's run.py is a Ray task (one CPU each) on the cluster (``--ray_address``) or on
a local Ray, by its absolute path. On the driver's node the run directory is already in place; on another
node the task packs it (tar.gz) and returns it with the output, the driver unpacks it in the same place
and the node's copy is removed: every run directory comes back under --runs_dir, its records unchanged.
Ray is imported only for this backend (floyd starts fast).
"""
from __future__ import annotations

import datetime as dt
import io
import math
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from drlhp.processes.interrupts import INTERRUPTED_EXIT
from drlhp.records.atomic import write_json
from drlhp.records.curves import read_progress_csv
from drlhp.records.formatting import format_duration, format_number
from drlhp.records.run_paths import RunPaths
from drlhp.run.cli import command
from floyd.index import FloydError, read_run

DEFAULT_THRESHOLDS = {"success_rate_last100": 0.9}
AUTO_METRICS = ("success_rate_last100", "true_return_last100")


def check_run_args(run_args: list[str]):
    """run.py's parser and input checks on the arguments, once for all seeds (one-line FloydError with
    run.py's message if they fail); the parsed namespace."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.run.checks import UsageError, check_inputs

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


def seed_row(seed: int, exit_code: int, wall_s: float, run_dir: Path) -> dict:
    """The seed's exit code and wall time, with its run's status and figures (summary.json)."""
    entry = read_run(run_dir)
    summary = entry.summary or {}
    return {"seed": seed, "exit_code": exit_code, "status": entry.status, "wall_s": round(wall_s, 1),
            "run_dir": str(run_dir), "timesteps": summary.get("timesteps"),
            "true_return_last100": entry.true_return, "success_rate_last100": summary.get("success_rate_last100"),
            "labels_given": summary.get("labels_given"), "pred_true_corr": summary.get("pred_true_corr"),
            "summary": summary}


def done_line(row: dict) -> str:
    """``[seed 3] exit 0 after 5m03s: finished, 5,000 steps, true return 1.00, success 0.90``."""
    success = row["success_rate_last100"]
    return (f"[seed {row['seed']}] exit {row['exit_code']} after {format_duration(row['wall_s'])}: {row['status']}, "
            f"{format_number(row['timesteps'], ',')} steps, "
            f"true return {format_number(row['true_return_last100'], '.2f')}"
            + (f", success {format_number(success, '.2f')}" if success is not None else ""))


# --- the local backend: one process per seed ---
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


# --- the Ray backend: one task per seed ---
def _run_one(cmd: list[str], cwd: str, run_dir: str, driver_node: str) -> dict:
    """One seed's run.py, on whichever node Ray chose; what the driver needs to record it."""
    import ray

    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd if os.path.isdir(cwd) else None, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        output, _ = proc.communicate()
    except KeyboardInterrupt:  # ray.cancel on the driver's Ctrl-C: the run saves and stops as on Ctrl-C
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
    result = {"exit_code": proc.returncode, "wall_s": time.monotonic() - t0, "log": output, "tar": None}
    if ray.get_runtime_context().get_node_id() != driver_node and os.path.isdir(run_dir):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(run_dir, arcname=".")
        result["tar"] = buffer.getvalue()
        shutil.rmtree(run_dir, ignore_errors=True)
    return result


def run_seeds_ray(run_args: list[str], seeds: list[int], group_dir: Path, parallel: int,
                  ray_address: str | None = None) -> tuple[list[dict], bool]:
    """run_seeds on Ray: at most ``parallel`` tasks at once; the rows and whether interrupted."""
    import ray

    from drlhp.processes.ray_backend import init_kwargs

    owns = not ray.is_initialized()
    if owns:
        ray.init(**init_kwargs(ray_address))
    group_dir = group_dir.resolve()
    group_dir.mkdir(parents=True, exist_ok=True)
    driver_node = ray.get_runtime_context().get_node_id()
    task = ray.remote(num_cpus=1, max_retries=0)(_run_one)
    pending, running, rows, interrupted = list(seeds), {}, {}, False
    try:
        while pending or running:
            while pending and len(running) < parallel:
                seed = pending.pop(0)
                run_dir = group_dir / f"seed{seed}"
                cmd = [*command(sys.executable), *run_args, "--seed", str(seed), "--run_dir", str(run_dir)]
                running[task.remote(cmd, os.getcwd(), str(run_dir), driver_node)] = (seed, time.monotonic())
                print(f"[seed {seed}] submitted to Ray -> {run_dir}", flush=True)
            ready, _ = ray.wait(list(running), num_returns=1, timeout=0.5)
            for ref in ready:
                seed, t0 = running.pop(ref)
                rows[seed] = _collect(ref, seed, t0, group_dir)
                print(done_line(rows[seed]), flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print("\n[floyd] interrupted: asking the running seeds to save and stop...", file=sys.stderr, flush=True)
        for ref in running:
            ray.cancel(ref)
        for ref, (seed, t0) in running.items():
            rows[seed] = _collect(ref, seed, t0, group_dir)
    finally:
        if owns:
            ray.shutdown()
    return [rows[s] for s in seeds if s in rows], interrupted


def _collect(ref, seed: int, t0: float, group_dir: Path) -> dict:
    """The task's result into <group_dir>/seed<S>.log (and its run directory, from another node)."""
    import ray

    run_dir = group_dir / f"seed{seed}"
    try:
        result = ray.get(ref)
    except ray.exceptions.RayError as e:  # the task's worker or node died, or it was cancelled
        (group_dir / f"seed{seed}.log").write_text(f"[floyd] the Ray task failed: {type(e).__name__}: {e}\n")
        return seed_row(seed, -1, time.monotonic() - t0, run_dir)
    (group_dir / f"seed{seed}.log").write_bytes(result["log"] or b"")
    if result["tar"] is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(result["tar"]), mode="r:gz") as tar:
            tar.extractall(run_dir, filter="data")
    return seed_row(seed, result["exit_code"], result["wall_s"], run_dir)


# --- the table ---
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
        r["steps_to_threshold"], r["time_to_threshold_s"] = (
            (None, None) if threshold is None else first_reach(Path(r["run_dir"]), metric, threshold, r["wall_s"]))


def first_reach(run_dir: Path, metric: str, threshold: float, wall_s: float) -> tuple[int | None, float | None]:
    """Agent steps and wall time to the first log row of progress.csv with policy/<metric> >= threshold (one
    row per --log_interval, so both are known to within one interval); (None, None) if none. The wall time
    counts the run's set-up (TensorFlow's start, gathering, pretraining: the seed's whole wall time less the
    policy's training time, system/wall_s, at its last row) plus the policy's training time at that row."""
    cols = read_progress_csv(RunPaths(run_dir) / RunPaths.PROGRESS)
    steps, values, train_s = (cols.get(k, []) for k in ("step", f"policy/{metric}", "system/wall_s"))
    timed = [i for i, t in enumerate(train_s) if not math.isnan(t)]
    if not timed or not values:
        return None, None
    setup_s = wall_s - train_s[timed[-1]]
    for i in timed:
        if values[i] >= threshold:
            return int(steps[i]), round(setup_s + train_s[i], 1)
    return None, None


def table(rows: list[dict], metric: str, threshold: float | None) -> str:
    show_metric = metric not in ("true_return_last100", "success_rate_last100")
    header = ["seed", "exit", "status", "steps", "true return", "success"]
    show_labels = any(r.get("labels_given") is not None for r in rows)
    show_corr = any(r.get("pred_true_corr") is not None for r in rows)
    header += [metric] if show_metric else []
    header += [f"reached {metric} >= {threshold:g}", "steps to it", "time to it"] if threshold is not None else []
    header += ["labels"] if show_labels else []
    header += ["pred/true corr"] if show_corr else []
    header += ["wall", "run_dir"]
    lines = []
    for r in rows:
        line = [str(r["seed"]), str(r["exit_code"]), r["status"], format_number(r["timesteps"], ","),
                format_number(r["true_return_last100"], ".2f"), format_number(r["success_rate_last100"], ".2f")]
        line += [format_number(r["metric"])] if show_metric else []
        line += ([format_number(r["reached"]), format_number(r.get("steps_to_threshold"), ","),
                  format_duration(r.get("time_to_threshold_s"))] if threshold is not None else [])
        line += [format_number(r.get("labels_given"))] if show_labels else []
        line += [format_number(r.get("pred_true_corr"), ".3f")] if show_corr else []
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
    if getattr(opts, "backend", "local") == "ray":  # each seed a Ray task
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

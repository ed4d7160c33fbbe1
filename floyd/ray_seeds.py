"""``python -m floyd seeds --backend ray``: each seed's run.py as a Ray task (one CPU each) on the cluster
(``--ray_address``) or on a local Ray, with floyd.seeds' rows, table and seeds.json.

A task runs ``run.py ARGS --seed S --run_dir <runs_dir>/<name>/seed<S>`` on its node, by that absolute path.
On the driver's node the run directory is already in place. On another node the task packs the run
directory (tar.gz) and returns it with the output; the driver unpacks it in the same place, and the
node's copy is removed: every run directory comes back under --runs_dir, its records unchanged.
"""
from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import ray

from floyd.seed_rows import done_line, seed_row


def _run_one(cmd: list[str], cwd: str, run_dir: str, driver_node: str) -> dict:
    """One seed's run.py, on whichever node Ray chose; what the driver needs to record it."""
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
    """floyd.seeds.run_seeds on Ray: at most ``parallel`` tasks at once; the rows and whether interrupted."""
    from drlhp.cli import command
    from drlhp.runtime.ray_backend import init_kwargs

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

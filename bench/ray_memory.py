#!/usr/bin/env python
"""Memory per role, and Ray's own, of the preference pipeline on each backend.

    python bench/ray_memory.py [--env MovingDot-v0] [--backends local,ray] [--seconds 30]

Starts run.py (--synthetic_prefs, a budget it never reaches) in its own session, waits until all three
roles are in their main loops (pids.json and progress.csv: the predictor has pretrained and the
policy trains on its reward), then samples the resident set (RSS) and the unique set (USS: what would
be freed if that process ended; shared pages such as TensorFlow's libraries are in RSS once per
process) of every process of the run's tree for --seconds, and stops the run (SIGINT to the group).
Prints, per backend, one row per kind of process: how many, the largest RSS and USS seen (summed over
the processes of that kind), in MB, and the sums. Each row's largest is its own: the sums are an upper
bound of any one moment's.

Processes are named by what they are: the driver (run.py), the three roles (pids.json), on Ray the
channels' hub (ray::ChannelHub) and Ray's own processes by their executable or script (gcs_server,
raylet, the dashboard head and agent, the runtime-env agent, the log and autoscaler monitors, idle
workers ray::IDLE), and on the local backend multiprocessing's resource tracker.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
ARGS = ["--synthetic_prefs", "--preset", "none", "--n_envs", "4", "--segment_length", "5", "--n_initial_prefs",
        "20", "--n_initial_epochs", "1", "--n_labels", "20", "--million_timesteps", "5", "--log_interval", "1",
        "--n_predictors", "2", "--reward_batch_size", "4"]
SCRIPTS = (("runtime_env", "Ray: runtime-env agent"), ("dashboard/agent.py", "Ray: dashboard agent"),
           ("dashboard/dashboard.py", "Ray: dashboard head"), ("log_monitor.py", "Ray: log monitor"),
           ("autoscaler/_private/monitor.py", "Ray: autoscaler monitor"),
           ("resource_tracker", "multiprocessing resource tracker"))


def name_of(proc: psutil.Process, roles: dict[int, str], driver: int) -> str:
    """What a process of the run's tree is: by pid (driver, roles), by executable (Ray's C++ daemons), by
    process title (Ray's workers: ray::IDLE, ray::ChannelHub), else by the Python script it runs."""
    if proc.pid == driver:
        return "driver (run.py)"
    if proc.pid in roles:
        return f"role: {roles[proc.pid]}"
    try:
        exe, cmd = proc.name(), proc.cmdline()
    except psutil.Error:
        return "?"
    if exe in ("gcs_server", "raylet"):
        return f"Ray: {exe}"
    if cmd and cmd[0].startswith("ray::"):
        return "Ray: channels' hub (ray::ChannelHub)" if "ChannelHub" in cmd[0] else f"Ray: worker {cmd[0].split()[0]}"
    script = next((part for part in cmd[1:] if part.endswith(".py") or part.startswith("from multiprocessing")), "")
    for needle, name in SCRIPTS:
        if needle in script:
            return name
    return f"other: {Path(script).name or ' '.join(cmd)[:40]}"


def sample(driver: int, roles: dict[int, str], seconds: float) -> dict[str, list[float]]:
    """name -> [largest RSS, largest USS in MB, most processes] over the samples (processes of one name:
    summed)."""
    peak: dict[str, list[float]] = {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now: dict[str, list[float]] = {}
        root = psutil.Process(driver)
        for proc in [root, *root.children(recursive=True)]:
            try:
                info = proc.memory_full_info()
            except psutil.Error:
                continue
            row = now.setdefault(name_of(proc, roles, driver), [0.0, 0.0, 0])
            row[0] += info.rss / 2**20
            row[1] += info.uss / 2**20
            row[2] += 1
        for name, (rss, uss, n) in now.items():
            best = peak.setdefault(name, [0.0, 0.0, 0])
            best[0], best[1], best[2] = max(best[0], rss), max(best[1], uss), max(best[2], n)
        time.sleep(1.0)
    return peak


def measure(env: str, backend: str, seconds: float, root: Path) -> dict[str, list[float]]:
    run_dir = root / backend
    log = open(root / f"{backend}.log", "w")
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "--env", env, *ARGS, "--backend", backend,
                             "--run_dir", str(run_dir)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    try:
        deadline = time.monotonic() + 300
        while not ((run_dir / "pids.json").exists() and (run_dir / "progress.csv").exists()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{backend}: run.py ended or took over 300 s to start; see {root / backend}.log")
            time.sleep(0.5)
        pids = json.loads((run_dir / "pids.json").read_text())
        roles = {pid: role for role, pid in pids.items() if role != "parent"}
        return sample(proc.pid, roles, seconds)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", default="MovingDot-v0")
    ap.add_argument("--backends", default="local,ray")
    ap.add_argument("--seconds", type=float, default=30.0, help="how long to sample, once all roles run")
    args = ap.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    load = os.getloadavg()
    print(f"{args.env}, {os.cpu_count()} cores ({cpu}), load average {load[0]:.1f} at the start, "
          f"{psutil.virtual_memory().total / 2**30:.0f} GB, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="ray_memory_") as tmp:
        for backend in args.backends.split(","):
            peak = measure(args.env, backend, args.seconds, Path(tmp))
            print(f"\n--backend {backend}: largest over {args.seconds:g} s, MB\n")
            print("| process | how many | RSS | USS |\n| --- | ---: | ---: | ---: |")
            for name, (rss, uss, n) in sorted(peak.items(), key=lambda kv: (not kv[0].startswith(("driver", "role")),
                                                                             -kv[1][0])):
                print(f"| {name} | {n} | {rss:.0f} | {uss:.0f} |")
            print(f"| all | {sum(n for *_, n in peak.values())} | {sum(r for r, *_ in peak.values()):.0f} | "
                  f"{sum(u for _, u, _ in peak.values()):.0f} |")


if __name__ == "__main__":
    main()

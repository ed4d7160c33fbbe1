#!/usr/bin/env python
"""A person's hour of labelling an Atari game, and the memory it takes: peak resident memory (RSS) per process, old
code against new (issue 62, part 1: colour frames for a person must keep memory bounded).

    python bench/person_memory.py [--repo DIR] [--env PongNoFrameskip-v4] [--minutes 60] [--think_s 3]
                                  [--out FILE.csv] [-- RUN.PY ARGS ...]

Starts ``python run.py train_policy_with_preferences --env ENV --labeller web`` (the atari preset for a person; RUN.PY
ARGS replace the mode and flags after the env) from the checkout ``--repo`` (default: this one), in its own session,
and labels through the page's own routes as a browser would, without one: it asks for the page's state
(GET /api/state), downloads both clips of the pair on screen (GET /clip/N/left|right: the PNGs a browser loads), waits
--think_s seconds and answers (POST /api/answer; left or right at random, seeded: the memory does not depend on the
answers). Every 5 s it samples the RSS of each process of the run's tree (run.py, the three roles by pids.json, the
rest by name), writes the samples to --out (default RUN_DIR.memory.csv beside the run directory), and after --minutes
(counted from the page's first pair) stops the run with Ctrl-C (SIGINT: everything saved) and prints each process's
peak RSS and the largest sum of a sample.

Old against new: run it once from each checkout on the same machine, one after the other (not beside each other):

    git worktree add /tmp/drlhp-old 054ec5e       # the code before colour frames (main at issue 62's start)
    python bench/person_memory.py --repo /tmp/drlhp-old --env PongNoFrameskip-v4
    python bench/person_memory.py --env PongNoFrameskip-v4
    (and the same with --env EnduroNoFrameskip-v4)

The old code's preset planned a person's labels differently (2,000 over 10M agent steps; since session 36 1,300 over
1M): give both the same plan, so that only the code differs:
    -- train_policy_with_preferences --labeller web --million_timesteps 1 --n_initial_prefs 325 --n_labels 975

The run directory is a new ``runs/person-memory-<env>-<time>`` under the checkout's own runs/ unless --run_dir is among
RUN.PY ARGS.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import psutil

HERE = Path(__file__).resolve().parents[1]
ADDRESS = re.compile(r"label in a browser: (http://[^/\s]+)/\?token=([\w-]+)")
SAMPLE_S = 5.0


class Page:
    """The page's routes, as a browser uses them (the token in a header)."""

    def __init__(self, base: str, token: str):
        self.base, self.token, self.id = base, token, "bench" + secrets.token_hex(8)

    def _call(self, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, headers={"X-Token": self.token,
                                                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as reply:
            return reply.read()

    def state(self) -> dict:
        return json.loads(self._call(f"/api/state?page={self.id}"))

    def clip(self, number: int, side: str) -> int:
        return len(self._call(f"/clip/{number}/{side}"))

    def answer(self, number: int, kind: str) -> dict:
        return json.loads(self._call("/api/answer", {"page": self.id, "pair": number, "answer": kind}))


def process_name(proc: psutil.Process, roles: dict[int, str], driver: int) -> str:
    if proc.pid == driver:
        return "run.py"
    if proc.pid in roles:
        return roles[proc.pid]
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return "?"
    return "resource tracker" if any("resource_tracker" in part for part in cmd) else f"other ({proc.name()})"


def sampler(driver: int, run_dir: Path, out: Path, stop: threading.Event, peaks: dict) -> None:
    """Every SAMPLE_S: each process's RSS (MB) to ``out`` and into ``peaks`` (name -> largest; "sum" -> the largest
    sum of one sample)."""
    with open(out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["time_s", "process", "rss_mb"])
        t0 = time.monotonic()
        while not stop.wait(SAMPLE_S):
            try:
                roles = {pid: role for role, pid in json.loads((run_dir / "pids.json").read_text()).items()
                         if role != "parent"}
            except (OSError, ValueError):
                roles = {}
            try:
                root = psutil.Process(driver)
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            total, now = 0.0, time.monotonic() - t0
            for proc in procs:
                try:
                    rss = proc.memory_info().rss / 2**20
                except psutil.Error:
                    continue
                name = process_name(proc, roles, driver)
                writer.writerow([round(now, 1), name, round(rss, 1)])
                peaks[name] = max(peaks.get(name, 0.0), rss)
                total += rss
            peaks["sum"] = max(peaks.get("sum", 0.0), total)
            f.flush()


def main() -> None:
    argv = sys.argv[1:]
    run_args = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", type=Path, default=HERE, help="the checkout whose run.py runs (old or new code)")
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--minutes", type=float, default=60.0, help="how long the person labels, from the first pair")
    p.add_argument("--think_s", type=float, default=3.0, help="seconds from a pair's clips loaded to the answer")
    p.add_argument("--out", type=Path, default=None, help="the samples (CSV); default RUN_DIR.memory.csv")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(own)
    repo = args.repo.resolve()
    run_args = run_args or ["train_policy_with_preferences"]
    if "--run_dir" not in run_args:
        run_args += ["--run_dir", str(repo / "runs" / f"person-memory-{args.env}-{time.strftime('%Y%m%d-%H%M%S')}")]
    run_dir = Path(run_args[run_args.index("--run_dir") + 1])
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    out = args.out or run_dir.with_name(run_dir.name + ".memory.csv")
    log_path = run_dir.with_name(run_dir.name + ".out")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True)
    print(f"{repo} (git {commit.stdout.strip()}), {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.env}, "
          f"{args.minutes:g} min, think {args.think_s:g} s", flush=True)
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, str(repo / "run.py"), *run_args, "--env", args.env,
                                 "--labeller", "web"], cwd=repo, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True,
                                env={**os.environ, "PYTHONPATH": str(repo), "TF_CPP_MIN_LOG_LEVEL": "2"})
    stop, peaks = threading.Event(), {}
    thread = threading.Thread(target=sampler, args=(proc.pid, run_dir, out, stop, peaks), daemon=True)
    thread.start()
    rng = np.random.default_rng(args.seed)
    answers, t_first = 0, None
    try:
        while not (m := ADDRESS.search(log_path.read_text())):
            if proc.poll() is not None:
                raise SystemExit(f"run.py exited {proc.returncode}: see {log_path}")
            time.sleep(0.5)
        page = Page(m.group(1), m.group(2))
        while proc.poll() is None and (t_first is None or time.monotonic() - t_first < 60 * args.minutes):
            pairs = page.state()["pairs"]
            if not pairs:
                time.sleep(0.5)
                continue
            number = pairs[0]["number"]
            t_first = t_first or time.monotonic()
            page.clip(number, "left")
            page.clip(number, "right")
            time.sleep(args.think_s)
            page.answer(number, "left" if rng.random() < 0.5 else "right")
            answers += 1
            if answers % 100 == 0:
                print(f"  {answers} answers, {(time.monotonic() - t_first) / 60:.1f} min; peak so far "
                      f"{peaks.get('sum', 0):.0f} MB", flush=True)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        stop.set()
        thread.join(timeout=10)
    print(f"{answers} answers; peak RSS (MB), each process's largest sample, and the largest sum of one sample:")
    for name, mb in sorted(peaks.items(), key=lambda kv: (kv[0] == "sum", kv[0])):
        print(f"  {name:24s} {mb:8.0f}")
    print(f"samples: {out}; the run's output: {log_path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""How many labels per minute a person can give with the labelling window, while the agent trains.

A simulated person drives a real run (python run.py --env PongNoFrameskip-v4, no --synthetic_prefs) on a
real X server (Xvfb, started here) with real key presses from outside the process (xdotool, through
XTEST, as a keyboard would): for each pair it watches for a random 1.5-3 s (a 25-step Pong clip plays
in 1.7 s at 15 fps), then presses a key: left 40%, right 40%, equal 10%, can't tell 10%; every 20th
answer it presses u and answers again. The policy trains on the predictor's reward meanwhile (the
predictor pretrained briefly on a small synthetic database, made here first).

It prints the answers per minute the window took, how many key presses it lost (answer keys with no
pair on screen), the clips' real frame rate and the window's longest timer tick, and the policy's speed.

    python bench/gui_label_rate.py [--minutes 3] [--watch 1.5 3.0] [--screenshot docs/gui_pong_live.png]
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from drlhp.processes.cpu import cpu_model  # noqa: E402
from drlhp.records.run_paths import RunPaths  # noqa: E402
from tests.support.x11 import close_window, find_window, install_x_tools, xdotool, xvfb  # noqa: E402

TITLE = "drlhp: which clip is better?"
KEYS = (("Left", 0.4), ("Right", 0.4), ("Up", 0.1), ("Down", 0.1))


def _wait_for(path: Path, text: str, proc, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in (path.read_text() if path.exists() else ""):
        if proc.poll() is not None:
            raise SystemExit(f"run.py exited {proc.returncode} before {text!r}; see {path}")
        if time.monotonic() > deadline:
            raise SystemExit(f"no {text!r} after {timeout} s; see {path}")
        time.sleep(0.2)


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _grab(display: str, window: int, out: str) -> None:
    """A PNG of the live window, taken by Qt from the X server (another process)."""
    code = ("import sys; from PyQt5.QtWidgets import QApplication; app = QApplication([]); "
            f"ok = app.primaryScreen().grabWindow({window}).save({out!r}, 'PNG'); sys.exit(0 if ok else 1)")
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"},
                   check=True, capture_output=True, timeout=60)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--minutes", type=float, default=3.0, help="labelling time")
    p.add_argument("--watch", type=float, nargs=2, default=(1.5, 3.0), help="seconds a pair is watched: min max")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--screenshot", default=None, help="also save a PNG of the live window (with --show_agent)")
    p.add_argument("--work_dir", default=None, help="where the runs go (default: a temporary folder)")
    args = p.parse_args()
    why = install_x_tools()
    if why:
        print(f"gui_label_rate: cannot run: {why}", file=sys.stderr)
        return 2
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="gui_label_rate_"))
    py = sys.executable

    # 1. a small synthetic preference database, to pretrain the predictor on quickly
    prefs_run = work / "synthetic_prefs"
    if not RunPaths(prefs_run).prefs.exists():
        print(f"[bench] gathering 12 synthetic preferences on {args.env} ...", flush=True)
        subprocess.run([py, str(REPO / "run.py"), "gather_initial_prefs", "--env", args.env, "--synthetic_prefs",
                        "--n_initial_prefs", "12", "--n_envs", "4", "--run_dir", str(prefs_run)], check=True,
                       capture_output=True)

    with xvfb() as display:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "TF_CPP_MIN_LOG_LEVEL": "2"}
        run_dir = work / "person"
        out = work / "person_stdout.txt"
        cmd = [py, str(REPO / "run.py"), "--env", args.env, "--load_prefs_dir", str(prefs_run),
               "--n_initial_prefs", "12", "--n_initial_epochs", "2", "--n_labels", "100000",
               "--million_timesteps", "10", "--log_interval", "5", "--show_agent", "--seed", str(args.seed),
               "--run_dir", str(run_dir)]
        print(f"[bench] {' '.join(cmd[1:])}", flush=True)
        with open(out, "w") as f:
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_for(out, "[prefs] first pair on screen", proc, 300)
            _wait_for(out, "[policy]", proc, 300)  # the policy trains on the predictor's reward
            window = find_window(display, TITLE, 10)
            xdotool(display, "windowfocus", "--sync", window)
            rng = random.Random(args.seed)
            answer_keys = undo_keys = 0
            print(f"[bench] labelling for {args.minutes} min, watching each pair {args.watch[0]}-{args.watch[1]} s",
                  flush=True)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 60 * args.minutes:
                time.sleep(rng.uniform(*args.watch))
                key = rng.choices([k for k, _ in KEYS], [w for _, w in KEYS])[0]
                xdotool(display, "key", key)
                answer_keys += 1
                if answer_keys % 20 == 0:  # a slip, taken back and answered again
                    time.sleep(0.4)
                    xdotool(display, "key", "u")
                    undo_keys += 1
                    time.sleep(rng.uniform(*args.watch))
                    xdotool(display, "key", key)
                    answer_keys += 1
                if args.screenshot and answer_keys == 30:
                    _grab(display, window, args.screenshot)
            minutes = (time.monotonic() - t0) / 60
            close_window(display, window)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
    summary = json.loads(RunPaths(run_dir).summary.read_text())
    prefs_rows = [r for r in _rows(run_dir / "progress_prefs.csv") if r.get("system/clip_fps")]
    policy_rows = _rows(RunPaths(run_dir) / RunPaths.PROGRESS)
    fps = [float(r["system/clip_fps"]) for r in prefs_rows[1:]]  # the first row includes start-up
    tick = [float(r["system/gui_tick_ms_max"]) for r in prefs_rows[1:]]
    sps = [float(r["system/agent_steps_per_s"]) for r in policy_rows[1:]]
    answers, undone = summary["answers"], summary["answers_undone"]
    lost = answer_keys - (answers + undone)
    print(f"[bench] run.py exited {code}; status {json.loads((run_dir / 'status.json').read_text())['status']}; "
          f"{os.cpu_count()} cores ({cpu_model()})")
    print(f"[bench] {answers} answers ({summary['answers_cant_tell']} can't tell, {undone} undone) in {minutes:.2f} min"
          f" = {answers / minutes:.1f} answers per minute, {summary['labels_given']} preferences sent "
          f"({summary['labels_given'] / minutes:.1f} per minute)")
    print(f"[bench] key presses: {answer_keys} answers + {undo_keys} undo; lost (no pair on screen): {lost}")
    if fps:
        print(f"[bench] clips: {sum(fps) / len(fps):.1f} frames/s on average (lowest 5-s window {min(fps):.1f}); "
              f"longest timer tick {max(tick):.0f} ms")
    if sps:
        print(f"[bench] policy meanwhile: {sum(sps) / len(sps):.0f} agent steps/s, predictor version "
              f"{summary.get('predictor_version')}")
    print(f"[bench] files: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

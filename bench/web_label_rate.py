#!/usr/bin/env python
"""--labeller web measured by its own browser: how soon the next pair shows, the clips' frame rate, labels
per minute, and what the server costs while the person thinks.

A real run (python run.py gather_initial_prefs --env ENV --labeller web: the policy plays randomly and the
preference interface serves the page) and a real browser (headless Chromium under Selenium,
tests/support/browser.py); a scripted person as in bench/gui_label_rate.py: for each pair it watches for a random
1.5-3 s, then presses a key (left 40%, right 40%, equal 10%, can't tell 10%), and every 20th answer it
presses u and answers again. Then it thinks, pressing nothing, for --idle_s seconds, while the page stays
open with a pair on screen (it asks the server for its state every 2 s): the preference interface's
process's CPU time over that minute (psutil) is the server's cost. Ctrl-C ends the run; the database must
hold every answer that was not "can't tell" or undone.

    python bench/web_label_rate.py [--env MovingDot-v0] [--answers 50] [--idle_s 60] [--screenshot docs/x.png]

Latency: from the key's keydown in the page to the frame after the next pair is drawn (the page's own
performance.now(), window.drlhp.latencies), so it includes the answer's round trip to the server, the
answer before it reaching the preference queue, and drawing.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from drlhp.processes.cpu import cpu_model  # noqa: E402
from tests.support.browser import chromium, install_chromium  # noqa: E402

KEYS = (("ArrowLeft", 0.4), ("ArrowRight", 0.4), ("ArrowUp", 0.1), ("ArrowDown", 0.1))


def _address(out: Path, proc, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        for line in out.read_text().splitlines():
            if "[prefs] label in a browser: " in line:
                return line.split("label in a browser: ", 1)[1].strip()
        if proc.poll() is not None:
            raise SystemExit(f"run.py exited {proc.returncode} before serving the page; see {out}")
        if time.monotonic() > deadline:
            raise SystemExit(f"no address after {timeout} s; see {out}")
        time.sleep(0.2)


def _shown(driver) -> str:
    return driver.execute_script("return document.body.dataset.pair || ''")


def _wait_pair(driver, other_than: str | None, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while (shown := _shown(driver)) == other_than or not shown:
        if time.monotonic() > deadline:
            raise SystemExit(f"no new pair after {timeout} s (on screen: {shown!r})")
        time.sleep(0.02)
    return shown


def main() -> int:
    import psutil
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", default="MovingDot-v0")
    p.add_argument("--answers", type=int, default=50, help="answer keys pressed (undo keys come on top)")
    p.add_argument("--watch", type=float, nargs=2, default=(1.5, 3.0), help="seconds a pair is watched: min max")
    p.add_argument("--idle_s", type=float, default=60.0, help="seconds of thinking, the server's CPU measured")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--screenshot", default=None, help="a PNG of the page at the 10th answer")
    p.add_argument("--size", default="1000x760",
                   help="the browser's window, WxH (headless Chromium gives the page about 140 px less height)")
    p.add_argument("--work_dir", default=None)
    args = p.parse_args()
    why = install_chromium()
    if why:
        print(f"web_label_rate: cannot run: {why}", file=sys.stderr)
        return 2
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="web_label_rate_"))
    work.mkdir(parents=True, exist_ok=True)
    run_dir, out = work / "run", work / "stdout.txt"
    cmd = [sys.executable, str(REPO / "run.py"), "gather_initial_prefs", "--env", args.env, "--labeller", "web",
           "--n_initial_prefs", str(10 * args.answers), "--n_envs", "4", "--seed", str(args.seed),
           "--log_interval", "5", "--run_dir", str(run_dir)]
    print(f"[bench] {' '.join(cmd[1:])}", flush=True)
    with open(out, "w") as f:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=f, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
    keys = {"ArrowLeft": Keys.ARROW_LEFT, "ArrowRight": Keys.ARROW_RIGHT, "ArrowUp": Keys.ARROW_UP,
            "ArrowDown": Keys.ARROW_DOWN}
    try:
        address = _address(out, proc, 300)
        width, height = (int(v) for v in args.size.split("x"))
        with chromium(width, height) as driver:
            driver.get(address)
            body = driver.find_element(By.TAG_NAME, "body")
            shown = _wait_pair(driver, None)
            rng = random.Random(args.seed)
            answer_keys = undo_keys = cant_tell = 0
            ticks0, t0 = driver.execute_script("return window.drlhp.frameTicks"), time.monotonic()
            last_key, last_t = None, 0.0
            while answer_keys < args.answers:
                time.sleep(rng.uniform(*args.watch))
                key = rng.choices([k for k, _ in KEYS], [w for _, w in KEYS])[0]
                if key == last_key:
                    time.sleep(max(0.0, last_t + 0.3 - time.monotonic()))  # the page's repeat guard
                body.send_keys(keys[key])
                last_key, last_t = key, time.monotonic()
                answer_keys += 1
                cant_tell += key == "ArrowDown"
                shown = _wait_pair(driver, shown)
                if answer_keys % 20 == 0:  # a slip, taken back and answered again
                    time.sleep(0.4)
                    body.send_keys("u")
                    undo_keys += 1
                    shown = _wait_pair(driver, shown)
                    cant_tell -= key == "ArrowDown"
                    time.sleep(rng.uniform(*args.watch))
                    body.send_keys(keys[key])
                    last_key, last_t = key, time.monotonic()
                    cant_tell += key == "ArrowDown"
                    shown = _wait_pair(driver, shown)
                if args.screenshot and answer_keys == 10:
                    driver.save_screenshot(args.screenshot)
            minutes = (time.monotonic() - t0) / 60
            fps = (driver.execute_script("return window.drlhp.frameTicks") - ticks0) / (60 * minutes)
            latencies = driver.execute_script("return window.drlhp.latencies")
            # the person thinks: nothing pressed, the page open with a pair on screen
            role_pid = json.loads((run_dir / "pids.json").read_text())["pref_interface"]
            server = psutil.Process(role_pid)
            cpu0, i0 = server.cpu_times(), time.monotonic()
            requests0 = driver.execute_script("return window.drlhp.requests")
            time.sleep(args.idle_s)
            cpu1, idle = server.cpu_times(), time.monotonic() - i0
            requests = driver.execute_script("return window.drlhp.requests") - requests0
        idle_share = ((cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)) / idle
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    from drlhp.reward.pref_db import PrefDB

    saved = len(PrefDB.load(run_dir / "prefs" / "prefs.npz"))
    answers = answer_keys  # each undone answer was answered again
    load = os.getloadavg()
    print(f"[bench] run.py exited {code} (130: Ctrl-C); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on "
          f"{os.cpu_count()} cores ({cpu_model()})")
    print(f"[bench] {answers} answers ({cant_tell} can't tell, {undo_keys} undone and answered again) in "
          f"{minutes:.2f} min = {answers / minutes:.1f} answers per minute; database: {saved} preferences "
          f"(expected {answers - cant_tell})")
    print(f"[bench] next pair after an answer: median {statistics.median(latencies):.0f} ms, "
          f"90th percentile {sorted(latencies)[int(0.9 * (len(latencies) - 1))]:.0f} ms, "
          f"max {max(latencies):.0f} ms over {len(latencies)} answers (the browser's clock)")
    print(f"[bench] the page's clip clock: {fps:.1f} frames per second (15 wanted)")
    print(f"[bench] the preference interface's process while the person thought for {idle:.0f} s: "
          f"{100 * idle_share:.2f}% of a core ({requests} requests from the page)")
    return 0 if saved == answers - cant_tell else 1


if __name__ == "__main__":
    sys.exit(main())

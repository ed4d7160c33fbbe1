#!/usr/bin/env python
"""A scripted person teaching through the labelling page (issue 40, step 6): a real `python run.py --labeller web`
run and a real browser (headless Chromium under Selenium, tests/support/browser.py; Playwright's browser download
needs a host this project's machines cannot reach). For each pair the page shows, the person reads the simulator
states the page drew its two clips from (the page's API, GET /states/N/left|right), scores each clip by a shipped
goal (--goal, default the backflip that lands: pref_interface.goals:hopper_landed_backflip) on the observations
those states give (gymnasium's own _get_obs after set_state: what the policy saw), and --think_s seconds (3) after
the pair became playable on the page presses the page's key: Left arrow for the left clip scoring higher, Right
arrow for the right, Up arrow for equal scores (the goal oracle's rule: pref_interface/goal_oracle.py). An Atari
goal (Enduro among the cars, issue 62) reads the states the page serves as they are, the console's RAM after each
step, with the game's rewards (the passes the page shows; the score is blanked):

    python bench/page_person.py --goal pref_interface.goals:enduro_with_cars -- train_policy_with_preferences \
        --env EnduroNoFrameskip-v4 --seed N

    python bench/page_person.py [--think_s 3] [--goal MODULE:FUNCTION] [--run_dir DIR] [--answers N]
                                [--minutes [M] [--initial_think_s 0] [--other_run DIR]] [-- RUN.PY ARGS ...]

RUN.PY ARGS default to the run a person gets for the Hopper backflip: `train_policy_with_preferences --env
Hopper-v5 --labeller web` (the mujoco preset for a person: 2M agent steps, 250 labels from the random policy first
and 650 on the paper's schedule; the policy waits for the person's labels). --labeller web and --run_dir are added
where missing. Note: that run makes Hopper-v5 as gymnasium registers it, where a torso pitched beyond 0.2 rad is a fall
and the fall rule "reset" puts the robot back at its start pose (the goals' own runs make it with
terminate_when_unhealthy=False, which a person's run does not get): a whole backward turn cannot happen in it. Add
--fall_rule none to the run's args for a backflip to be possible (no healthy range: nothing put back, nothing
charged, no fall marked on the page; envs/fixed_length.py). --fall_rule penalty lets the robot turn over too, but
charges every step of the turn and marks each as a fall.

Prints the CPU model and the load at start, then a line a minute, and at the end the answers, the person's time and
the waits.

Per answer it logs (RUN_DIR.page_person.csv beside the run directory, rewritten atomically after each answer; the
run's output is RUN_DIR.out): the pair's number, its two clips' ids, both scores, the answer, when the pair became
playable (its clips loaded and on the page's canvases: the page's body data-pair attribute set, seen by a
MutationObserver in the page, Date.now()), when the key was pressed, and the wait from that answer to the next
playable pair.

Modes:
  whole run      (no --minutes) until run.py ends by itself (every planned label given and the budget done), or
                 --answers N answers (then Ctrl-C: the run saves; the held answer is sent)
  --minutes [M]  the wait measurement (issue 40's "waiting with another run on the cores"; M: 10 where not given):
                 the person answers after --initial_think_s (0: at once) until the initial labels (config.json's
                 n_initial_prefs) are all given, then after --think_s; the window opens once the policy trains (its
                 progress.csv's step moves past the one logged when the initial labels were given: the predictor has
                 pretrained) and lasts M minutes; then Ctrl-C. Prints the median and 95th percentile of the wait from
                 an answer to the next playable pair over the window (a wait still running at its end counted as its
                 time so far), the person's run's agent steps/s over it (its progress.csv: its last row before the
                 window to its last at the end), and with --other_run DIR that run's agent steps/s over the same
                 window (its progress.csv likewise)

Run it beside another run at normal priority to measure what a person waits on a shared machine.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PERSON_RUN = ["train_policy_with_preferences", "--env", "Hopper-v5", "--labeller", "web"]
GOAL = "pref_interface.goals:hopper_landed_backflip"
KEYS = {"left": "ArrowLeft", "right": "ArrowRight", "equal": "ArrowUp"}
REPEAT_GUARD_S = 0.3  # the page ignores the same key again within 0.2 s (a key repeat): a person's finger is slower
LOG_FIELDS = ("pair", "clip_left", "clip_right", "score_left", "score_right", "answer", "playable_t", "answer_t",
              "wait_to_next_s")
# Set before any script of the page runs: every change of body's data-pair (the pair on screen, "" while none is)
# is logged with the wall clock, so the person's poll interval does not blur when a pair became playable.
OBSERVER = """
window.__person = [];
new MutationObserver(records => {
  for (const r of records) {
    if (r.attributeName === "data-pair") window.__person.push([r.target.dataset.pair || "", Date.now() / 1000]);
  }
}).observe(document.documentElement, {attributes: true, subtree: true, attributeFilter: ["data-pair"]});
"""


class Judge:
    """A goal's score of a clip from the simulator states the page drew it from: each state set in a fresh env of the
    clip's task (made with the goal's env kwargs) and its observation read as the policy's env gives it. An Atari
    goal (``reads = "atari"``, as Enduro among the cars) scores the console's RAM after each step and the game's
    rewards, as the page serves them, as the goal oracle does (pref_interface/goal_oracle.py): no env is made."""

    def __init__(self, spec: str):
        from pref_interface.goal_oracle import load_goal, reads_atari

        self.spec, self.goal, self.envs = spec, load_goal(spec), {}
        self.atari = reads_atari(self.goal)

    def env(self, env_id: str):
        """The task's env (made once: before the run, so the first pair's judgement costs no gym.make)."""
        import gymnasium as gym

        from envs.goal_kwargs import kwargs_of

        if self.atari:
            return None
        if env_id not in self.envs:
            env = gym.make(env_id, **kwargs_of(self.goal))
            env.reset(seed=0)
            self.envs[env_id] = env
        return self.envs[env_id]

    def observations(self, env_id: str, states):
        import numpy as np

        u = self.env(env_id).unwrapped
        nq = u.model.nq
        out = []
        for s in np.asarray(states, np.float64):
            u.set_state(s[:nq], s[nq:])
            out.append(u._get_obs())
        return np.asarray(out, np.float64), np.zeros((len(out), u.action_space.shape[0]))

    def score(self, env_id: str, states, rewards=None) -> float:
        import numpy as np

        from pref_interface.goal_oracle import score

        if self.atari:
            if rewards is None:
                raise RuntimeError(f"{self.spec} scores an Atari clip's RAM and rewards: the page served no rewards")
            ram = np.asarray(states, np.float64)
            return score(self.goal, ram, np.zeros((len(ram), 0), np.float32),
                         {"reward": np.asarray(rewards, np.float32)}, self.spec)
        obs, actions = self.observations(env_id, states)
        return score(self.goal, obs, actions, {}, self.spec)

    def answer(self, env_id: str, left, right, rewards=(None, None)) -> tuple[str, float, float]:
        """Left, right: each clip's states; ``rewards``: each clip's game rewards (an Atari goal's)."""
        a, b = self.score(env_id, left, rewards[0]), self.score(env_id, right, rewards[1])
        return ("left" if a > b else "right" if b > a else "equal"), a, b


def progress_point(run_dir: Path | None) -> tuple[float, float] | None:
    """(agent steps, the run's wall seconds) of progress.csv's last row, or None before it has one."""
    if run_dir is None or not (run_dir / "progress.csv").exists():
        return None
    with open(run_dir / "progress.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get("step") and r.get("system/wall_s")]
    return (float(rows[-1]["step"]), float(rows[-1]["system/wall_s"])) if rows else None


def rate(first, last) -> str:
    """Agent steps/s between two progress points (the rows logged between two moments), or why none."""
    if first is None or last is None or last[1] <= first[1]:
        return "no progress rows in the window"
    return f"{(last[0] - first[0]) / (last[1] - first[1]):.0f} agent steps/s ({last[0] - first[0]:.0f} steps " \
           f"over {last[1] - first[1]:.0f} s: its last progress row before the window to its last at the end)"


def percentile(values, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def write_log(path: Path, rows: list[dict]) -> None:
    """The per-answer log, written whole to a temporary file and renamed over the old one (atomic)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.DictWriter(f, LOG_FIELDS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


class PagePerson:
    """One browser at the page of a run: sees pairs become playable, judges them, presses keys."""

    def __init__(self, driver, address: str, judge: Judge, log_path: Path):
        import urllib.parse

        self.driver, self.judge, self.log_path = driver, judge, log_path
        parts = urllib.parse.urlparse(address)
        self.base, self.token = f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query)["token"][0]
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        driver.get(address)
        self.playable: dict[str, float] = {}  # pair number -> when it first became playable
        self.judged: dict[str, tuple] = {}
        self.rows: list[dict] = []
        self.last_key, self.last_key_t = None, 0.0

    def states(self, number: str, side: str) -> dict:
        import requests

        reply = requests.get(f"{self.base}/states/{number}/{side}", headers={"X-Token": self.token}, timeout=60)
        if reply.status_code != 200:
            raise RuntimeError(f"GET /states/{number}/{side}: {reply.status_code} {reply.text[:200]}")
        return reply.json()

    def look(self) -> tuple[str, dict | None]:
        """(the pair on screen, "" for none; the page's last state), the playable times logged since the last look
        taken in."""
        events, shown, state = self.driver.execute_script(
            "return [window.__person ? window.__person.splice(0) : [], document.body.dataset.pair || '', "
            "window.drlhp && window.drlhp.state ? window.drlhp.state() : null]")
        for pair, t in events:
            if pair and pair not in self.playable:
                self.playable[pair] = float(t)
        if shown and shown not in self.playable:  # shown before the observer was in place
            self.playable[shown] = time.time()
        if self.rows and self.rows[-1]["wait_to_next_s"] == "":
            last = self.rows[-1]
            later = [t for p, t in self.playable.items() if t >= last["answer_t"] and p != last["pair"]]
            if later:
                self.rows[-1]["wait_to_next_s"] = round(min(later) - self.rows[-1]["answer_t"], 3)
                write_log(self.log_path, self.rows)
        return shown, state

    def step(self, think_s: float) -> bool:
        """Look once; judge a new pair on screen; answer it once think_s has passed since it became playable.
        True when it answered."""
        shown, state = self.look()
        if not shown or shown in {r["pair"] for r in self.rows}:
            return False
        if shown not in self.judged:
            left, right = self.states(shown, "left"), self.states(shown, "right")
            answer, a, b = self.judge.answer(left["env_id"], left["states"], right["states"],
                                             (left.get("rewards"), right.get("rewards")))
            self.judged[shown] = (left["clip"], right["clip"], a, b, answer)
        if time.time() < self.playable[shown] + think_s:
            return False
        clip_left, clip_right, a, b, answer = self.judged[shown]
        pair_clips = next((p["clips"] for p in (state or {}).get("pairs", []) if str(p["number"]) == shown), None)
        if pair_clips is not None and list(pair_clips) != [clip_left, clip_right]:
            raise RuntimeError(f"pair {shown}: the page lists clips {pair_clips}, its states are of "
                               f"{[clip_left, clip_right]}")
        self.press(KEYS[answer])
        self.rows.append({"pair": shown, "clip_left": clip_left, "clip_right": clip_right, "score_left": round(a, 6),
                          "score_right": round(b, 6), "answer": answer, "playable_t": round(self.playable[shown], 3),
                          "answer_t": round(self.last_key_t, 3), "wait_to_next_s": ""})
        write_log(self.log_path, self.rows)
        return True

    def press(self, key: str) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        if key == self.last_key:
            time.sleep(max(0.0, self.last_key_t + REPEAT_GUARD_S - time.time()))
        self.last_key, self.last_key_t = key, time.time()
        self.driver.find_element(By.TAG_NAME, "body").send_keys(getattr(Keys, {
            "ArrowLeft": "ARROW_LEFT", "ArrowRight": "ARROW_RIGHT", "ArrowUp": "ARROW_UP"}[key]))

    def waits(self, since: float = 0.0) -> list[float]:
        """The waits from each answer pressed at or after ``since`` to the next playable pair (known ones)."""
        return [r["wait_to_next_s"] for r in self.rows if r["answer_t"] >= since and r["wait_to_next_s"] != ""]


def start_run(run_args: list[str], run_dir: Path) -> tuple[subprocess.Popen, Path]:
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    out = run_dir.parent / f"{run_dir.name}.out"
    with open(out, "w") as f:
        proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *run_args, "--run_dir", str(run_dir)],
                                cwd=REPO, stdout=f, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, out


def wait_for_address(proc, out: Path, timeout_s: float = 900) -> str:
    """The page's address once run.py prints it (bench/web_label_rate.py's reader of the run's output)."""
    sys.path.insert(0, str(REPO / "bench"))
    from web_label_rate import _address

    return _address(out, proc, timeout_s)


def n_initial_prefs(run_dir: Path) -> int | None:
    try:
        return int(json.loads((run_dir / "config.json").read_text())["prefs"]["n_initial_prefs"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    run_args = argv[argv.index("--") + 1:] if "--" in argv else list(PERSON_RUN)
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--think_s", type=float, default=3.0, help="seconds from a pair becoming playable to the key")
    p.add_argument("--goal", default=GOAL, help="MODULE:FUNCTION the person judges by (pref_interface/goals.py)")
    p.add_argument("--run_dir", type=Path, default=None, help="the run's directory (default: a new one under runs/)")
    p.add_argument("--answers", type=int, default=0, help="stop (Ctrl-C the run) after this many answers (0: never)")
    p.add_argument("--minutes", type=float, nargs="?", const=10.0, default=None,
                   help="the wait measurement: this many minutes of it (--minutes alone: 10, the issue's), from when "
                   "the policy trains")
    p.add_argument("--initial_think_s", type=float, default=0.0,
                   help="with --minutes: the seconds per pair before the window (the initial labels)")
    p.add_argument("--other_run", type=Path, default=None, help="a second run's directory: its agent steps/s over "
                   "the window, from its progress.csv")
    args = p.parse_args(argv)
    if "--labeller" not in run_args:
        run_args += ["--labeller", "web"]
    run_dir = args.run_dir or REPO / "runs" / f"page-person-{time.strftime('%Y%m%d-%H%M%S')}"
    from drlhp.processes.cpu import cpu_model
    from tests.support.browser import chromium, install_chromium

    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"nice {os.nice(0)}; the person answers by {args.goal}, {args.think_s:g} s after a pair is playable",
          flush=True)
    print(f"run: python run.py {' '.join(run_args)} --run_dir {run_dir}", flush=True)
    why = install_chromium()
    if why:
        raise SystemExit(f"no headless Chromium: {why}")
    judge = Judge(args.goal)
    if "--env" in run_args:
        judge.env(run_args[run_args.index("--env") + 1])
    proc, out = start_run(run_args, run_dir)
    code = None
    try:
        address = wait_for_address(proc, out)
        started = time.time()
        with chromium() as driver:
            person = PagePerson(driver, address, judge, run_dir.parent / f"{run_dir.name}.page_person.csv")
            given_at = None  # (time, progress point) when the initial labels were all given
            window = None  # (start time, the person's progress point, the other run's) once the window opens
            initial = n_initial_prefs(run_dir) if args.minutes is not None else None
            next_line = time.time() + 60
            while proc.poll() is None:
                think = args.think_s
                if args.minutes is not None and window is None:
                    initial = initial if initial is not None else n_initial_prefs(run_dir)
                    if initial is not None and len(person.rows) >= initial and given_at is None:
                        given_at = (time.time(), progress_point(run_dir))
                        print(f"[person] the initial {initial} labels given in {given_at[0] - started:.0f} s; the "
                              f"window starts once the policy trains (its progress.csv's step moves on)", flush=True)
                    if given_at is not None and (point := progress_point(run_dir)) is not None and (
                            given_at[1] is None or point[0] > given_at[1][0]):
                        window = (time.time(), point, progress_point(args.other_run))
                        print(f"[person] the policy trains (step {point[0]:.0f}) {window[0] - started:.0f} s in; "
                              f"the {args.minutes:g}-minute window starts", flush=True)
                    if given_at is None:
                        think = args.initial_think_s
                person.step(think)
                if time.time() >= next_line:
                    next_line += 60
                    w = person.waits()
                    print(f"[person] {len(person.rows)} answers in {time.time() - started:.0f} s; wait to the next "
                          f"pair median {statistics.median(w) if w else float('nan'):.1f} s; load "
                          f"{os.getloadavg()[0]:.2f}", flush=True)
                if args.answers and len(person.rows) >= args.answers:
                    break
                if window is not None and time.time() >= window[0] + 60 * args.minutes:
                    break
                time.sleep(0.05)
            end = time.time()
            last_points = (progress_point(run_dir), progress_point(args.other_run))
            open_wait = None  # the last answer's wait, still running: at least this (a lower bound)
            if proc.poll() is None:  # one more look: the wait after the last answer
                deadline = time.time() + 30
                while person.rows and person.rows[-1]["wait_to_next_s"] == "" and time.time() < deadline:
                    person.look()
                    time.sleep(0.05)
                if person.rows and person.rows[-1]["wait_to_next_s"] == "":
                    open_wait = time.time() - person.rows[-1]["answer_t"]
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C, as in the run's terminal: everything saved, held answers sent
        code = proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    rows = person.rows
    answers = {k: sum(r["answer"] == k for r in rows) for k in KEYS}
    summary = {}
    if (run_dir / "summary.json").exists():
        summary = json.loads((run_dir / "summary.json").read_text())
    print(f"run.py exited {code}; {len(rows)} answers ({answers}) in {end - started:.0f} s of the person's time "
          f"({60 * len(rows) / max(1e-9, end - started):.1f} a minute); {summary.get('timesteps')} agent steps, "
          f"{summary.get('labels_given')} labels given; the log: {person.log_path}", flush=True)
    w = person.waits()
    if w:
        print(f"wait from an answer to the next playable pair, all {len(w)}: median {statistics.median(w):.2f} s, "
              f"95th percentile {percentile(w, 95):.2f} s, max {max(w):.2f} s", flush=True)
    if args.minutes is not None:
        if window is None:
            print("the window never opened: the initial labels were not all given, or the policy did not train "
                  "after them", flush=True)
        else:
            ww = person.waits(since=window[0])
            note = ""
            if open_wait is not None:  # it runs into the window; left out, it would flatter the figures
                ww.append(open_wait)
                note = f", the last still waiting at the end and counted as its {open_wait:.1f} s so far"
            span = end - window[0]
            print(f"window of {span / 60:.1f} min (load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}):"
                  f" {len([r for r in rows if r['answer_t'] >= window[0]])} answers; wait from an answer to the next "
                  f"playable pair: median {statistics.median(ww) if ww else float('nan'):.2f} s, 95th percentile "
                  f"{percentile(ww, 95) if ww else float('nan'):.2f} s, max {max(ww) if ww else float('nan'):.2f} s "
                  f"({len(ww)} waits{note})", flush=True)
            print(f"  the person's run: {rate(window[1], last_points[0])}", flush=True)
            if args.other_run is not None:
                print(f"  the other run ({args.other_run}): {rate(window[2], last_points[1])}", flush=True)
    return 0 if code in (0, 130) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""What a person labelling MuJoCo clips costs (issue 30): drawing the clips in the render worker, and the policy's
speed with a person's labeller against the synthetic oracle's.

    python bench/mujoco_person.py [--env Hopper-v5] [--sections worker record runs] [--size 256] [--clips 6]
                                  [--million_timesteps 0.01]

Prints the CPU model and the load, then:

worker   ms per frame drawn by the render worker (pref_interface.clip_drawer.RenderWorker: the child interpreter the
         preference interface uses, envs/render_worker.py) at --size x --size, quality "fast" (what a person is shown)
         and "task", on clips of the task's own length (drlhp.config.presets.MUJOCO_CLIP_STEPS: 1.5 s) of random
         actions;
         the frames one label costs (two clips, every k-th state: at most 30 frames a second) and its seconds
record   the policy's rollout (RolloutCollector, a random-init PPOPolicy, 8 fixed-length envs) in agent steps/s with
         and without recording each step's simulator state (what a person's labeller adds to the policy's process)
runs     short real runs of run.py train_policy_with_preferences on --env (--runs: oracle, web, oracle), the same
         settings: --synthetic_prefs, and --labeller web with a scripted person answering every pair through the
         page's API as soon as it is offered, or after --think_s seconds (both clips fetched as the page does); the
         policy's agent steps/s while training (progress.csv) and over the run (its summary), the labels, and the
         drawing figures of the person's run

Run it niced on a shared machine: the wall figures are then the contended ones.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)


def random_states(env_id: str, steps: int, seed: int) -> "np.ndarray":  # noqa: F821
    import gymnasium as gym
    import numpy as np

    from envs.mujoco_state import record_state

    env = gym.make(env_id)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states = []
    for _ in range(steps):
        states.append(record_state(env))
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    return np.array(states)


def bench_worker(env_id: str, size: int, clips: int) -> None:
    from drlhp.config.presets import MUJOCO_CLIP_STEPS
    from pref_interface.clip_drawer import RenderWorker

    steps = MUJOCO_CLIP_STEPS.get(env_id, 38)
    for quality in ("fast", "task"):
        worker = RenderWorker(size=size, quality=quality)
        try:
            worker.submit("warm-up", env_id, random_states(env_id, 2, 99))
            _wait(worker, 1)
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(clips):
                worker.submit(i, env_id, random_states(env_id, steps, i))
            done = _wait(worker, clips)
            wall = time.perf_counter() - t0
        finally:
            worker.close()
        frames = sum(len(f) for _, f, _ in done)
        head = done[0][2]
        per_label = 2 * frames / clips
        ms = sum(h["ms_per_frame"] * len(f) for _, f, h in done) / frames
        print(f"  worker  {quality:>4}: {ms:6.1f} ms/frame in the worker ({1e3 * wall / frames:6.1f} ms wall incl. "
              f"transfer) at {size}x{size}; clips of {steps} steps, every {head['every']}th state, "
              f"{head['frame_s'] * 1e3:.0f} ms each: {per_label:.0f} frames per label, {per_label * ms / 1e3:.1f} s "
              f"(this process {time.process_time() - c0:.2f} s CPU)", flush=True)


def _wait(worker, n: int, timeout_s: float = 600.0) -> list:
    out, t0 = [], time.monotonic()
    while len(out) < n:
        out += worker.results()
        if time.monotonic() - t0 > timeout_s:
            raise SystemExit("the render worker did not answer")
        time.sleep(0.01)
    return out


def bench_record(env_id: str, seconds: float) -> None:
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy
    from drlhp.policy.ppo.rollout import RolloutCollector
    from envs.fixed_length import any_vector_env

    cfg = PPOConfig(n_envs=8, n_steps=256)
    for record in (False, True, False, True):
        envs = any_vector_env(env_id, cfg.n_envs)
        space = envs.single_action_space
        policy = PPOPolicy(envs.single_observation_space.shape[0], space.shape[0], cfg, 0, space.low, space.high)
        collector = RolloutCollector(envs, policy, 0, predictor_input=True, record_states=record)
        collector.run()
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            collector.run()
            n += cfg.n_steps * cfg.n_envs
        envs.close()
        print(f"  record  states {'on ' if record else 'off'}: {n / (time.perf_counter() - t0):8.0f} agent steps/s "
              f"(rollouts of {cfg.n_steps} x {cfg.n_envs} envs, acting included)", flush=True)


class ApiPerson:
    """A scripted person on the page's API: takes the pair offered, fetches both clips, watches them ``think_s``
    seconds (0: answers at once), answers left."""

    def __init__(self, address: str, think_s: float = 0.0):
        self.think_s = think_s
        import urllib.parse

        parts = urllib.parse.urlparse(address)
        self.base, self.token = f"{parts.scheme}://{parts.netloc}", urllib.parse.parse_qs(parts.query)["token"][0]
        self.answers, self.stop = 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import requests

        headers = {"X-Token": self.token}
        while not self.stop.is_set():
            try:
                state = requests.get(f"{self.base}/api/state?page=benchperson", headers=headers, timeout=30).json()
                if state.get("pairs"):
                    number = state["pairs"][0]["number"]
                    for side in ("left", "right"):
                        requests.get(f"{self.base}/clip/{number}/{side}", headers=headers, timeout=30)
                    time.sleep(self.think_s)
                    requests.post(f"{self.base}/api/answer", json={"page": "benchperson", "pair": number,
                                                                    "answer": "left"}, headers=headers, timeout=30)
                    self.answers += 1
                    continue
            except (requests.RequestException, ValueError):
                pass  # the run is starting or ending
            time.sleep(0.5)


def training_steps_per_s(run_dir: Path) -> float | None:
    """The policy's agent steps/s while it trains: the mean of progress.csv's per-interval figures after the first
    (random play and the wait for the initial labels are not training, and differ between labellers)."""
    import csv

    with open(run_dir / "progress.csv") as f:
        rows = [float(r["system/agent_steps_per_s"]) for r in csv.DictReader(f) if r.get("system/agent_steps_per_s")]
    return sum(rows[1:]) / len(rows[1:]) if len(rows) > 1 else None


def bench_runs(env_id: str, million: float, labellers: list[str], think_s: float) -> None:
    flags = ["train_policy_with_preferences", "--env", env_id, "--million_timesteps", million, "--n_initial_prefs",
             10, "--n_labels", 40, "--n_predictors", 1, "--ppo_n_envs", 8, "--ppo_n_steps", 256,
             "--n_initial_epochs", 20, "--log_interval", 5]
    kinds = {"oracle": ("synthetic oracle", ["--synthetic_prefs"]), "web": ("person (web)", ["--labeller", "web"])}
    for name, extra in (kinds[k] for k in labellers):
        run_dir = Path(tempfile.mkdtemp(prefix="mujoco-person-"))
        out = run_dir.parent / f"{run_dir.name}.out"
        with open(out, "w") as f:
            proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *map(str, flags), *extra, "--run_dir",
                                     str(run_dir / "run")], cwd=REPO, stdout=f, stderr=subprocess.STDOUT,
                                    env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
        person = None
        while proc.poll() is None:
            if person is None and "web" in name:
                for line in out.read_text().splitlines():
                    if "[prefs] label in a browser: " in line:
                        person = ApiPerson(line.split("label in a browser: ", 1)[1].strip(), think_s)
            time.sleep(0.5)
        if person is not None:
            person.stop.set()
        summary = json.loads((run_dir / "run" / "summary.json").read_text()) if proc.returncode == 0 else {}
        if not summary:
            print(f"  runs    {name}: run.py exited {proc.returncode}; see {out}", flush=True)
            continue
        drawn = {k: v for k, v in summary.items() if k.startswith("clip_")}
        training = training_steps_per_s(run_dir / "run")
        if person is not None:
            name = f"{name}, {think_s:g} s a pair"
        print(f"  runs    {name:>16}: {training:.0f} agent steps/s while training (progress.csv; "
              f"{summary.get('agent_steps_per_s')} over the whole run, {summary.get('timesteps')} steps), "
              f"{summary.get('labels_given')} labels{'' if person is None else f' ({person.answers} answered)'}; "
              f"{drawn or ''}", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="Hopper-v5")
    p.add_argument("--sections", nargs="+", default=["worker", "record", "runs"])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--clips", type=int, default=6, help="clips drawn per quality")
    p.add_argument("--seconds", type=float, default=10.0, help="per rollout figure")
    p.add_argument("--million_timesteps", type=float, default=0.03, help="each run's budget")
    p.add_argument("--runs", nargs="+", default=["oracle", "web", "oracle"], choices=["oracle", "web"],
                   help="the runs, in order")
    p.add_argument("--think_s", type=float, default=0.0, help="the scripted person's seconds per pair (0: at once)")
    args = p.parse_args(argv)
    from drlhp.processes.cpu import cpu_model

    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); load average {os.getloadavg()[0]:.2f}; {args.env}", flush=True)
    if "worker" in args.sections:
        bench_worker(args.env, args.size, args.clips)
    if "record" in args.sections:
        bench_record(args.env, args.seconds)
    if "runs" in args.sections:
        bench_runs(args.env, args.million_timesteps, args.runs, args.think_s)


if __name__ == "__main__":
    main()

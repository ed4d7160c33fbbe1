#!/usr/bin/env python
"""Agent steps per second on this machine, each part of the policy loop measured in one run.

    python bench/throughput.py --env PongNoFrameskip-v4 [--seconds 20] [--json OUT] [--compare_vec_envs]
    python bench/throughput.py --env PongNoFrameskip-v4 --backends local,ray   # the pipeline on each backend

Measures, one after another (never two at once), with the default A2C shape (16 envs x 5 steps):
  env       stepping the vector env with random actions
  act       the policy's forward pass alone (batch of n_envs, compiled tf.function)
  train     the A2C update alone (batch n_envs * n_steps)
  a2c       the whole loop with original rewards: rollout (act + env) + reward + update
  ppo       the same loop with PPO on discrete actions (--algo ppo; the presets' Atari settings: 8 envs x 128
            steps, 4 epochs of 4 minibatches of 256), and its update alone (--no_ppo: skip both)
  pipeline  the preference pipeline (run.py, three processes, synthetic oracle, default flags apart
            from a short start: 64 initial preferences, 1 pretraining epoch), measured in the policy
            process once the first predictor weights arrived: agent steps/s over --pipeline_seconds
            (from its progress.csv), with the predictor's training steps/s and labels per minute
and prints each figure and the ratios between them (pipeline / a2c is issue 4's target: >= 0.6).
--compare_vec_envs also measures gymnasium's AsyncVectorEnv with AtariPreprocessing (the alternative to
ale-py's AtariVectorEnv).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)
from drlhp.records.run_paths import RunPaths  # noqa: E402


def timed(fn, seconds: float, per_call: int, warmup: int = 3) -> float:
    """Calls fn() for about `seconds` after `warmup` calls; returns items per second."""
    for _ in range(warmup):
        fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n * per_call / (time.perf_counter() - t0)


def bench_env(env_id: str, n_envs: int, seconds: float) -> float:
    import envs

    vec = envs.make_vec_env(env_id, n_envs)
    vec.reset(0)
    rng = np.random.default_rng(0)
    rate = timed(lambda: vec.step(rng.integers(0, vec.n_actions, n_envs)), seconds, n_envs)
    vec.close()
    return rate


def bench_ppo(env_id: str, seconds: float) -> dict:
    """Discrete PPO's loop with original rewards (rollout, reward, update) and its update alone, in agent steps/s,
    on the discrete presets' PPO settings (drlhp/config/presets.py, DISCRETE_PPO)."""
    import shlex

    import envs
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import DISCRETE_PPO
    from drlhp.policy.ppo.discrete_policy import DiscretePPOPolicy
    from drlhp.policy.ppo.discrete_rollout import DiscreteRolloutCollector
    from drlhp.policy.reward_source import ClippedEnvReward

    cfg = config_from_args(build_parser().parse_args(shlex.split(DISCRETE_PPO))).ppo
    vec = envs.make_vec_env(env_id, cfg.n_envs)
    policy = DiscretePPOPolicy(vec.obs_shape, vec.n_actions, cfg, seed=0, obs_dtype=vec.obs_dtype)
    collector = DiscreteRolloutCollector(vec, policy, ClippedEnvReward(), cfg.n_steps, seed=0)
    parts = {"env_s": 0.0, "act_s": 0.0, "reward_s": 0.0, "train_s": 0.0}
    rollout = collector.run()

    def update_alone():
        policy.learn(rollout, 1e-9)

    out = {"ppo_update_steps_per_s": timed(update_alone, seconds, cfg.batch, warmup=1)}
    out["ppo_update_ms"] = 1e3 * cfg.batch / out["ppo_update_steps_per_s"]

    def ppo_update():
        r = collector.run()
        t0 = time.perf_counter()
        policy.learn(r, 1e-9)
        parts["train_s"] += time.perf_counter() - t0
        for k in ("env_s", "act_s", "reward_s"):
            parts[k] += getattr(r, k)

    t0 = time.perf_counter()
    out["ppo_steps_per_s"] = timed(ppo_update, seconds, cfg.batch, warmup=0)
    total = time.perf_counter() - t0
    vec.close()
    out.update({f"ppo_time_frac_{k[:-2]}": v / total for k, v in parts.items()})
    return out


def _make_gymnasium_atari(env_id: str):
    """One gymnasium Atari env with the same preprocessing (runs in a spawned worker)."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    return FrameStackObservation(AtariPreprocessing(gym.make(env_id), noop_max=30, frame_skip=4,
                                                    screen_size=84), 4)


def bench_gymnasium_async(env_id: str, n_envs: int, seconds: float) -> float:
    import functools

    import gymnasium as gym

    vec = gym.vector.AsyncVectorEnv([functools.partial(_make_gymnasium_atari, env_id)] * n_envs, context="spawn")
    vec.reset(seed=0)
    rate = timed(lambda: vec.step(vec.action_space.sample()), seconds, n_envs)
    vec.close()
    return rate


def _csv_rows(path: Path) -> list[dict]:
    import csv

    try:
        with open(path) as f:
            return [row for row in csv.DictReader(f)]
    except OSError:
        return []


def stop_run(proc, timeout: float = 180) -> None:
    """End a run.py process as Ctrl-C does (SIGTERM: every process saves; never ignored by a background job), and
    wait for it; killed only past ``timeout`` seconds."""
    import signal
    import subprocess

    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def bench_pipeline(env_id: str, seconds: float, run_dir: Path, extra_args: list[str], root: Path | None = None) -> dict:
    """The three processes on env_id for `seconds` of policy training, then SIGTERM; figures from the
    run's progress files: agent steps/s (policy), predictor steps/s, labels per minute. ``root``: the
    checkout whose run.py runs (default: this one)."""
    import subprocess

    root = root or Path(__file__).resolve().parent.parent
    cmd = [sys.executable, str(root / "run.py"), "--env", env_id,
           "--synthetic_prefs", "--n_initial_prefs", "64", "--n_initial_epochs", "1", "--million_timesteps", "100",
           "--log_interval", "5", "--seed", "0", "--run_dir", str(run_dir), *extra_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=root)
    t_first = None
    try:
        while proc.poll() is None:
            time.sleep(2)
            rows = [r for r in _csv_rows(RunPaths(run_dir) / RunPaths.PROGRESS) if float(r["step"]) > 0]
            if rows and t_first is None:
                t_first = time.perf_counter()
            if t_first is not None and time.perf_counter() - t_first >= seconds:
                break
    finally:
        stop_run(proc)
    if t_first is None:
        raise RuntimeError(f"the pipeline never trained: {(proc.stderr.read() or '').strip()[-500:]}")
    rows = [r for r in _csv_rows(RunPaths(run_dir) / RunPaths.PROGRESS) if float(r["step"]) > 0]
    first, last = rows[0], rows[-1]
    out = {"pipeline_steps_per_s": (float(last["step"]) - float(first["step"]))
           / max(1e-9, float(last["system/wall_s"]) - float(first["system/wall_s"]))}
    rew = [r for r in _csv_rows(run_dir / "progress_reward.csv") if r.get("reward/train_step_ms")]
    if rew:
        out["pipeline_predictor_step_ms"] = float(rew[-1]["reward/train_step_ms"])
        out["pipeline_predictor_steps"] = float(rew[-1]["reward/train_steps"])
    prefs = [r for r in _csv_rows(run_dir / "progress_prefs.csv")
             if r.get("prefs/labels_per_minute") and float(r["step"]) >= float(first["step"])]
    if prefs:  # while the policy trained (the initial preferences come faster)
        out["pipeline_labels_per_minute"] = sum(float(r["prefs/labels_per_minute"]) for r in prefs) / len(prefs)
    for key in ("system/time_frac_train", "system/time_frac_env", "system/time_frac_act", "system/time_frac_reward"):
        if last.get(key):
            out["pipeline_" + key.split("/")[1]] = float(last[key])
    for key in ("system/memory_mb_policy",):
        if last.get(key):
            out["pipeline_" + key.split("/")[1]] = float(last[key])
    out["pipeline_run_dir"] = str(run_dir)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--n_envs", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20.0, help="per measurement")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--compare_vec_envs", action="store_true")
    p.add_argument("--pipeline_seconds", type=float, default=120.0,
                   help="policy training time of the preference pipeline (0: skip it)")
    p.add_argument("--pipeline_args", default="", help="extra run.py flags for the pipeline, one string")
    p.add_argument("--no_ppo", action="store_true", help="skip discrete PPO's loop and update")
    p.add_argument("--compare", default=None, metavar="REV",
                   help="also measure the pipeline of this commit (a temporary git worktree), right before ours")
    p.add_argument("--backends", default="local",
                   help="comma-separated run.py --backend values: the pipeline is measured on each, one after "
                        "another in this run (e.g. local,ray: the cost of Ray)")
    args = p.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    if len(backends) > 1 and args.compare:
        p.error("--compare and more than one --backends: one at a time")
    from predictor_speed import cpu_model

    cpu = cpu_model()

    from drlhp.processes.tf_setup import configure_tensorflow

    tf = configure_tensorflow(2, 1, seed=0)
    import envs
    from drlhp.config.a2c import A2CConfig
    from drlhp.policy.a2c.policy import A2CPolicy
    from drlhp.policy.a2c.rollout import A2CRunner
    from drlhp.policy.reward_source import ClippedEnvReward

    cfg = A2CConfig(n_envs=args.n_envs)
    figures: dict[str, float] = {}
    print(f"# {args.env}, {args.n_envs} envs x {cfg.n_steps} steps, {os.cpu_count()} cores, "
          f"TF {tf.__version__}, {platform.machine()}, CPU: {cpu}", flush=True)

    figures["env_steps_per_s"] = bench_env(args.env, args.n_envs, args.seconds)
    print(f"env alone (AtariVectorEnv / MovingDot vec env): {figures['env_steps_per_s']:8.0f} agent steps/s",
          flush=True)
    if args.compare_vec_envs and args.env.endswith("NoFrameskip-v4"):
        figures["gymnasium_async_env_steps_per_s"] = bench_gymnasium_async(args.env, args.n_envs, args.seconds)
        print(f"env alone (gymnasium AsyncVectorEnv):  {figures['gymnasium_async_env_steps_per_s']:8.0f} agent steps/s",
              flush=True)

    vec = envs.make_vec_env(args.env, args.n_envs)
    policy = A2CPolicy(vec.obs_shape, vec.n_actions, cfg, seed=0)
    obs = vec.reset(0)
    figures["act_steps_per_s"] = timed(lambda: policy.act(obs), args.seconds, args.n_envs)
    print(f"policy inference alone:               {figures['act_steps_per_s']:8.0f} agent steps/s", flush=True)

    batch = cfg.n_envs * cfg.n_steps
    b_obs = np.repeat(obs, cfg.n_steps, axis=0)
    b_act = np.zeros(batch, np.int32)
    b_ret = np.zeros(batch, np.float32)
    figures["train_steps_per_s"] = timed(lambda: policy.train(b_obs, b_act, b_ret, 1e-9), args.seconds, batch)
    figures["train_step_ms"] = 1e3 * batch / figures["train_steps_per_s"]
    print(f"A2C update alone:                     {figures['train_steps_per_s']:8.0f} agent steps/s "
          f"({figures['train_step_ms']:.1f} ms per update of {batch})", flush=True)

    runner = A2CRunner(vec, policy, ClippedEnvReward(), cfg.n_steps, cfg.gamma, seed=0)
    parts = {"env_s": 0.0, "act_s": 0.0, "reward_s": 0.0, "train_s": 0.0}

    def a2c_update():
        r = runner.run()
        t0 = time.perf_counter()
        policy.train(r.b_obs, r.b_actions, r.b_returns, 1e-9)
        parts["train_s"] += time.perf_counter() - t0
        for k in ("env_s", "act_s", "reward_s"):
            parts[k] += getattr(r, k)

    for _ in range(3):
        a2c_update()
    parts.update({k: 0.0 for k in parts})
    t0 = time.perf_counter()
    figures["a2c_steps_per_s"] = timed(a2c_update, args.seconds, batch, warmup=0)
    total = time.perf_counter() - t0
    vec.close()
    print(f"A2C with original rewards (whole loop): {figures['a2c_steps_per_s']:6.0f} agent steps/s", flush=True)
    print("  time in the loop: " + ", ".join(f"{k[:-2]} {100 * v / total:.0f}%" for k, v in parts.items()) +
          f", other {100 * (1 - sum(parts.values()) / total):.0f}%")
    for k, v in parts.items():
        figures[f"a2c_time_frac_{k[:-2]}"] = v / total

    if not args.no_ppo:
        res = bench_ppo(args.env, args.seconds)
        figures.update(res)
        print(f"PPO update alone (8 x 128, 4 x 4):   {res['ppo_update_steps_per_s']:8.0f} agent steps/s "
              f"({res['ppo_update_ms']:.0f} ms per update of 1,024)", flush=True)
        print(f"PPO with original rewards (whole loop): {res['ppo_steps_per_s']:6.0f} agent steps/s", flush=True)
        print("  time in the loop: " + ", ".join(f"{k[len('ppo_time_frac_'):]} {100 * v:.0f}%" for k, v in res.items()
                                                 if k.startswith("ppo_time_frac_")))

    if args.pipeline_seconds > 0:
        import contextlib
        import shlex
        import tempfile

        from predictor_speed import ROOT, old_worktree

        with contextlib.ExitStack() as stack:
            base = Path(tempfile.mkdtemp(prefix="drlhp-bench-"))  # kept: the run directories it prints
            versions = [("", ROOT, backends[-1])]
            if args.compare:
                rev, old_tree, _ = stack.enter_context(old_worktree(args.compare))
                versions.insert(0, (f"old_{rev}_", old_tree, backends[-1]))
            if len(backends) > 1:  # "local_pipeline_steps_per_s", "ray_pipeline_steps_per_s", ...
                versions = [(f"{b}_", ROOT, b) for b in backends]
            for prefix, tree, backend in versions:
                run_dir = base / f"{prefix}pipeline"
                label = prefix[4:-1] if prefix.startswith("old_") else f"backend {prefix[:-1]}" if prefix else ""
                name = f"preference pipeline{' (' + label + ')' if label else ''}"
                print(f"{name}: {args.pipeline_seconds:.0f} s of policy training (run dir {run_dir})...", flush=True)
                extra = shlex.split(args.pipeline_args) + (["--backend", backend] if backend != "local" else [])
                res = bench_pipeline(args.env, args.pipeline_seconds, run_dir, extra, tree)
                figures.update({k.replace("pipeline", prefix + "pipeline", 1): v for k, v in res.items()})
                print(f"{name} (policy process): {res['pipeline_steps_per_s']:6.0f} agent steps/s"
                      + (f", {res['pipeline_labels_per_minute']:.0f} labels/min"
                         if "pipeline_labels_per_minute" in res else "")
                      + (f", predictor {res['pipeline_predictor_step_ms']:.0f} ms per training step"
                         if "pipeline_predictor_step_ms" in res else ""), flush=True)
                fracs = {k: v for k, v in res.items() if k.startswith("pipeline_time_frac_")}
                if fracs:
                    print("  time in the policy loop: " + ", ".join(f"{k[len('pipeline_time_frac_'):]} {100 * v:.0f}%"
                                                                  for k, v in fracs.items()))
                if prefix.startswith("old_"):
                    print(f"  {prefix[4:-1]}: pipeline / a2c  "
                          f"{figures[prefix + 'pipeline_steps_per_s'] / figures['a2c_steps_per_s']:.2f}")

    print("ratios:")
    print(f"  a2c / env alone        {figures['a2c_steps_per_s'] / figures['env_steps_per_s']:.2f}")
    print(f"  a2c / inference alone  {figures['a2c_steps_per_s'] / figures['act_steps_per_s']:.2f}")
    if "ppo_steps_per_s" in figures:
        print(f"  ppo / a2c              {figures['ppo_steps_per_s'] / figures['a2c_steps_per_s']:.2f}")
    if "pipeline_steps_per_s" in figures:
        print(f"  pipeline / a2c         {figures['pipeline_steps_per_s'] / figures['a2c_steps_per_s']:.2f}"
              "   (target >= 0.60)")
    for b in backends if len(backends) > 1 else ():
        print(f"  pipeline on {b} / a2c  {figures[b + '_pipeline_steps_per_s'] / figures['a2c_steps_per_s']:.2f}")
    for b in backends[1:] if len(backends) > 1 else ():
        print(f"  pipeline on {b} / on {backends[0]}  "
              f"{figures[b + '_pipeline_steps_per_s'] / figures[backends[0] + '_pipeline_steps_per_s']:.2f}")
    if "gymnasium_async_env_steps_per_s" in figures:
        print(f"  AtariVectorEnv / AsyncVectorEnv  "
              f"{figures['env_steps_per_s'] / figures['gymnasium_async_env_steps_per_s']:.2f}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"env": args.env, "n_envs": args.n_envs, **figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()

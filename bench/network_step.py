#!/usr/bin/env python
"""The networks' own cost: one reward-predictor training step and one A2C update, by TensorFlow kernel
library (oneDNN or Eigen) and thread count, each configuration in its own process.

    python bench/network_step.py [--threads 1 2] [--repeats 10]

reward: make run's predictor (1 member, no batch norm, no dropout), 16 pairs of 5-step 84x84x4 clips
a2c:    the Nature CNN policy, an update on 16 envs x 5 steps
Prints ms per call with the CPU model. The floor under predictor steps/s and policy steps/s.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, time
import numpy as np
from drlhp.runtime.tf_setup import configure_tensorflow
configure_tensorflow(int(sys.argv[1]), 1, seed=0, onednn=sys.argv[2] == "onednn")
from drlhp.policy.a2c import A2CPolicy
from drlhp.config import A2CConfig, RewardConfig
from drlhp.reward.model import RewardEnsemble
repeats = int(sys.argv[3])
rng = np.random.default_rng(0)
ens = RewardEnsemble((84, 84, 4), RewardConfig(n_predictors=1, lr=1e-3, dropout=0.0, batchnorm=False), seed=0)
s1 = rng.integers(0, 255, (1, 16, 5, 84, 84, 4), dtype=np.uint8)
mu, l2 = np.tile(np.array([1, 0], np.float32), (1, 16, 1)), np.full(1, 1e-4, np.float32)
pol = A2CPolicy((84, 84, 4), 6, A2CConfig(n_envs=16), seed=0)
b_obs = rng.integers(0, 255, (80, 84, 84, 4), dtype=np.uint8)
b_act, b_ret = np.zeros(80, np.int32), np.zeros(80, np.float32)
out = {}
for name, fn in (("reward", lambda: ens.train_step(s1, s1, mu, l2)),
                 ("a2c", lambda: pol.train(b_obs, b_act, b_ret, 1e-9))):
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    out[name] = 1e3 * (time.perf_counter() - t0) / repeats
print(json.dumps(out))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeats", type=int, default=10)
    args = p.parse_args()
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"CPU: {cpu}, {os.cpu_count()} cores")
    for threads in args.threads:
        for lib in ("onednn", "eigen"):
            res = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + CHILD,
                                  str(threads), lib, str(args.repeats)], capture_output=True, text=True, cwd=ROOT)
            if res.returncode != 0:
                raise SystemExit(res.stderr[-2000:])
            r = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"{threads} thread(s), {lib:6s}: reward training step {r['reward']:6.0f} ms, "
                  f"A2C update {r['a2c']:6.0f} ms", flush=True)


if __name__ == "__main__":
    main()

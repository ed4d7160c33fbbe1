#!/usr/bin/env python
"""Can the reward-learning loop be fed on this machine? Pair-updates per second one core gives to Pong's
reward predictor, by configuration, and the policy speed each feed rate then allows.

    python bench/feed_rate.py [--repeats 5] [--threads 1] [--library both|auto|onednn|eigen]

A pair-update is one labelled pair of 25-step clips through one member, forward and backward: 50
observations of 84x84x4 through the paper's 4-conv network, about 19.5 MFLOP each (6.5 forward, x3),
so about 1 GFLOP. The paper's predictor "typically processes 1 label per 10 RL timesteps" (appendix
A.2), i.e. 0.1 pair-updates per agent step. For each configuration this prints the training step's
time (16 pairs per member), the pair-updates/s per member, the GFLOP/s that makes, and the largest
policy speed (agent steps/s) at which 0.1, 0.03 and 0.01 pair-updates per agent step can be kept up
with this many threads given to the predictor (--reward_updates_per_step makes the policy wait for it).
Each configuration runs in its own process, one after the other; nothing else should run meanwhile.
--library both (the default) measures each configuration with Eigen's kernels (the predictor's before
--reward_onednn auto) and oneDNN's; auto: the library --reward_onednn auto takes on this machine.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from predictor_speed import cpu_model  # noqa: E402

GFLOP_PER_PAIR_UPDATE = 50 * 3 * 6.5e6 / 1e9
CONFIGS = {  # name: (members, batch norm, dropout)
    "paper: 3 members, batch norm, dropout 0.5": (3, True, 0.5),
    "1 member, batch norm, dropout 0.5": (1, True, 0.5),
    "1 member, no batch norm, dropout 0.5": (1, False, 0.5),
}

CHILD = r"""
import json, sys, time
import numpy as np
from drlhp.processes.tf_setup import configure_tensorflow
threads, members, repeats = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[5])
bn, dropout = sys.argv[3] == "1", float(sys.argv[4])
configure_tensorflow(threads, 1, seed=0, onednn=sys.argv[6])
from drlhp.config.reward import RewardConfig
from drlhp.reward.model import RewardEnsemble
ens = RewardEnsemble((84, 84, 4), RewardConfig(n_members=members, batchnorm=bn, dropout=dropout), seed=0)
rng = np.random.default_rng(0)
s1 = rng.integers(0, 255, (members, 16, 25, 84, 84, 4), dtype=np.uint8)
s2 = rng.integers(0, 255, (members, 16, 25, 84, 84, 4), dtype=np.uint8)
mu = np.tile(np.array([1, 0], np.float32), (members, 16, 1))
l2 = np.full(members, 1e-4, np.float32)
for _ in range(2):
    ens.train_step(s1, s2, mu, l2)
t0 = time.perf_counter()
for _ in range(repeats):
    ens.train_step(s1, s2, mu, l2)
print(json.dumps({"step_s": (time.perf_counter() - t0) / repeats}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="TensorFlow threads of the predictor")
    p.add_argument("--library", choices=("both", "auto", "onednn", "eigen"), default="both",
                   help="TensorFlow's kernel library: both (Eigen, then oneDNN), auto (--reward_onednn auto's "
                        "choice here), or one")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from drlhp.processes.cpu import choose_kernels

    auto = choose_kernels("auto")
    libraries = {"both": ["off", "on"], "auto": ["auto"], "onednn": ["on"], "eigen": ["off"]}[args.library]
    print(f"CPU: {cpu_model()}; predictor threads: {args.threads}; 16 pairs of 25-step clips per member per step; "
          f"--reward_onednn auto here: {auto.describe()}")
    print(f"{'configuration':44s} {'library':8s} {'step':>8s} {'pair-upd/s':>10s} {'GFLOP/s':>8s}   policy steps/s "
          f"allowed at 0.1 / 0.03 / 0.01 pair-updates per agent step")
    for name, (members, bn, dropout) in CONFIGS.items():
        for setting in libraries:
            res = subprocess.run([sys.executable, "-c", CHILD, str(args.threads), str(members), "1" if bn else "0",
                                  str(dropout), str(args.repeats), setting], capture_output=True, text=True, cwd=ROOT)
            if res.returncode != 0:
                raise SystemExit(res.stderr[-2000:])
            step_s = json.loads(res.stdout.strip().splitlines()[-1])["step_s"]
            per_member = 16 / step_s  # every member trains on its own 16 pairs each step
            gflops = per_member * members * GFLOP_PER_PAIR_UPDATE
            allowed = " / ".join(f"{per_member / r:,.0f}" for r in (0.1, 0.03, 0.01))
            library = choose_kernels(setting).library
            print(f"{name:44s} {library:8s} {1e3 * step_s:6.0f}ms {per_member:10.1f} {gflops:8.1f}   {allowed}",
                  flush=True)


if __name__ == "__main__":
    main()

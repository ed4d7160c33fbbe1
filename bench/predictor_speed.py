#!/usr/bin/env python
"""Reward predictor training steps per second, this tree against another commit, in one run.

    python bench/predictor_speed.py [--compare REV] [--n_prefs 4000] [--seconds 30] [--rounds 2]

Both versions train on the same preferences: MovingDot clips of random play (make run's clips: 5
steps, 84x84x4), labelled by the oracle, with make run's predictor (1 member, batch 16, no batch norm,
no dropout, 1 TensorFlow thread). Each measurement is its own process running one version's PrefDB
and RewardTrainer (REV is checked out into a temporary git worktree); versions alternate, one at a
time, ``--rounds`` times, and the best round of each is compared. Prints the CPU model beside the figures.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from drlhp.processes.cpu import cpu_model  # noqa: E402  (feed_rate, pretrain_speed and scaling take it from here)

# The start of every measured process, with one version's tree first on sys.path: TensorFlow set up
# as that version's predictor process does it (newer ones choose Eigen's kernels), the clips of
# sys.argv[1] as segments, and the oracle's preference on a pair.
CHILD_SETUP = r"""
import json, statistics, sys, tempfile, threading, time
from pathlib import Path
import numpy as np
from drlhp.config.reward import RewardConfig
from drlhp.processes.messages import Preference, Segment
from drlhp.reward.pref_db import PrefDB
from drlhp.reward.trainer import RewardTrainer
from drlhp.processes.tf_setup import configure_tensorflow

try:
    configure_tensorflow(1, 1, seed=0, onednn=RewardConfig.onednn)
except (TypeError, AttributeError):
    configure_tensorflow(1, 1, seed=0)
with np.load(sys.argv[1]) as d:
    obs, rewards = d["obs"], d["rewards"]
segs = [Segment(obs[i], obs[i, ..., -1].copy(), rewards[i], "MovingDot-v0", i % 16, i) for i in range(len(obs))]

def oracle(a, b):
    ra, rb = a.true_return, b.true_return
    return Preference(a, b, (1.0, 0.0) if ra > rb else (0.0, 1.0) if rb > ra else (0.5, 0.5))
"""

CHILD = r"""
n_prefs, seconds = int(sys.argv[2]), float(sys.argv[3])
db = PrefDB(max_prefs=n_prefs, seed=0)
t0 = time.perf_counter()
for k in range(n_prefs):
    db.add(oracle(segs[2 * k], segs[2 * k + 1]))
add_s = time.perf_counter() - t0
cfg = RewardConfig(n_members=1, batch_size=16, lr=1e-3, dropout=0.0, batchnorm=False)
trainer = RewardTrainer(obs.shape[2:], cfg, db, threading.Lock(), seed=0)
for _ in range(5):
    trainer.train_step()
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < seconds:
    trainer.train_step()
    n += 1
print(json.dumps({"steps_per_s": n / (time.perf_counter() - t0), "add_ms": 1e3 * add_s / n_prefs}))
"""


@contextlib.contextmanager
def old_worktree(rev: str):
    """(short commit, a temporary git worktree of it, a temporary folder beside it); removed after."""
    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), short], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            yield short, tree, Path(tmp)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)


def run_child(tree: Path, body: str, *args) -> dict:
    """CHILD_SETUP + body in a process of its own on ``tree``'s code; the JSON its last line prints."""
    out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tree)!r})\n" + CHILD_SETUP
                          + body, *map(str, args)], capture_output=True, text=True, cwd=tree)
    if out.returncode != 0:
        raise SystemExit(f"measurement in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def moving_dot_clips(n: int, length: int, seed: int = 0) -> dict:
    """n clips of random play on MovingDot-v0 (the registered env, 4-frame stack), cut every `length` steps."""
    sys.path.insert(0, str(ROOT))
    import gymnasium as gym

    import envs  # noqa: F401  (registers MovingDot-v0)

    env = gym.make("MovingDot-v0")
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    clip_obs, clip_rew, o, r = [], [], [], []
    while len(clip_obs) < n:
        o.append(obs)
        obs, rew, term, trunc, _ = env.step(int(rng.integers(env.action_space.n)))
        r.append(rew)
        if term or trunc:
            obs, _ = env.reset()
        if len(o) == length:
            clip_obs.append(np.stack(o))
            clip_rew.append(np.array(r, np.float32))
            o, r = [], []
    return {"obs": np.stack(clip_obs), "rewards": np.stack(clip_rew)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--compare", default="HEAD", help="the commit to compare this working tree with")
    p.add_argument("--n_prefs", type=int, default=4000, help="preferences in the database (make run: 4,000)")
    p.add_argument("--segment_length", type=int, default=5)
    p.add_argument("--seconds", type=float, default=30.0, help="timed training per measurement")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    with old_worktree(args.compare) as (rev, old_tree, tmp):
        clips = tmp / "clips.npz"
        np.savez(clips, **moving_dot_clips(2 * args.n_prefs, args.segment_length))
        results: dict[str, list[dict]] = {f"old ({rev})": [], "new (working tree)": []}
        for r in range(args.rounds):
            for name, tree in ((f"old ({rev})", old_tree), ("new (working tree)", ROOT)):
                t0 = time.time()
                res = run_child(tree, CHILD, clips, args.n_prefs, args.seconds)
                results[name].append(res)
                print(f"round {r + 1} {name}: {res['steps_per_s']:.1f} predictor steps/s, "
                      f"add {res['add_ms']:.2f} ms per preference ({time.time() - t0:.0f} s)", flush=True)
    best = {k: max(x["steps_per_s"] for x in v) for k, v in results.items()}
    old, new = best.values()
    print(f"\nCPU: {cpu_model()}")
    print(f"predictor steps/s on {args.n_prefs:,} preferences of {args.segment_length}-step MovingDot clips "
          f"(best of {args.rounds}): old ({rev}) {old:.1f}, new {new:.1f}: {new / old:.1f}x")


if __name__ == "__main__":
    main()

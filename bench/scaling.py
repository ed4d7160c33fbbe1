#!/usr/bin/env python
"""What a run's costs do as it grows, this tree against another commit, in one run.

    python bench/scaling.py [--compare REV] [--sizes 500 3000 10000] [--members 1 3] [--n_envs 8 16 32]
                            [--png docs/scaling.png]

For each code version (REV is checked out into a temporary git worktree; each measurement is its own
process, one at a time), on MovingDot clips of random play (make run's 5-step clips):
  save      a database save after 20 new preferences (--prefs_save_interval), median of 5, at each size
  step      one predictor training step (batch 16, no batch norm, no dropout, 1 TensorFlow thread) at
            each size with 1 member, and at the largest size with each --members
  memory    the database's memory at each size (this tree: decoded observations + compressed frames)
and, for this tree only, agent steps per second of A2C on MovingDot (original rewards, one process)
against --n_envs. Prints every figure with the CPU model and draws them into --png.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from predictor_speed import ROOT, cpu_model, moving_dot_clips, old_worktree, run_child

CHILD = r"""
sizes, members, seconds = json.loads(sys.argv[2]), json.loads(sys.argv[3]), float(sys.argv[4])
db = PrefDB(max_prefs=max(sizes) + 1000, seed=0)
k = 0

def add(n):
    global k
    for _ in range(n):
        db.add(oracle(segs[(2 * k) % len(segs)], segs[(2 * k + 1) % len(segs)]))
        k += 1

def steps_per_s(n_members):
    cfg = RewardConfig(n_members=n_members, batch_size=16, lr=1e-3, dropout=0.0, batchnorm=False)
    trainer = RewardTrainer(obs.shape[2:], cfg, db, threading.Lock(), seed=0)
    for _ in range(3):
        trainer.train_step()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        trainer.train_step()
        n += 1
    return (time.perf_counter() - t0) / n

out = {"save_s": {}, "step_s": {}, "memory_mb": {}, "members_step_s": {}}
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "prefs" / "prefs.npz"
    for size in sizes:
        add(size - len(db))
        db.save(path)  # what a run has saved so far
        times = []
        for _ in range(5):
            add(20)
            t0 = time.perf_counter()
            db.save(path)
            times.append(time.perf_counter() - t0)
        out["save_s"][size] = statistics.median(times)
        out["step_s"][size] = steps_per_s(1)
        mem = getattr(db, "nbytes", None)
        out["memory_mb"][size] = (mem if mem is not None else db.nbytes_compressed) / 2**20
        print(f"  {size}: save {1e3 * out['save_s'][size]:.1f} ms, step {1e3 * out['step_s'][size]:.0f} ms",
              file=sys.stderr, flush=True)
    for m in members:
        out["members_step_s"][m] = steps_per_s(m)
print(json.dumps(out))
"""


def a2c_steps_per_s(n_envs: int, steps: int) -> float:
    """Agent steps/s of A2C with original rewards on MovingDot (run.py, one process), from its summary."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(ROOT / "run.py"), "train_policy_with_original_rewards", "--env",
                        "MovingDot-v0", "--n_envs", str(n_envs), "--million_timesteps", str(steps / 1e6),
                        "--run_dir", tmp, "--tf_intra_threads", "1", "--log_interval", "2"],
                       check=True, capture_output=True)
        rows = (Path(tmp) / "progress.csv").read_text().splitlines()
        header = rows[0].split(",")
        col = header.index("system/agent_steps_per_s")
        values = [float(r.split(",")[col]) for r in rows[2:] if r.split(",")[col]]  # the first is warm-up
        return float(np.median(values)) if values else float("nan")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--compare", default="HEAD")
    p.add_argument("--sizes", type=int, nargs="+", default=[500, 3000, 10000])
    p.add_argument("--members", type=int, nargs="+", default=[1, 3])
    p.add_argument("--n_envs", type=int, nargs="+", default=[8, 16, 32])
    p.add_argument("--seconds", type=float, default=10.0, help="timed predictor training per point")
    p.add_argument("--agent_steps", type=int, default=20000, help="A2C agent steps per --n_envs point")
    p.add_argument("--png", default=None)
    args = p.parse_args()
    cpu = cpu_model()
    results = {}
    with old_worktree(args.compare) as (rev, old_tree, tmp):
        clips = tmp / "clips.npz"
        np.savez(clips, **moving_dot_clips(2 * (max(args.sizes) + 200), 5))
        for name, tree in ((f"old ({rev})", old_tree), ("new", ROOT)):
            t0 = time.time()
            print(f"{name}:", flush=True)
            results[name] = run_child(tree, CHILD, clips, json.dumps(args.sizes), json.dumps(args.members),
                                      args.seconds)
            print(f"  ({time.time() - t0:.0f} s)", flush=True)
    sps = {n: a2c_steps_per_s(n, args.agent_steps) for n in args.n_envs}

    print(f"\nCPU: {cpu}")
    print(f"{'preferences':>12} | " + " | ".join(f"{k:>28}" for k in results))
    print(f"{'':>12} | " + " | ".join(f"{'save ms':>8} {'step ms':>8} {'RAM MB':>9}" for _ in results))
    for size in args.sizes:
        s = str(size)
        print(f"{size:>12,} | " + " | ".join(
            f"{1e3 * r['save_s'][s]:8.1f} {1e3 * r['step_s'][s]:8.0f} {r['memory_mb'][s]:9.1f}"
            for r in results.values()))
    for name, r in results.items():
        lo, hi = str(min(args.sizes)), str(max(args.sizes))
        print(f"{name}: save at {max(args.sizes):,} / at {min(args.sizes):,} = "
              f"{r['save_s'][hi] / r['save_s'][lo]:.2f}x; "
              f"step ms by members " + ", ".join(f"{m}: {1e3 * v:.0f}" for m, v in r["members_step_s"].items()))
    print("A2C on MovingDot (original rewards, 1 TF thread), agent steps/s by n_envs: "
          + ", ".join(f"{n}: {v:.0f}" for n, v in sps.items()))
    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 4, figsize=(17, 3.8))
        for name, r in results.items():
            ax[0].plot(args.sizes, [1e3 * r["save_s"][str(s)] for s in args.sizes], "o-", label=name)
            ax[1].plot(args.sizes, [1e3 * r["step_s"][str(s)] for s in args.sizes], "o-", label=name)
            ax[2].plot(list(map(int, r["members_step_s"])), [1e3 * v for v in r["members_step_s"].values()],
                       "o-", label=name)
        ax[3].plot(list(sps), list(sps.values()), "o-", label="new")
        for a, title, xl in ((ax[0], "database save (ms)", "preferences"),
                             (ax[1], "predictor step (ms)", "preferences"),
                             (ax[2], "predictor step (ms)", "ensemble members"),
                             (ax[3], "A2C agent steps/s", "n_envs")):
            a.set_title(title)
            a.set_xlabel(xl)
            a.grid(alpha=0.3)
            a.legend()
        fig.suptitle(f"bench/scaling.py on {cpu}, old = {rev}")
        fig.tight_layout()
        fig.savefig(args.png, dpi=80)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()

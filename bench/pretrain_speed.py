#!/usr/bin/env python
"""How fast the reward predictor pretrains, and where the time goes: make run's predictor (MovingDot's
preset) on a database of random 5-step clips of sliding 84x84x4 frame stacks, pretrained exactly as the
pipeline does it (RewardTrainer.pretrain: training steps, an evaluation every eval_interval steps), one
TensorFlow thread, the kernel library --reward_onednn auto picks here.

    python bench/pretrain_speed.py [--steps 250] [--prefs 4000] [--compare]

For each variant (each in its own process, one after the other; nothing else should run meanwhile):
pretraining steps per second, and the shares of its time in the training step's network, in gathering the
training batches' frames, and in evaluations (their gathering and their network apart). Without --compare:
make run's flags as they are today. --compare runs, in one run, each change since session 10 added in turn:
  before    the frame-stack gather before session 11 (gather (..., K, H, W), then move the K axis last),
            float32, an evaluation every 25 steps
  gather    today's gather (one stack position at a time into place), float32, every 25 steps
  eval50    and an evaluation every 50 steps (make run's preset since session 12), float32
  today     make run's flags as they are: and --reward_bfloat16 auto (bfloat16 where the CPU has
            AVX512_BF16 or AMX and the predictor runs oneDNN: the row says which it chose)
make run's pretraining (2,358 steps) takes 2,358 / (steps/s) seconds plus TensorFlow's start.
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

CHILD = r"""
import json, sys, threading, time
import numpy as np
from drlhp.processes.tf_setup import configure_tensorflow
steps, n_prefs, variant = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
configure_tensorflow(1, 1, seed=0, onednn="auto")
from drlhp.config.cli import build_parser, config_from_args
from drlhp.config.presets import with_preset
from drlhp.reward import pref_db
from drlhp.reward.trainer import RewardTrainer
from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment

EVERY_25 = ["--reward_bfloat16", "off", "--reward_eval_interval", "25", "--reward_pretrain_patience", "40"]
FLAGS = {"before": EVERY_25, "gather": EVERY_25, "eval50": ["--reward_bfloat16", "off"], "today": []}
if variant == "before":  # the gather until session 11
    def gather(self, rows):
        out = self.data[rows]
        return np.ascontiguousarray(np.moveaxis(out, -3, -1)) if self.stacked else out
    pref_db._RowStore.gather = gather

argv, _, _ = with_preset(["--env", "MovingDot-v0", "--synthetic_prefs"] + FLAGS[variant])
cfg = config_from_args(build_parser().parse_args(argv))
T = cfg.prefs.segment_length
rng = np.random.default_rng(0)
db = pref_db.PrefDB(max_prefs=cfg.prefs.max_prefs, seed=0)
def clip(i):
    frames = rng.integers(0, 256, (T + 3, 84, 84), dtype=np.uint8)
    obs = np.stack([np.moveaxis(frames[t:t + 4], 0, -1) for t in range(T)])
    return Segment(obs, frames[3:].copy(), np.zeros(T, np.float32), "MovingDot-v0", i % 16, i)
for i in range(n_prefs):
    db.add(Preference(clip(2 * i), clip(2 * i + 1), MU_LEFT if rng.random() < 0.5 else MU_RIGHT))
trainer = RewardTrainer((84, 84, 4), cfg.reward, db, threading.Lock(), seed=0)
spent = {"train network": 0.0, "train gather": 0.0, "eval network": 0.0, "eval gather": 0.0}
phase = ["train"]
def timed(fn, key):
    def wrapper(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            spent[key.replace("*", phase[0])] += time.perf_counter() - t
    return wrapper
evaluate = trainer.evaluate
def evaluate_phase(*a, **k):
    phase[0] = "eval"
    try:
        return evaluate(*a, **k)
    finally:
        phase[0] = "train"
trainer.evaluate = evaluate_phase
db.batches = timed(db.batches, "* gather")
trainer.ensemble.train_step = timed(trainer.ensemble.train_step, "train network")
trainer.ensemble.evaluate_pairs = timed(trainer.ensemble.evaluate_pairs, "eval network")
trainer.train_step(); trainer.evaluate()  # traced outside the clock
spent = dict.fromkeys(spent, 0.0)
epochs = steps * cfg.reward.batch_size / db.n_train
t0 = time.perf_counter()
trainer.pretrain(epochs, log=lambda *a: None)
wall = time.perf_counter() - t0
print(json.dumps({"steps": trainer.steps - 1, "wall_s": wall, "eval_interval": cfg.reward.eval_interval,
                  "precision": trainer.ensemble.precision.describe(), **spent}))
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=250, help="pretraining steps per variant")
    p.add_argument("--prefs", type=int, default=4000, help="preferences in the database (make run: 4,000)")
    p.add_argument("--compare", action="store_true",
                   help="before, gather, eval50, today: each change since session 10 in turn (see above)")
    args = p.parse_args()
    print(f"CPU: {cpu_model()}; make run's predictor (MovingDot preset), 1 thread, {args.prefs} preferences, "
          f"{args.steps} pretraining steps per variant")
    print(f"{'variant':<8} {'steps/s':>8} {'ms/step':>8} {'train net':>10} {'train gather':>13} "
          f"{'eval net':>9} {'eval gather':>12} {'other':>6}")
    for variant in (["before", "gather", "eval50"] if args.compare else []) + ["today"]:
        out = subprocess.run([sys.executable, "-c", CHILD, str(args.steps), str(args.prefs), variant],
                             capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT),
                                                                            "TF_CPP_MIN_LOG_LEVEL": "2",
                                                                            "PATH": "/usr/bin:/bin"})
        if out.returncode != 0:
            sys.exit(f"{variant}: failed:\n{out.stderr[-3000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        wall = r["wall_s"]
        keys = ("train network", "train gather", "eval network", "eval gather")
        other = wall - sum(r[k] for k in keys)
        shares = " ".join(f"{100 * r[k] / wall:>{w}.0f}%" for k, w in zip(keys, (9, 12, 8, 11)))
        print(f"{variant:<8} {r['steps'] / wall:>8.1f} {1000 * wall / r['steps']:>8.1f} {shares} "
              f"{100 * other / wall:>5.0f}%   every {r['eval_interval']} steps, {r['precision']}")


if __name__ == "__main__":
    main()

"""Issue 60's behaviour check: does a restructuring of the policy's code leave its learning untouched?

``train_policy_with_original_rewards`` runs for the same agent steps on the same seed from two checkouts (each
commit checked out in a temporary ``git worktree add --detach``, run with this interpreter), on Pong with A2C, on
Pong with PPO and on Hopper-v5 (PPO, fixed-length episodes), alternately old then new. Each run's final checkpoint
holds its last 100 episodes' returns and lengths and the policy's weights; the two runs of a case are the same where
the episodes, their returns and lengths and every weight are identical (the math untouched, and the run
deterministic: ``--repeat`` runs the old commit twice more, to tell a difference of code from one of threads).

    python experiments/same_returns.py --old 054ec5e --new HEAD [--million_timesteps 0.1] [--seed 0]
        [--cases pong-a2c,pong-ppo,hopper] [--repeat] [--out runs/same_returns]

Each run is a subprocess at the priority this script has (``nice -n 19 python experiments/same_returns.py``: the
machine's other work first). The table: per case, the episodes, the mean of the last 100 returns, whether the
returns, the lengths and the weights are the same, and each run's wall time.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CASES = {  # name -> run.py's flags besides the mode, the seed, the budget and the run directory
    "pong-a2c": ["--env", "PongNoFrameskip-v4", "--algo", "a2c"],
    "pong-ppo": ["--env", "PongNoFrameskip-v4", "--algo", "ppo"],
    "hopper": ["--env", "Hopper-v5"],
}


def worktree(rev: str, where: Path) -> Path:
    """``rev`` checked out (detached) at ``where``."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(where), rev], check=True,
                   capture_output=True)
    return where


def run(checkout: Path, case: str, seed: int, million: float, run_dir: Path) -> float:
    """One run of ``case`` from ``checkout``; its wall time in seconds (RuntimeError where it fails)."""
    cmd = [sys.executable, "run.py", "train_policy_with_original_rewards", *CASES[case], "--seed", str(seed),
           "--million_timesteps", str(million), "--run_dir", str(run_dir)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(checkout)})
    if proc.returncode != 0:
        raise RuntimeError(f"{case} from {checkout} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n"
                           f"{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def final_checkpoint(run_dir: Path) -> tuple[dict, dict]:
    """(arrays, meta) of the run's newest policy checkpoint, read with numpy and json only."""
    found = sorted((run_dir / "checkpoints").glob("policy-*.npz"), key=lambda p: int(p.stem.split("-")[1]))
    with np.load(found[-1], allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
        meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
    return arrays, meta


def compare(a: Path, b: Path) -> dict:
    """What two runs share: their episodes, returns, lengths and weights."""
    (wa, ma), (wb, mb) = final_checkpoint(a), final_checkpoint(b)
    weights = sorted(k for k in wa if k.startswith("weight_"))
    return {"timesteps": (ma.get("timesteps"), mb.get("timesteps")),
            "episodes": (ma.get("episodes"), mb.get("episodes")),
            "return_last100": tuple(float(np.mean(m["recent_returns"])) if m.get("recent_returns") else None
                                    for m in (ma, mb)),
            "same_returns": ma.get("recent_returns") == mb.get("recent_returns"),
            "same_lengths": ma.get("recent_lengths") == mb.get("recent_lengths"),
            "same_weights": weights == sorted(k for k in wb if k.startswith("weight_"))
            and all(np.array_equal(wa[k], wb[k]) for k in weights),
            "max_weight_diff": max((float(np.max(np.abs(wa[k].astype(np.float64) - wb[k]))) for k in weights
                                    if wa[k].shape == wb[k].shape), default=None)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", required=True, help="the commit before the change")
    p.add_argument("--new", default="HEAD", help="the commit after it")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--million_timesteps", type=float, default=0.1)
    p.add_argument("--repeat", action="store_true", help="also run the old commit a second time (determinism)")
    p.add_argument("--out", default=None, help="where the runs go (default: a temporary directory)")
    args = p.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="same_returns-")).resolve()  # the runs start in the worktrees
    out.mkdir(parents=True, exist_ok=True)
    trees = Path(tempfile.mkdtemp(prefix="same_returns-trees-"))
    sides = {"old": args.old, "new": args.new}
    commits = {side: subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                                    capture_output=True, text=True).stdout.strip() for side, rev in sides.items()}
    print(f"old {commits['old']}, new {commits['new']}, seed {args.seed}, {args.million_timesteps:g}M agent steps "
          f"-> {out}", flush=True)
    checkouts = {side: worktree(rev, trees / side) for side, rev in sides.items()}
    rows = []
    try:
        for case in args.cases.split(","):
            runs = ["old", "new"] + (["old2"] if args.repeat else [])
            dirs, walls = {}, {}
            for name in runs:
                dirs[name] = out / f"{case}-{name}"
                walls[name] = run(checkouts[name.rstrip("2")], case, args.seed, args.million_timesteps, dirs[name])
                print(f"  {case} {name}: {walls[name]:.0f} s", flush=True)
            row = {"case": case, **compare(dirs["old"], dirs["new"]), "wall_s": walls}
            if args.repeat:
                again = compare(dirs["old"], dirs["old2"])
                row["old_twice"] = {k: again[k] for k in ("same_returns", "same_lengths", "same_weights",
                                                          "max_weight_diff")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        for where in checkouts.values():
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], capture_output=True)
    print("\n| case | episodes old/new | return (last 100) old/new | same returns | same lengths | same weights | "
          "wall s old/new |\n|---|---|---|---|---|---|---|")
    for r in rows:
        ret = "/".join("-" if x is None else f"{x:.3f}" for x in r["return_last100"])
        print(f"| {r['case']} | {r['episodes'][0]}/{r['episodes'][1]} | {ret} | {r['same_returns']} | "
              f"{r['same_lengths']} | {r['same_weights']} | {r['wall_s']['old']:.0f}/{r['wall_s']['new']:.0f} |")
    (out / "same_returns.json").write_text(json.dumps({"commits": commits, "rows": rows}, indent=1))
    return 0 if all(r["same_returns"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

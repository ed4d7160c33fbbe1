#!/usr/bin/env python
"""What a Pong run's reward predictor pays in each phase of play, over its own database's clips.

    python bench/pong_reward_by_phase.py RUN_DIR [--predictor PATH]

Runs the predictor (RUN_DIR's final weights, or --predictor: a checkpoint file or run directory) on
every step of every clip in RUN_DIR's preference database, exactly as the policy gets it (the
ensemble's members normalized with their published statistics, then averaged), and prints the mean
reward per phase of play, found from the frames the predictor sees (score blanked):
    no ball          no ball between the paddles (the pause after a point, or the ball at a paddle)
    ball appears     a ball in the newest frame, none in the one before (a serve)
    to agent / to opponent, x A-B
                     the ball's direction (the agent's paddle is on the right) and its column
and the mean reward at the steps where the true reward is -1 (a point conceded) and +1 (scored).
A predictor that teaches Pong pays more for rallies than for pauses, and does not pay less right
after the agent returns the ball ("to opponent" near the agent's side) than after it misses.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# 84x84 grayscale Pong: background 87, both paddles 147-148 (columns 8-11 and 72-75), walls and
# score above row 14 and below row 77, the ball 236 (lower where it straddles pixels)
PLAY_ROWS, PLAY_COLS = slice(14, 77), slice(12, 72)
PADDLE_VALUES = (147, 148)


def ball_column(frame: np.ndarray) -> float | None:
    """The ball's mean column in one 84x84 frame, or None when no ball is between the paddles."""
    play = frame[PLAY_ROWS, PLAY_COLS].astype(np.int32)
    mask = (play >= 100) & ~np.isin(play, PADDLE_VALUES)
    if not mask.any():
        return None
    return float(np.nonzero(mask)[1].mean()) + PLAY_COLS.start


def phase(obs: np.ndarray) -> str:
    """The phase of play of one stacked observation (84, 84, k), from its last two frames."""
    now, before = ball_column(obs[:, :, -1]), ball_column(obs[:, :, -2])
    if now is None:
        return "no ball"
    if before is None:
        return "ball appears"
    direction = "to agent" if now > before else ("to opponent" if now < before else "ball still")
    lo = int(now // 20) * 20
    return f"{direction}, x {lo}-{lo + 19}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--predictor", default=None, help="a predictor checkpoint (default: RUN_DIR's own)")
    args = ap.parse_args(argv)
    run = Path(args.run_dir)

    from drlhp.config import RewardConfig
    from drlhp.pref_db import PrefDB
    from drlhp.reward_source import PredictedReward
    from drlhp.reward_trainer import PREFS_FILE, PREDICTOR_FILE, load_predictor_weights

    saved = json.loads((run / "config.json").read_text())["reward"]
    cfg = RewardConfig(**{k: v for k, v in saved.items() if k in RewardConfig.__dataclass_fields__})
    weights, meta = load_predictor_weights(args.predictor or run / PREDICTOR_FILE)
    db = PrefDB.load(run / PREFS_FILE, max_prefs=10**9)
    ids = db.segment_ids()
    source = PredictedReward(db.segment_obs(ids[0]).shape[1:], cfg, seed=0, weights=weights)
    by_phase = collections.defaultdict(list)
    rewards, trues = [], []
    for sid in ids:
        obs, true = db.segment_obs(sid), db.segment_rewards(sid)
        r = source.ensemble.reward(obs)
        for t in range(len(obs)):
            by_phase[phase(obs[t])].append(r[t])
        rewards.append(r)
        trues.append(true)
    r, true = np.concatenate(rewards), np.concatenate(trues)
    print(f"predictor {meta['path']} (version {meta.get('version')}, {meta.get('steps')} steps) on "
          f"{db.n_segments} clips, {len(r):,} steps: mean {r.mean():+.4f}, std {r.std():.4f}")
    for name in sorted(by_phase):
        v = np.asarray(by_phase[name])
        print(f"  {name:26s} {len(v):7,d} steps  mean {v.mean():+.4f}")
    for label, where in (("conceded (true -1)", true < 0), ("scored (true +1)", true > 0)):
        print(f"  {label:26s} {int(where.sum()):7,d} steps  mean "
              + (f"{r[where].mean():+.4f}" if where.any() else "-"))


if __name__ == "__main__":
    main()

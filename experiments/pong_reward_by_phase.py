#!/usr/bin/env python
"""What a Pong run's reward predictor pays in each phase of play and around each event, over its
own database's clips.

    python experiments/pong_reward_by_phase.py RUN_DIR [--predictor PATH] [--window 3]

Runs the predictor (RUN_DIR's final weights, or --predictor: a checkpoint file or run directory) on
every step of every clip in RUN_DIR's preference database, exactly as the policy gets it (the
ensemble's members normalized with their published statistics, then averaged), and prints, with the
number of steps or events behind each figure:
  phases   no ball (the pause after a point), ball appears (a serve), ball to agent / to opponent by
           column: found over the whole field (a ball at a paddle counts), from the frames the
           predictor sees (score blanked)
  events   return: the --window steps from the step where the ball turns back from the agent's
           paddle; miss: the --window steps up to a point conceded (true reward -1); point won
           (true +1) and point lost (-1): the step itself
and the two comparisons that decide whether the reward teaches Pong: return minus miss, and point
won minus point lost. Both must be clearly positive (in units of the reward's standard deviation).
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout

# 84x84 grayscale Pong: background 87, both paddles 147-148 in their middle columns (8-11 and 72-75,
# their edge columns anti-aliased to 93-124 by the resize), walls and score above row 14 and below row 77,
# the ball 236 (lower where it straddles pixels), 1-2 rows tall
PLAY_ROWS = slice(14, 77)
PADDLE_VALUES = (147, 148)
PADDLE_MIN_ROWS = 4  # a vertical run of bright pixels at least this tall is a paddle, not the ball
AGENT_SIDE = 60  # a ball turning back at column >= 60 was returned by the agent (paddle at 72-75)
MAX_TURN_MOVE = 5  # columns per step around a return: the ball moves 1-4; a jump is a serve or noise


def ball_mask(frame: np.ndarray) -> np.ndarray:
    """Bright pixels of the play area that are not part of a paddle (a vertical run of at least
    PADDLE_MIN_ROWS bright pixels in one column, anti-aliased edges included)."""
    bright = frame[PLAY_ROWS] >= 100
    k = PADDLE_MIN_ROWS
    rows = bright.shape[0]
    full = np.ones((rows - k + 1, bright.shape[1]), bool)
    for i in range(k):  # windows of k rows that are all bright
        full &= bright[i:rows - k + 1 + i]
    in_run = np.zeros_like(bright)
    for i in range(k):  # every pixel such a window covers
        in_run[i:rows - k + 1 + i] |= full
    return bright & ~in_run


def ball_column(frame: np.ndarray) -> float | None:
    """The ball's mean column in one 84x84 frame (the whole field, paddles excluded), or None."""
    mask = ball_mask(frame)
    if not mask.any():
        return None
    return float(np.nonzero(mask)[1].mean())


def direction(obs: np.ndarray) -> str | None:
    """'to agent', 'to opponent' or 'still' from the last two frames of a stacked observation, or None."""
    now, before = ball_column(obs[:, :, -1]), ball_column(obs[:, :, -2])
    if now is None or before is None:
        return None
    return "to agent" if now > before else ("to opponent" if now < before else "still")


def phase(obs: np.ndarray) -> str:
    """The phase of play of one stacked observation (84, 84, k), from its last two frames."""
    now, before = ball_column(obs[:, :, -1]), ball_column(obs[:, :, -2])
    if now is None:
        return "no ball"
    if before is None:
        return "ball appears"
    lo = int(now // 20) * 20
    return f"{direction(obs)}, x {lo}-{lo + 19}"


def returns(obs: np.ndarray) -> list[int]:
    """Steps of a clip (T, 84, 84, k) at which the ball turns from the agent back to the opponent on
    the agent's side of the field: it came closer for a step, then left for two, each move small (a
    serve after a point jumps; detection noise wiggles back and forth): the agent returned it."""
    cols = [ball_column(o[:, :, -1]) for o in obs]
    out = []
    for t in range(2, len(obs) - 1):  # approaching for two steps, leaving for two, moving smoothly
        c = cols[t - 2:t + 2]
        if any(x is None for x in c) or c[1] < AGENT_SIDE or (out and t - out[-1] < 5):
            continue
        moves = [c[i + 1] - c[i] for i in range(3)]
        if moves[0] > 0 and moves[1] < 0 and moves[2] < 0 and all(abs(m) <= MAX_TURN_MOVE for m in moves):
            out.append(t)
    return out


def event_windows(obs: np.ndarray, true: np.ndarray, window: int) -> dict[str, list[np.ndarray]]:
    """Index arrays per event into one clip: return (window steps from the turn), miss (window steps up
    to a point conceded), point won / point lost (the step)."""
    out = {"return": [np.arange(t, min(t + window, len(obs))) for t in returns(obs)],
           "miss": [np.arange(max(0, t - window + 1), t + 1) for t in np.flatnonzero(true < 0)],
           "point won": [np.array([t]) for t in np.flatnonzero(true > 0)],
           "point lost": [np.array([t]) for t in np.flatnonzero(true < 0)]}
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--predictor", default=None, help="a predictor checkpoint (default: RUN_DIR's own)")
    ap.add_argument("--window", type=int, default=3, help="steps after a return / before a miss")
    args = ap.parse_args(argv)
    run = Path(args.run_dir)

    from drlhp.config.reward import RewardConfig
    from drlhp.policy.reward_source import PredictedReward
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.checkpoint import load_predictor_weights, saved_reward_config
    from drlhp.reward.pref_db import PrefDB

    cfg = saved_reward_config(run) or RewardConfig()
    weights, meta = load_predictor_weights(args.predictor or RunPaths(run).predictor)
    db = PrefDB.load(RunPaths(run).prefs, max_prefs=10**9)
    ids = db.segment_ids()
    source = PredictedReward(db.segment_obs(ids[0]).shape[1:], cfg, seed=0, weights=weights)
    by_phase = collections.defaultdict(list)
    by_event = collections.defaultdict(list)
    rewards = []
    for sid in ids:
        obs, true = db.segment_obs(sid), db.segment_rewards(sid)
        r = source.ensemble.reward(obs)
        for t in range(len(obs)):
            by_phase[phase(obs[t])].append(r[t])
        for name, windows in event_windows(obs, true, args.window).items():
            by_event[name].extend(float(r[w].mean()) for w in windows)
        rewards.append(r)
    r = np.concatenate(rewards)
    std = r.std() or 1.0
    print(f"predictor {meta['path']} (version {meta.get('version')}, {meta.get('steps')} steps) on "
          f"{db.n_segments} clips, {len(r):,} steps: mean {r.mean():+.4f}, std {r.std():.4f}")
    for name in sorted(by_phase):
        v = np.asarray(by_phase[name])
        print(f"  {name:26s} {len(v):7,d} steps   mean {v.mean():+.4f}")
    for name in ("return", "miss", "point won", "point lost"):
        v = np.asarray(by_event[name])
        print(f"  {name:26s} {len(v):7,d} events  mean " + (f"{v.mean():+.4f}" if len(v) else "-"))
    for a, b in (("return", "miss"), ("point won", "point lost")):
        if by_event[a] and by_event[b]:
            d = np.mean(by_event[a]) - np.mean(by_event[b])
            print(f"  {a} - {b}: {d:+.4f} ({d / std:+.2f} std; {len(by_event[a])} and {len(by_event[b])} events)")
        else:
            print(f"  {a} - {b}: - (no {a if not by_event[a] else b} event in the database)")


if __name__ == "__main__":
    main()

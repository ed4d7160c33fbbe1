#!/usr/bin/env python
"""Issue 12's cheap experiments E1 and E2: does a Pong reward predictor rank behaviours of known quality?

    python experiments/pong_reward_ranks.py evaluate PREDICTOR [--policy NAME ...] [--steps 1000]
    python experiments/pong_reward_ranks.py collect OUT_DIR [--policy NAME ...] [--clips_per_policy 600]
                                                 [--pairs 3000]
    python run.py pretrain_reward_predictor --env PongNoFrameskip-v4 --load_prefs_dir OUT_DIR ...

Policies (``--policy``, repeatable): ``random`` (uniform over the 6 actions), ``track0``, ``track0.3``,
``track0.7`` (a scripted paddle that follows the ball's row, taking a uniformly random action with
probability 0, 0.3 or 0.7; a stronger player the less noise) and ``ckpt:DIR`` (a saved A2C policy,
e.g. from a true-reward run, sampling its actions). Default: random and the three trackers.

``evaluate`` (E1, and E2 once the predictor was trained on ``collect``'s clips) plays each policy on 16
envs for --steps agent steps each, and prints per policy, with the events behind each figure:
points won and lost per 1,000 steps; the mean predicted reward per step exactly as the policy would
get it (members normalized with their published statistics, then averaged); its mean after a return
(the --window steps from the turn of the ball on the agent's side), before a miss (the --window steps
up to a conceded point) and at a point won. A predictor that can teach Pong ranks the policies by
points (the rank correlation is printed), pays a return more than a miss, and a point won more than
any rally step.

``collect`` (E2's data) plays each policy for --clips_per_policy 25-step clips (16 envs, one clip per
env per 25 steps, after --skip steps so the clips start mid-game), pairs clips at random across the
whole mix, labels each pair with the synthetic oracle (larger sum of true reward; ties 0.5/0.5), and
saves a preference database in OUT_DIR/prefs/ that ``run.py pretrain_reward_predictor --load_prefs_dir
OUT_DIR`` trains on. The clips are what the predictor sees (score blanked) and the database is the
project's own format, so nothing here differs from the pipeline but the policies that played.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout
sys.path.insert(0, str(Path(__file__).resolve().parent))

from drlhp.processes.cpu import cpu_model  # noqa: E402
from pong_reward_by_phase import PADDLE_VALUES, PLAY_ROWS, ball_mask, event_windows  # noqa: E402

ENV_ID = "PongNoFrameskip-v4"
N_ENVS = 16
CLIP = 25
UP, DOWN, NOOP = 2, 3, 0  # Pong's minimal action set: NOOP, FIRE, RIGHT (up), LEFT (down), RIGHTFIRE, LEFTFIRE
AGENT_COLUMNS = slice(72, 76)
DEFAULT_POLICIES = ("random", "track0", "track0.3", "track0.7")


def paddle_and_ball_rows(frame: np.ndarray) -> tuple[float | None, float | None]:
    """The agent's paddle row and the ball's row in one 84x84 frame (None where not found)."""
    play = frame[PLAY_ROWS].astype(np.int32)
    paddle = np.isin(play[:, AGENT_COLUMNS], PADDLE_VALUES)
    ball = ball_mask(frame)
    p = float(np.nonzero(paddle)[0].mean()) if paddle.any() else None
    b = float(np.nonzero(ball)[0].mean()) if ball.any() else None
    return p, b


class Tracker:
    """Moves the paddle toward the ball's row; a random action with probability ``noise``."""

    def __init__(self, noise: float, n_actions: int, seed: int):
        self.noise, self.n_actions = noise, n_actions
        self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        actions = np.empty(len(obs), np.int64)
        for i, o in enumerate(obs):
            if self.rng.random() < self.noise:
                actions[i] = self.rng.integers(self.n_actions)
                continue
            paddle, ball = paddle_and_ball_rows(o[:, :, -1])
            target = ball if ball is not None else (PLAY_ROWS.stop - PLAY_ROWS.start) / 2
            if paddle is None or abs(target - paddle) < 2:
                actions[i] = NOOP
            else:
                actions[i] = UP if target < paddle else DOWN
        return actions


class RandomPolicy:
    def __init__(self, n_actions: int, seed: int):
        self.n_actions, self.rng = n_actions, np.random.default_rng(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self.rng.integers(self.n_actions, size=len(obs))


class CheckpointPolicy:
    """A saved A2C policy (drlhp.policy.checkpoint), sampling its actions."""

    def __init__(self, path: str, env, seed: int):
        from drlhp.config.a2c import A2CConfig
        from drlhp.policy.a2c.policy import A2CPolicy
        from drlhp.policy.checkpoint import load_policy_checkpoint

        arrays, meta = load_policy_checkpoint(path)
        self.policy = A2CPolicy(env.obs_shape, env.n_actions, A2CConfig(), seed=seed, obs_dtype=env.obs_dtype)
        self.policy.set_state(arrays)
        self.timesteps = meta.get("timesteps")

    def act(self, obs: np.ndarray) -> np.ndarray:
        return np.asarray(self.policy.act(obs)[0])


def make_policy(name: str, env, seed: int):
    if name == "random":
        return RandomPolicy(env.n_actions, seed)
    if name.startswith("track"):
        return Tracker(float(name[len("track"):]), env.n_actions, seed)
    if name.startswith("ckpt:"):
        return CheckpointPolicy(name[len("ckpt:"):], env, seed)
    raise SystemExit(f"pong_reward_ranks.py: unknown policy {name!r} (random, trackNOISE or ckpt:DIR)")


def play(name: str, n_steps: int, seed: int, chunk: int = CLIP, score_visible: bool = False):
    """Yield (obs (chunk, N, 84, 84, 4) as the predictor sees them, true rewards (chunk, N)) for
    ``n_steps`` agent steps of each of N_ENVS envs; obs[t] is the observation after action t."""
    from envs import make_vec_env

    env = make_vec_env(ENV_ID, N_ENVS, score_visible=score_visible)
    try:
        policy = make_policy(name, env, seed)
        obs = env.reset(seed=seed)
        for _ in range(n_steps // chunk):
            buf = np.empty((chunk, N_ENVS, *env.obs_shape), np.uint8)
            rew = np.empty((chunk, N_ENVS), np.float32)
            for t in range(chunk):
                step = env.step(policy.act(obs))
                obs = step.obs
                buf[t] = step.final_obs if step.final_obs is not None else step.obs
                rew[t] = step.true_reward
            env.predictor_view(buf.reshape(-1, *env.obs_shape), inplace=True)
            yield buf, rew
    finally:
        env.close()


def load_ensemble(path: str):
    from drlhp.config.reward import RewardConfig
    from drlhp.policy.reward_source import PredictedReward
    from drlhp.reward.checkpoint import load_predictor_weights, saved_reward_config

    weights, meta = load_predictor_weights(path)
    # the architecture the predictor was trained with (dropout, batch norm), where its run recorded it
    cfg = saved_reward_config(Path(meta["path"]).parent.parent) or RewardConfig(n_members=len(weights.weights))
    return PredictedReward((84, 84, 4), cfg, seed=0, weights=weights).ensemble, meta


def evaluate(args) -> None:
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(2, 1, seed=args.seed)
    ensemble, meta = load_ensemble(args.predictor)
    print(f"predictor {meta['path']} ({meta.get('steps')} training steps); {args.steps:,} steps x {N_ENVS} envs "
          f"per policy; CPU: {cpu_model()}", flush=True)
    header = (f"{'policy':>14} {'won/1k':>7} {'lost/1k':>7} {'reward/step':>11} {'return':>15} {'miss':>15} "
              f"{'point won':>15} {'return-miss':>11}")
    print(header)
    rows = []
    for name in args.policy:
        t0 = time.perf_counter()
        rewards, events = [], {"return": [], "miss": [], "point won": [], "point lost": []}
        won = lost = 0
        for obs, true in play(name, args.steps, args.seed, score_visible=args.score_visible):
            r = ensemble.reward(obs.reshape(-1, *obs.shape[2:])).reshape(true.shape)
            rewards.append(r)
            won, lost = won + int((true > 0).sum()), lost + int((true < 0).sum())
            for w in range(N_ENVS):
                for kind, windows in event_windows(obs[:, w], true[:, w], args.window).items():
                    events[kind].extend(float(r[idx, w].mean()) for idx in windows)
        r = np.concatenate(rewards)
        k = 1000 / (args.steps * N_ENVS)

        def cell(kind):
            v = events[kind]
            return f"{np.mean(v):+.4f} ({len(v):4d})" if v else f"{'-':>9} (   0)"

        diff = (np.mean(events["return"]) - np.mean(events["miss"])) if events["return"] and events["miss"] else None
        print(f"{name[-14:]:>14} {won * k:7.2f} {lost * k:7.2f} {r.mean():+11.4f} {cell('return'):>15} "
              f"{cell('miss'):>15} {cell('point won'):>15} {'-' if diff is None else f'{diff:+.4f}':>11}"
              f"   ({time.perf_counter() - t0:.0f} s)", flush=True)
        rows.append({"policy": name, "won_per_1k": won * k, "lost_per_1k": lost * k, "reward_mean": float(r.mean()),
                     "reward_std": float(r.std()), **{f"{kind}_mean": (float(np.mean(v)) if v else None)
                                                      for kind, v in events.items()},
                     **{f"{kind}_events": len(v) for kind, v in events.items()}})
    pooled = float(np.sqrt(np.mean([x["reward_std"] ** 2 for x in rows])))
    print(f"in units of the per-step standard deviation over all policies ({pooled:.4f}):")
    for x in rows:
        parts = [f"{x['policy']:>14}: mean {x['reward_mean'] / pooled:+.2f}"]
        for a, b in (("return", "miss"), ("point won", "point lost")):
            if x[f"{a}_mean"] is not None and x[f"{b}_mean"] is not None:
                parts.append(f"{a} - {b} {(x[f'{a}_mean'] - x[f'{b}_mean']) / pooled:+.2f}")
        if x["point won_mean"] is not None:
            parts.append(f"point won - policy mean {(x['point won_mean'] - x['reward_mean']) / pooled:+.2f}")
        print(", ".join(parts))
    if len(rows) > 2:
        quality = np.array([x["won_per_1k"] - x["lost_per_1k"] for x in rows])
        paid = np.array([x["reward_mean"] for x in rows])
        rho = np.corrcoef(np.argsort(np.argsort(quality)), np.argsort(np.argsort(paid)))[0, 1]
        print(f"rank correlation of mean reward with points won - lost: {rho:+.2f} over {len(rows)} policies")
    if args.json:
        Path(args.json).write_text(json.dumps({"predictor": str(meta["path"]), "pooled_std": pooled, "rows": rows},
                                              indent=1))


def collect(args) -> None:
    from drlhp.processes.messages import Preference, Segment
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.oracle import SyntheticOracle

    rng = np.random.default_rng(args.seed)
    clips = []
    per_env = -(-args.clips_per_policy // N_ENVS)
    for i, name in enumerate(args.policy):
        t0 = time.perf_counter()
        got = won = lost = 0
        n_steps = args.skip + per_env * CLIP
        for c, (obs, true) in enumerate(play(name, n_steps, args.seed + 1000 * i,
                                                        score_visible=args.score_visible)):
            if c * CLIP < args.skip:
                continue
            for w in range(N_ENVS):
                if got < args.clips_per_policy:
                    clips.append(Segment(obs[:, w].copy(), obs[:, w, :, :, -1].copy(), true[:, w].copy(),
                                         ENV_ID, w, c * CLIP).check())
                    got += 1
                    won, lost = won + int((true[:, w] > 0).sum()), lost + int((true[:, w] < 0).sum())
        print(f"{name}: {got} clips, {won} points won and {lost} lost in them ({time.perf_counter() - t0:.0f} s)",
              flush=True)
    order = rng.permutation(len(clips))  # the newest clips (normalization statistics) are a mix too
    clips = [clips[j] for j in order]
    db = PrefDB(max_prefs=args.pairs, seed=args.seed)
    oracle = SyntheticOracle()
    ties = 0
    while len(db) < args.pairs:
        a, b = rng.choice(len(clips), size=2, replace=False)
        mu = oracle.label(clips[a], clips[b])
        ties += mu[0] == mu[1]
        db.add(Preference(clips[a], clips[b], mu))
    out = RunPaths(args.out_dir).prefs
    out.parent.mkdir(parents=True, exist_ok=True)
    db.save(out)
    print(f"{len(db)} pairs of {len(clips)} clips ({ties} ties) -> {out}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="E1/E2: per policy, points and what the predictor pays")
    ev.add_argument("predictor", help="a predictor checkpoint file or run directory")
    ev.add_argument("--steps", type=int, default=1000, help="agent steps per env per policy")
    ev.add_argument("--window", type=int, default=3)
    ev.add_argument("--json", default=None, help="also write the table here")
    co = sub.add_parser("collect", help="E2's data: oracle-labelled pairs of clips from the mix of policies")
    co.add_argument("out_dir")
    co.add_argument("--clips_per_policy", type=int, default=600)
    co.add_argument("--pairs", type=int, default=3000)
    co.add_argument("--skip", type=int, default=200, help="agent steps per env before the first clip")
    for p in (ev, co):
        p.add_argument("--policy", action="append", default=None,
                       help="random, track<noise> (e.g. track0.3) or ckpt:<policy checkpoint dir>; repeatable")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--score_visible", action="store_true",
                       help="the predictor sees the score (run.py --score_visible); default: blanked, the paper")
    args = ap.parse_args(argv)
    args.policy = args.policy or list(DEFAULT_POLICIES)
    {"evaluate": evaluate, "collect": collect}[args.command](args)


if __name__ == "__main__":
    main()

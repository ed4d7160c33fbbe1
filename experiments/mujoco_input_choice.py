"""Offline test (no RL): is the oracle's reward, fall penalty included, easier to learn from preferences when the
predictor scores the observation each step LED TO (on a fall the fallen one, info["fall_observation"]) than the one
the action was taken in (drlhp's MuJoCo predictor today: x_t = (o_t, a_t))?

Plays fixed-length episodes (reset rule, penalty 100) of saved PPO checkpoints (stochastic) and a random policy;
cuts them into 188-step clips; labels random pairs of training clips by the oracle (sum of info["reward_task"]);
trains, on the SAME pairs and the same number of steps, one RewardEnsemble per input:
    before: (o_t, a_t)                     after: (o'_t, a_t), o'_t = fall_observation on a fall, else o_{t+1}
and scores held-out episodes (other seeds): per-policy predicted vs true return, clip-pair accuracy, the fall step in
the predictor's per-step standard deviations (ordinary steps: farther than 40 from a fall; trained policies), and
the correlation with the true reward on ordinary steps.

    PYTHONPATH=. python experiments/mujoco_input_choice.py --env Hopper-v5 --pairs 1400 --steps 3000
"""

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy, tanh_mlp
from drlhp.reward.model import RewardEnsemble
from envs.fixed_length import any_vector_env

CLIP = 188
p = argparse.ArgumentParser()
p.add_argument("--env", default="Hopper-v5")
p.add_argument("--root", default="/work/main/runs/mujoco/table")
p.add_argument("--train_eps", type=int, default=3)
p.add_argument("--test_eps", type=int, default=2)
p.add_argument("--pairs", type=int, default=1400)
p.add_argument("--steps", type=int, default=3000)
p.add_argument("--members", type=int, default=1)
p.add_argument("--l2", type=float, default=1e-4)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()
root = Path(args.root) / args.env
names = sorted(d.name for d in root.iterdir() if (d / "checkpoints").is_dir() and "penalty" not in d.name)


def make_env():
    return any_vector_env(args.env, 1, 100.0, fall_rule="reset").envs[0]


def actor(name):
    if name == "random":
        return lambda obs, rng: rng.standard_normal(make_env().action_space.shape[0])
    arrays, _ = load_policy_checkpoint(root / name)
    env = make_env()
    pol = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
    std = np.exp(np.asarray(arrays["weight_12"], np.float64))
    return lambda obs, rng: (
        tanh_mlp(pol.actor, pol.obs_rms.normalize(obs[None], 10.0).astype(np.float32))[0]
        + std * rng.standard_normal(std.shape)
    )


def play(act, n, seed):
    env, rng = make_env(), np.random.default_rng(seed)
    low, high = env.action_space.low, env.action_space.high
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(n):
        before, after, true, fell = [], [], [], []
        while True:
            a = np.clip(act(obs, rng), low, high).astype(np.float32)
            nobs, _, term, trunc, info = env.step(a)
            led_to = info.get("fall_observation", nobs)
            before.append(np.r_[np.asarray(obs, np.float32), a])
            after.append(np.r_[np.asarray(led_to, np.float32), a])
            true.append(info["reward_task"])
            fell.append(bool(info["fell"]))
            obs = nobs
            if term or trunc:
                break
        out.append(
            {
                "before": np.array(before, np.float32),
                "after": np.array(after, np.float32),
                "true": np.array(true),
                "fell": np.array(fell),
            }
        )
        obs, _ = env.reset()
    return out


pols = names + ["random"]
train, test = {}, {}
for i, n in enumerate(pols):
    act = actor(n)
    train[n] = play(act, args.train_eps, 5000 + 10 * i)
    test[n] = play(act, args.test_eps, 9000 + 10 * i)

clips = []  # (policy, kind arrays (CLIP, D + A), true return)
for n, eps in train.items():
    for e in eps:
        for s in range(0, len(e["true"]) - CLIP + 1, CLIP):
            clips.append({k: e[k][s : s + CLIP] for k in ("before", "after", "true")})
rng = np.random.default_rng(args.seed)
pairs = []
while len(pairs) < args.pairs:
    i, j = rng.integers(0, len(clips), 2)
    ri, rj = clips[i]["true"].sum(), clips[j]["true"].sum()
    if i != j and ri != rj:
        pairs.append((i, j, (1.0, 0.0) if ri > rj else (0.0, 1.0)))

cfg = replace(RewardConfig(), n_members=args.members, batchnorm=False, dropout=0.0, bfloat16="off")
result = {"env": args.env, "pairs": args.pairs, "steps": args.steps, "clips": len(clips), "policies": pols}
for kind in ("before", "after"):
    ens = RewardEnsemble((clips[0][kind].shape[1],), cfg, args.seed, np.float32)
    rows = np.concatenate([c[kind] for c in clips])
    ens.set_input_norm(rows.mean(0), rows.std(0))
    s1 = np.stack([clips[i][kind] for i, _, _ in pairs])
    s2 = np.stack([clips[j][kind] for _, j, _ in pairs])
    mu = np.array([m for _, _, m in pairs], np.float32)
    l2 = np.full(args.members, args.l2, np.float32)
    brng = np.random.default_rng(args.seed + 1)
    for step in range(args.steps):
        idx = brng.integers(0, len(pairs), (args.members, cfg.batch_size))
        ens.train_step(s1[idx], s2[idx], mu[idx], l2)
    raw = ens.predict(rows)
    m0, sd0 = raw.mean(1, keepdims=True), raw.std(1, keepdims=True)
    reward = lambda x: ((ens.predict(x) - m0) / sd0).mean(0)  # noqa: E731 -- per-step, in its sd over training rows
    tr_acc = float(
        np.mean(
            [(reward(clips[i][kind]).sum() > reward(clips[j][kind]).sum()) == (m[0] > m[1]) for i, j, m in pairs[:400]]
        )
    )
    per, tclips, ord_p, ord_t, fall_z = {}, [], [], [], []
    for n, eps in test.items():
        pr, tt = [], []
        for e in eps:
            r = reward(e[kind])
            pr.append(r.sum())
            tt.append(e["true"].sum())
            for s in range(0, len(r) - CLIP + 1, CLIP):
                tclips.append((r[s : s + CLIP].sum(), e["true"][s : s + CLIP].sum(), n))
            if n != "random":
                near = np.zeros(len(r), bool)
                for k in np.flatnonzero(e["fell"]):
                    near[max(0, k - 40) : k + 41] = True
                ord_p.append(r[~near])
                ord_t.append(e["true"][~near])
                fall_z += [(r[k], k) for k in np.flatnonzero(e["fell"])]
        per[n] = {
            "pred": round(float(np.mean(pr)), 1),
            "true": round(float(np.mean(tt)), 0),
            "falls": float(np.mean([e["fell"].sum() for e in eps])),
        }
    op, ot = np.concatenate(ord_p), np.concatenate(ord_t)
    cp = np.array([a for a, _, _ in tclips])
    ct = np.array([b for _, b, _ in tclips])
    tm = np.array([c != "random" for _, _, c in tclips])
    ii, jj = rng.integers(0, len(cp), 20000), rng.integers(0, len(cp), 20000)
    keep = (np.abs(ct[ii] - ct[jj]) >= 10) & tm[ii] & tm[jj]
    agree = np.sign(cp[ii] - cp[jj]) == np.sign(ct[ii] - ct[jj])
    trained = [n for n in pols if n != "random"]
    rank = lambda a: np.argsort(np.argsort(a))  # noqa: E731
    result[kind] = {
        "train_pair_acc": round(tr_acc, 3),
        "test_clip_pair_acc_trained": round(float(agree[keep].mean()), 3),
        "policy_rank_corr_trained": round(
            float(np.corrcoef(rank([per[n]["pred"] for n in trained]), rank([per[n]["true"] for n in trained]))[0, 1]),
            3,
        ),
        "ordinary_step_corr_trained": round(float(np.corrcoef(op, ot)[0, 1]), 3),
        "fall_step_z_trained": round(float((np.mean([v for v, _ in fall_z]) - op.mean()) / op.std()), 2),
        "per_policy": per,
    }
    print(kind, json.dumps(result[kind]), flush=True)
print(json.dumps({k: v for k, v in result.items() if k not in ("before", "after")}))

"""Why does PPO from 1,400 synthetic preferences reach only about half the oracle return on Hopper/Walker2d?
Scores saved MuJoCo reward predictors on episodes of several policies (no training).

Plays N fixed-length episodes (envs/fixed_length.py, reset rule, the runs' fall penalty 100) of each policy:
PPO checkpoints acting STOCHASTICALLY (mean + exp(log_std) * N(0, 1), clipped: as the runs' training episodes were
measured) and a random policy (N(0, 1) clipped: the initial Gaussian); records each step's predictor input
x_t = (o_t before the step, clipped a_t), the oracle's reward (info["reward_task"]) and the fall flag. Then, per
saved predictor (SavedPredictor, centring off; the reward as PPO got it before PPO's own return scaling, i.e. the
ensemble's normalized mean, standard deviation 0.05 on its normalization set):

* per policy: mean predicted episode return and mean true (oracle) return, falls per episode;
* correlation of predicted vs true over all steps, over the task's clips (MUJOCO_CLIP_STEPS: Hopper 188 steps),
  and the share of random clip pairs
  (true returns differing by >= 10) the predictor orders as the oracle does;
* the implicit fall penalty: least squares over clips, pred = a * (true return without fall penalty) + b * falls + c;
  -b / a is what one fall costs in the oracle's units as the predictor sees it (the oracle: 100);
* around falls: the predictor's reward at offsets -30..+10 from the fall step, in units of its own per-step
  standard deviation over ordinary steps (steps farther than 40 from any fall), minus their mean;
* the preference database: share of pairs whose clips differ in number of falls, near-ties, and the predictor's
  accuracy on its own train and validation pairs, split by whether the pair differs by a fall.

    PYTHONPATH=. python experiments/mujoco_predictor_diag.py --env Hopper-v5 --episodes 4 --out /tmp/x.json
"""

import argparse
import json
from pathlib import Path

import numpy as np

from drlhp.config.presets import MUJOCO_CLIP_STEPS
from drlhp.learned_reward import SavedPredictor
from drlhp.policy.checkpoint import load_policy_checkpoint
from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy
from envs.fixed_length import any_vector_env

FALL_CUT = -50.0  # a step's task reward below this is a fall (the penalty 100; no other step goes near it)

p = argparse.ArgumentParser()
p.add_argument("--env", default="Hopper-v5")
p.add_argument("--root", default="/work/main/runs/mujoco/table")
p.add_argument("--episodes", type=int, default=4)
p.add_argument("--seed", type=int, default=1000)
p.add_argument("--out", required=True)
p.add_argument("--policies", default="", help="comma list of run names (default: every run dir)")
p.add_argument("--predictors", default="", help="comma list of run names (default: every preference run)")
p.add_argument("--pd", action="store_true", help="InvertedPendulum: add a PD controller that balances (H61d)")
p.add_argument(
    "--checkpoint", action="append", default=[], help="extra NAME=PATH policy checkpoints (a milestone file, say)"
)
args = p.parse_args()
CLIP = MUJOCO_CLIP_STEPS[args.env]  # the task's clip, as its preference runs cut them (Hopper 188, the pendulums 30)

root = Path(args.root) / args.env
runs = sorted(d.name for d in root.iterdir() if (d / "config.json").is_file() and "penalty" not in d.name)
pol_names = args.policies.split(",") if args.policies else runs
pred_names = (
    args.predictors.split(",") if args.predictors else [r for r in runs if (root / r / "reward_predictor").is_dir()]
)


def make_env():
    return any_vector_env(args.env, 1, 100.0, fall_rule="reset").envs[0]


def play(act, n, seed, rng):
    env = make_env()
    low, high = env.action_space.low, env.action_space.high
    eps = []
    obs, _ = env.reset(seed=seed)
    for _ in range(n):
        xs, rs, fs = [], [], []
        while True:
            a = np.clip(act(obs, rng), low, high)
            x = np.concatenate([np.asarray(obs, np.float32), a.astype(np.float32)])
            obs, _, term, trunc, info = env.step(a)
            xs.append(x)
            rs.append(info["reward_task"])
            fs.append(bool(info["fell"]))
            if term or trunc:
                break
        eps.append((np.array(xs, np.float32), np.array(rs), np.array(fs)))
        obs, _ = env.reset()
    return eps


def ckpt_actor(path):
    arrays, meta = load_policy_checkpoint(path)
    env = make_env()
    pol = BoxMeanPolicy(arrays, env.observation_space.shape[0], env.action_space.low, env.action_space.high, 10.0)
    std = np.exp(np.asarray(arrays["weight_12"], np.float64)) if "weight_12" in arrays else None

    def act(obs, rng):
        from drlhp.policy.ppo.numpy_policy import tanh_mlp

        x = pol.obs_rms.normalize(obs[None], pol.obs_clip).astype(np.float32)
        mean = tanh_mlp(pol.actor, x)[0]
        return mean + (std * rng.standard_normal(mean.shape) if std is not None else 0.0)

    return act, meta.get("timesteps"), None if std is None else float(std.mean())


def random_actor(obs, rng):
    return rng.standard_normal(make_env.dim)


make_env.dim = make_env().action_space.shape[0]

# ---- play -------------------------------------------------------------------------------------------------
policies = {}
for i, name in enumerate(pol_names):
    act, ts, std = ckpt_actor(root / name)
    policies[name] = {
        "eps": play(act, args.episodes, args.seed + 10 * i, np.random.default_rng(args.seed + i)),
        "timesteps": ts,
        "std": std,
    }
for spec in args.checkpoint:
    name, path = spec.split("=", 1)
    act, ts, std = ckpt_actor(path)
    policies[name] = {
        "eps": play(act, args.episodes, args.seed + 777, np.random.default_rng(args.seed + 777)),
        "timesteps": ts,
        "std": std,
    }
if args.pd:  # a hand-made controller that keeps the pole up for 1,000 steps (gains found on seed 0), action noise 0.1
    if args.env != "InvertedPendulum-v5":
        p.error("--pd is for InvertedPendulum-v5 only")

    def pd_actor(obs, rng):
        return np.array([20 * obs[1] + 2 * obs[3] + obs[0] + obs[2]]) + 0.1 * rng.standard_normal(1)

    policies["pd"] = {
        "eps": play(pd_actor, args.episodes, args.seed + 555, np.random.default_rng(args.seed + 555)),
        "timesteps": 0,
        "std": 0.1,
    }
policies["random"] = {
    "eps": play(random_actor, args.episodes, args.seed + 999, np.random.default_rng(args.seed + 999)),
    "timesteps": 0,
    "std": 1.0,
}


def clips(rs):
    n = len(rs) // CLIP
    return rs[: n * CLIP].reshape(n, CLIP)


def corr(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")


def rank_corr(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return corr(ra, rb)


SINCE_RESET_BINS = ((0, 1), (1, 2), (2, 3), (3, 5), (5, 10), (10, 20), (20, 50), (50, 1001))


def since_reset(f):
    """Per step, the steps since the episode's start or the last fall's reset (0: the first step after it)."""
    out, last = np.zeros(len(f), int), -1
    for k in range(len(f)):
        out[k] = k - last - 1
        if f[k]:
            last = k
    return out


def reset_measures(policies, pname):
    """H61d (the fresh-start exploit): per policy, the predictor's mean reward by steps since the last reset (the
    fall step itself apart); pooled over policies, the mean predicted sum of a CLIP-step clip by its falls."""
    per = {}
    by_falls = {}
    for name, pol in policies.items():
        steps, falls, rs = [], [], []
        for (x, t, f), r in zip(pol["eps"], pol["pred"][pname]):
            steps.append(since_reset(f))
            falls.append(f)
            rs.append(r)
            for cr, cf in zip(clips(r).sum(1), clips(f.astype(float)).sum(1)):
                by_falls.setdefault(int(cf), []).append(float(cr))
        s, f, r = np.concatenate(steps), np.concatenate(falls), np.concatenate(rs)
        row = {"fall_step": round(float(r[f].mean()), 4) if f.any() else None}
        for lo, hi in SINCE_RESET_BINS:
            sel = (s >= lo) & (s < hi) & ~f
            row[f"{lo}-{hi - 1}"] = [round(float(r[sel].mean()), 4), int(sel.sum())] if sel.any() else None
        per[name] = row
    return {
        "reward_by_steps_since_reset": per,
        "clip_sum_by_falls": {k: [round(float(np.mean(v)), 3), len(v)] for k, v in sorted(by_falls.items())},
    }


def around_falls(policies, names, pname, offs, a):
    """The predictor's reward around the falls of ``names``' episodes, in units of its per-step sd over their
    ordinary steps (farther than 40 from a fall), less their mean; and the dip's area over offsets -30..+10 in the
    oracle's units (divided by ``a``, the predictor's reward per unit of true return, from the clip fit)."""
    windows, ordinary = [], []
    for name in names:
        pol = policies[name]
        for (x, t, f), r in zip(pol["eps"], pol["pred"][pname]):
            near = np.zeros(len(r), bool)
            for k in np.flatnonzero(f):
                near[max(0, k - 40) : k + 41] = True
                if k + offs[0] >= 0 and k + offs[-1] < len(r):
                    windows.append(r[k + offs])
            ordinary.append(r[~near])
    ordinary = np.concatenate(ordinary)
    if not windows or len(ordinary) < 50:
        return {"n_falls": len(windows), "ordinary_steps": int(len(ordinary))}
    mu, sd = ordinary.mean(), ordinary.std()
    w = np.array(windows)
    m = (w.mean(0) - mu) / sd
    return {
        "n_falls": len(windows),
        "ordinary_steps": int(len(ordinary)),
        "ordinary_sd": float(sd),
        "z_by_offset": {int(o): round(float(v), 2) for o, v in zip(offs, m)},
        "z_fall_step": round(float(m[offs == 0][0]), 2),
        "sum_z_-30..-1": round(float(m[:30].sum()), 2),
        "sum_z_+1..+10": round(float(m[31:].sum()), 2),
        "dip_area_oracle_units_-30..+10": round(float((w.mean(0) - mu).sum() / a), 1) if a else None,
        "dip_area_oracle_units_-10..0": round(float((w.mean(0) - mu)[20:31].sum() / a), 1) if a else None,
    }


out = {"env": args.env, "episodes": args.episodes, "policies": {}, "predictors": {}}
for name, pol in policies.items():
    eps = pol["eps"]
    out["policies"][name] = {
        "timesteps": pol["timesteps"],
        "std": pol["std"],
        "true_returns": [round(float(r.sum()), 1) for _, r, _ in eps],
        "falls": [int(f.sum()) for _, _, f in eps],
    }

for pname in pred_names:
    pred = SavedPredictor(root / pname, center=0)
    res = {"per_policy": {}}
    all_r, all_t, clip_r, clip_t, clip_f, clip_tn, clip_pol = [], [], [], [], [], [], []
    for name, pol in policies.items():
        prs, trs, fls = [], [], []
        for x, t, f in pol["eps"]:
            r = pred.rewards(x).astype(np.float64)
            pol.setdefault("pred", {})[pname] = pol.get("pred", {}).get(pname, []) + [r]
            prs.append(r.sum())
            trs.append(t.sum())
            fls.append(f.sum())
            all_r.append(r)
            all_t.append(t)
            cr, ct, cf = clips(r).sum(1), clips(t).sum(1), clips(f.astype(float)).sum(1)
            clip_r += cr.tolist()
            clip_t += ct.tolist()
            clip_f += cf.tolist()
            clip_tn += (ct + 100.0 * cf).tolist()
            clip_pol += [name] * len(cr)
        own_steps = np.concatenate([r for r in pol["pred"][pname]])
        own_true = np.concatenate([t for _, t, _ in pol["eps"]])
        # this policy's clips only (H58): how the predictor orders the clips one policy makes, against the oracle
        own_cr = np.concatenate([clips(r).sum(1) for r in pol["pred"][pname]])
        own_ct = np.concatenate([clips(t).sum(1) for _, t, _ in pol["eps"]])  # the oracle's, falls included
        res["per_policy"][name] = {
            "pred_return": round(float(np.mean(prs)), 2),
            "pred_return_sd": round(float(np.std(prs)), 2),
            "true_return": round(float(np.mean(trs)), 1),
            "falls": round(float(np.mean(fls)), 2),
            "step_corr_own": round(corr(own_steps, own_true), 3),
            "clip_rank_corr_own": round(rank_corr(own_cr, own_ct), 3),
        }
    all_r, all_t = np.concatenate(all_r), np.concatenate(all_t)
    clip_r, clip_t, clip_f, clip_tn = map(np.asarray, (clip_r, clip_t, clip_f, clip_tn))
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(clip_r), 20000), rng.integers(0, len(clip_r), 20000)
    keep = np.abs(clip_t[i] - clip_t[j]) >= 10
    agree = np.sign(clip_r[i] - clip_r[j]) == np.sign(clip_t[i] - clip_t[j])
    # pairs among clips of the trained policies only (no random), as the runs' late labels were
    trained = np.array([c != "random" for c in clip_pol])
    k2 = keep & trained[i] & trained[j]
    A = np.stack([clip_tn, clip_f, np.ones_like(clip_f)], 1)
    coef, *_ = np.linalg.lstsq(A, clip_r, rcond=None)
    A2 = A[trained]
    coef2, *_ = np.linalg.lstsq(A2, clip_r[trained], rcond=None)
    res.update(
        {
            "step_corr_all": round(corr(all_r, all_t), 3),
            "clip_corr_all": round(corr(clip_r, clip_t), 3),
            "clip_rank_corr_all": round(rank_corr(clip_r, clip_t), 3),
            "clip_corr_trained": round(corr(clip_r[trained], clip_t[trained]), 3),
            "clip_pair_acc_all": round(float(agree[keep].mean()), 3),
            "clip_pair_acc_trained": round(float(agree[k2].mean()), 3),
            "fit_all": {
                "a_per_true_unit": float(coef[0]),
                "b_per_fall": float(coef[1]),
                "implied_fall_penalty": float(-coef[1] / coef[0]) if coef[0] else None,
            },
            "fit_trained": {
                "a_per_true_unit": float(coef2[0]),
                "b_per_fall": float(coef2[1]),
                "implied_fall_penalty": float(-coef2[1] / coef2[0]) if coef2[0] else None,
            },
        }
    )
    res.update(reset_measures(policies, pname))
    # around falls, in units of the predictor's per-step sd over ordinary steps
    offs = np.arange(-30, 11)
    for group, names in (("trained", [n for n in policies if n != "random"]), ("random", ["random"])):
        res[f"around_falls_{group}"] = around_falls(policies, names, pname, offs, coef2[0])
    windows, ordinary = [], []
    for name, pol in policies.items():
        for (x, t, f), r in zip(pol["eps"], pol["pred"][pname]):
            fi = np.flatnonzero(f)
            near = np.zeros(len(r), bool)
            for k in fi:
                near[max(0, k - 40) : k + 41] = True
                if k + offs[0] >= 0 and k + offs[-1] < len(r):
                    windows.append(r[k + offs])
            ordinary.append(r[~near])
    ordinary = np.concatenate(ordinary)
    mu, sd = ordinary.mean(), ordinary.std()
    if windows:
        w = (np.array(windows) - mu) / sd
        m = w.mean(0)
        res["around_falls"] = {
            "n_falls": len(windows),
            "ordinary_mean": float(mu),
            "ordinary_sd": float(sd),
            "z_by_offset": {int(o): round(float(v), 2) for o, v in zip(offs, m)},
            "sum_z_-30..-1": round(float(m[:30].sum()), 2),
            "sum_z_+1..+10": round(float(m[31:].sum()), 2),
        }
    # the preference database
    try:
        from drlhp.reward.pref_db import PrefDB

        db = PrefDB.load(root / pname / "prefs" / "prefs.npz")
        dbres = {}
        for split in ("train", "val"):
            ents = db.entries(split)
            s1 = [db.segment_obs(e.id1) for e in ents]
            s2 = [db.segment_obs(e.id2) for e in ents]
            t1 = np.array([db.segment_rewards(e.id1).sum() for e in ents])
            t2 = np.array([db.segment_rewards(e.id2).sum() for e in ents])
            f1 = np.array([(db.segment_rewards(e.id1) < FALL_CUT).sum() for e in ents])
            f2 = np.array([(db.segment_rewards(e.id2) < FALL_CUT).sum() for e in ents])
            mu_ = np.array([e.mu for e in ents], float)
            p1 = np.array([pred.rewards(s).sum() for s in s1])
            p2 = np.array([pred.rewards(s).sum() for s in s2])
            strict = mu_[:, 0] != mu_[:, 1]
            correct = (p1 > p2) == (mu_[:, 0] > mu_[:, 1])
            dfall = f1 != f2
            dbres[split] = {
                "n": len(ents),
                "strict": int(strict.sum()),
                "share_differ_by_falls": round(float(dfall.mean()), 3),
                "share_with_any_fall": round(float(((f1 + f2) > 0).mean()), 3),
                "share_near_tie_lt10": round(float((np.abs(t1 - t2) < 10).mean()), 3),
                "share_near_tie_lt5pct": round(
                    float((np.abs(t1 - t2) < 0.05 * np.maximum(np.abs(t1), np.abs(t2))).mean()), 3
                ),
                "acc": round(float(correct[strict].mean()), 3),
                "acc_differ_by_falls": round(float(correct[strict & dfall].mean()), 3)
                if (strict & dfall).any()
                else None,
                "acc_same_falls": round(float(correct[strict & ~dfall].mean()), 3) if (strict & ~dfall).any() else None,
                "acc_same_falls_no_fall": round(float(correct[strict & (f1 + f2 == 0)].mean()), 3)
                if (strict & (f1 + f2 == 0)).any()
                else None,
                "mean_abs_true_diff": round(float(np.abs(t1 - t2).mean()), 1),
                "true_return_quartiles": [
                    round(float(q), 1) for q in np.percentile(np.r_[t1, t2], [10, 25, 50, 75, 90])
                ],
                "falls_per_clip": round(float(np.r_[f1, f2].mean()), 3),
            }
            if split == "train":
                order = np.array([e.order for e in ents])
                half = order > np.median(order)
                dbres["train_late_half_acc"] = round(float(correct[strict & half].mean()), 3)
                dbres["train_early_half_acc"] = round(float(correct[strict & ~half].mean()), 3)
        res["prefdb"] = dbres
    except Exception as e:  # noqa: BLE001 -- a diagnostic: say what failed, go on
        res["prefdb_error"] = repr(e)
    out["predictors"][pname] = res
    print(pname, json.dumps({k: v for k, v in res.items() if not k.startswith("around_falls")}), flush=True)

Path(args.out).write_text(json.dumps(out, indent=1))
np.savez_compressed(
    str(Path(args.out).with_suffix(".npz")),
    **{
        f"{name}|{k}|{kind}": arr
        for name, pol in policies.items()
        for k, (x, t, f) in enumerate(pol["eps"])
        for kind, arr in (("x", x), ("true", t), ("fell", f))
    },
    **{
        f"{name}|{k}|pred|{q}": r
        for name, pol in policies.items()
        for q, rs in pol.get("pred", {}).items()
        for k, r in enumerate(rs)
    },
)
print("wrote", args.out)

#!/usr/bin/env python
"""The policy's update in bfloat16 against float32 on recorded batches: does --policy_bfloat16 change what is learned?

    python bench/policy_gradients.py [--model models/pong-5500-labels/seed-0] [--env PongNoFrameskip-v4]
                                     [--rollouts 2] [--json OUT]

Records discrete PPO's rollouts on the env (the presets' Atari PPO: 8 envs x 128 steps, the env's clipped score as
the reward), played by two policies: a trained one (--model, a run's or a model's policy checkpoint) and a fresh one
(the seed's initial weights). For each minibatch of 256 of each rollout (as an update takes them), the gradient of
PPO's loss (drlhp.policy.ppo.update.ppo_discrete_loss, advantages normalized) with respect to every weight, from
the same float32 weights, once with the Nature CNN's torso in float32 and once in bfloat16. Prints, per policy, the
cosine between the two gradients (all weights flattened) and their relative error |g_bf16 - g_f32| / |g_f32|
(median and worst over the minibatches), per layer too, beside the cosine between two minibatches' float32 gradients
(the noise of the minibatch itself, the scale to judge the difference by), and the time of one whole update
(4 epochs of 4 minibatches) in each precision, with the CPU model.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import quiet  # noqa: E402,F401  (bench/quiet.py: TensorFlow's own lines off the terminal; before TensorFlow)
from drlhp.processes.cpu import cpu_model  # noqa: E402


def gradients(policy, rollout, minibatch_rows: np.ndarray):
    """PPO's gradient on each minibatch (rows of the flattened rollout), as one list of flat float64 arrays per
    minibatch, each split by weight."""
    import tensorflow as tf

    from drlhp.policy.ppo.update import gae, ppo_discrete_loss

    cfg = policy.cfg
    adv, ret = gae(rollout.rewards, rollout.values, rollout.cuts, rollout.last_values, cfg.gamma, cfg.gae_lambda)
    b = cfg.batch
    adv, ret = adv.reshape(b), ret.reshape(b)
    out = []
    for idx in minibatch_rows:
        a = adv[idx]
        a = (a - a.mean()) / (a.std() + 1e-8)
        with tf.GradientTape() as tape:
            logits, values = policy.model(rollout.b_obs[idx], training=True)
            loss, *_ = ppo_discrete_loss(logits, values, rollout.b_actions[idx], rollout.log_probs.reshape(b)[idx],
                                         a, ret[idx], rollout.values.reshape(b)[idx], cfg, cfg.ent_coef)
        out.append([np.asarray(g, np.float64).ravel() for g in tape.gradient(loss, policy.variables)])
    return out


def compare(g32: list, g16: list, names: list[str]) -> dict:
    cos, rel = [], []
    per_layer = {n: [] for n in names}
    for a, b in zip(g32, g16):
        fa, fb = np.concatenate(a), np.concatenate(b)
        cos.append(float(fa @ fb / (np.linalg.norm(fa) * np.linalg.norm(fb))))
        rel.append(float(np.linalg.norm(fb - fa) / np.linalg.norm(fa)))
        for n, la, lb in zip(names, a, b):
            per_layer[n].append(float(np.linalg.norm(lb - la) / max(1e-30, np.linalg.norm(la))))
    # the scale of the difference: two minibatches of the same rollout in float32 (the noise SGD lives with)
    flat = [np.concatenate(a) for a in g32]
    between = [float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y))) for x, y in zip(flat[::2], flat[1::2])]
    return {"cosine_between_minibatches_float32": float(np.median(between)),
            "cosine_median": float(np.median(cos)), "cosine_worst": float(np.min(cos)),
            "relative_error_median": float(np.median(rel)), "relative_error_worst": float(np.max(rel)),
            "relative_error_by_weight": {n: float(np.median(v)) for n, v in per_layer.items()}}


def update_ms(policy, rollout, repeats: int = 3) -> float:
    policy.learn(rollout, 1e-12)  # traced
    t0 = time.perf_counter()
    for _ in range(repeats):
        policy.learn(rollout, 1e-12)
    return 1e3 * (time.perf_counter() - t0) / repeats


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="PongNoFrameskip-v4")
    p.add_argument("--model", default=str(ROOT / "models" / "pong-5500-labels" / "seed-0"),
                   help="a run directory or model whose policy checkpoint plays the trained policy's rollouts")
    p.add_argument("--rollouts", type=int, default=2, help="rollouts recorded per policy (4 minibatches each)")
    p.add_argument("--json", default=None)
    args = p.parse_args()

    from drlhp.processes.tf_setup import configure_tensorflow

    tf = configure_tensorflow(2, 1, seed=0)
    import envs
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import DISCRETE_PPO
    from drlhp.policy.checkpoint import find_latest_checkpoint, load_policy_checkpoint
    from drlhp.policy.ppo.discrete_policy import DiscretePPOPolicy
    from drlhp.policy.ppo.discrete_rollout import DiscreteRolloutCollector
    from drlhp.policy.reward_source import ClippedEnvReward

    cfg = config_from_args(build_parser().parse_args(shlex.split(DISCRETE_PPO))).ppo
    vec = envs.make_vec_env(args.env, cfg.n_envs)
    f32 = DiscretePPOPolicy(vec.obs_shape, vec.n_actions, cfg, seed=0, obs_dtype=vec.obs_dtype)
    b16 = DiscretePPOPolicy(vec.obs_shape, vec.n_actions, cfg, seed=0, obs_dtype=vec.obs_dtype, bfloat16=True)
    names = [v.path if hasattr(v, "path") else v.name for v in f32.variables]
    fresh = f32.get_state()
    ckpt = find_latest_checkpoint(Path(args.model))
    players = [("fresh (seed 0's initial weights)", fresh)]
    if ckpt is not None:
        trained, _ = load_policy_checkpoint(ckpt)
        players.insert(0, (f"trained ({Path(args.model).name}: {ckpt.name})",
                           {k: v for k, v in trained.items() if k.startswith("weight_")}))
    print(f"# {args.env}, PPO 8 x 128, minibatches of 256; TF {tf.__version__}; CPU: {cpu_model()}", flush=True)
    results = {}
    rng = np.random.default_rng(0)
    for label, weights in players:
        f32.set_state(weights)
        collector = DiscreteRolloutCollector(vec, f32, ClippedEnvReward(), cfg.n_steps, seed=0)
        g32, g16 = [], []
        for _ in range(args.rollouts):
            rollout = collector.run()
            rows = rng.permutation(cfg.batch).reshape(cfg.n_minibatches, cfg.minibatch)
            f32.set_state(weights)
            b16.set_state(weights)
            g32 += gradients(f32, rollout, rows)
            g16 += gradients(b16, rollout, rows)
        res = compare(g32, g16, names)
        res["minibatches"] = len(g32)
        res["update_ms_float32"] = update_ms(f32, rollout)
        res["update_ms_bfloat16"] = update_ms(b16, rollout)
        f32.set_state(weights)
        results[label] = res
        print(f"{label}: {len(g32)} minibatches; cosine median {res['cosine_median']:.4f} (worst "
              f"{res['cosine_worst']:.4f}); relative error median {res['relative_error_median']:.3f} (worst "
              f"{res['relative_error_worst']:.3f}); two minibatches in float32: cosine "
              f"{res['cosine_between_minibatches_float32']:.3f}; "
              f"one update {res['update_ms_float32']:.0f} ms in float32, "
              f"{res['update_ms_bfloat16']:.0f} ms in bfloat16 "
              f"({res['update_ms_float32'] / res['update_ms_bfloat16']:.2f}x)", flush=True)
        print("  relative error by weight: " + ", ".join(f"{n.split('/')[-2] if '/' in n else n}/{n.split('/')[-1]} "
                                                        f"{v:.3f}" for n, v in res["relative_error_by_weight"].items()))
    vec.close()
    if args.json:
        Path(args.json).write_text(json.dumps({"env": args.env, "cpu": cpu_model(), **results}, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""PPO on discrete actions (--algo ppo on MovingDot and Atari; drlhp.policy.ppo.discrete_policy): its loss against
hand-computed values, its state through a checkpoint, what the presets give it, and run.py's two policy-training
modes with it (the true reward; synthetic preferences through the three processes)."""
import csv
import json
import math

import numpy as np
import pytest

# a tiny rollout for the runs: 4 envs x 64 steps, 2 epochs of 2 minibatches (the presets' are 8 x 128, 4 x 4)
TINY = ("--ppo_n_envs", 4, "--ppo_n_steps", 64, "--ppo_n_epochs", 2, "--ppo_n_minibatches", 2, "--log_interval", 0)


def _cfg(**kw):
    from drlhp.config.ppo import PPOConfig

    return PPOConfig(**{"clip_coef": 0.1, "vf_coef": 0.5, "clip_vloss": True, **kw})


def test_the_loss_of_a_tiny_batch_is_the_hand_computed_one():
    """Two steps, two actions. Step 1: logits (0, ln 3), so pi = (1/4, 3/4), action 1, the old policy gave it
    probability 1/2 (ratio 1.5, clipped to 1.1), advantage 2; step 2: logits (0, 0), action 0, ratio 0.95 (inside the
    clip range), advantage -1. Values (1, -0.5), as acted (0.8, 0), returns (2, -1)."""
    import tensorflow as tf

    from drlhp.policy.ppo.update import categorical_entropy, categorical_log_prob, ppo_discrete_loss

    logits = tf.constant([[0.0, math.log(3.0)], [0.0, 0.0]])
    actions = tf.constant([1, 0], tf.int32)
    old_log_prob = tf.constant([math.log(0.75 / 1.5), math.log(0.5 / 0.95)], tf.float32)
    advantages, returns = tf.constant([2.0, -1.0]), tf.constant([2.0, -1.0])
    values, old_values = tf.constant([1.0, -0.5]), tf.constant([0.8, 0.0])

    np.testing.assert_allclose(categorical_log_prob(logits, actions), [math.log(0.75), math.log(0.5)], rtol=1e-6)
    h1 = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    np.testing.assert_allclose(categorical_entropy(logits), [h1, math.log(2.0)], rtol=1e-6)

    # clipped surrogate: min(1.5 * 2, 1.1 * 2) = 2.2; min(0.95 * -1, 0.95 * -1) = -0.95
    policy_loss = -(2.2 - 0.95) / 2
    # clipped value loss: step 1 max((1 - 2)^2, (0.8 + 0.1 - 2)^2) = 1.21; step 2 max((-0.5 + 1)^2, (-0.1 + 1)^2) = 0.81
    value_loss = 0.5 * (1.21 + 0.81) / 2
    entropy = (h1 + math.log(2.0)) / 2
    kl = ((1.5 - 1 - math.log(1.5)) + (0.95 - 1 - math.log(0.95))) / 2
    ent_coef = 0.01
    loss, pl, vl, ent, approx_kl, clip_frac = (float(x) for x in ppo_discrete_loss(
        logits, values, actions, old_log_prob, advantages, returns, old_values, _cfg(), ent_coef))
    assert pl == pytest.approx(policy_loss, rel=1e-5) and vl == pytest.approx(value_loss, rel=1e-5)
    assert ent == pytest.approx(entropy, rel=1e-5) and approx_kl == pytest.approx(kl, rel=1e-4)
    assert clip_frac == 0.5  # step 1's ratio is clipped, step 2's not
    assert loss == pytest.approx(policy_loss - ent_coef * entropy + 0.5 * value_loss, rel=1e-5)
    # without value clipping: 0.5 * mean(1, 0.25)
    vl_plain = float(ppo_discrete_loss(logits, values, actions, old_log_prob, advantages, returns, old_values,
                                       _cfg(clip_vloss=False), ent_coef)[2])
    assert vl_plain == pytest.approx(0.3125, rel=1e-6)


def _policy(seed=0):
    from drlhp.policy.ppo.discrete_policy import DiscretePPOPolicy

    cfg = _cfg(n_envs=2, n_steps=8, n_epochs=2, n_minibatches=2)
    return DiscretePPOPolicy((6,), 3, cfg, seed, obs_dtype=np.float32)


def _rollout(policy, rng):
    """A rollout of random observations acted on by ``policy``, paid random rewards, with an episode end."""
    from drlhp.policy.ppo.batches import DiscreteRollout

    cfg = policy.cfg
    T, N = cfg.n_steps, cfg.n_envs
    obs = rng.normal(size=(T, N, 6)).astype(np.float32)
    acted = [policy.act(o) for o in obs]
    dones = np.zeros((T, N), np.float32)
    dones[3, 1] = 1.0
    return DiscreteRollout(b_obs=obs.reshape(T * N, 6), b_actions=np.stack([a[0] for a in acted]).reshape(-1),
                           rewards=rng.normal(size=(T, N)).astype(np.float32),
                           true_rewards=np.zeros((T, N), np.float32), next_obs=obs, dones=dones,
                           values=np.stack([a[1] for a in acted]), log_probs=np.stack([a[2] for a in acted]),
                           last_values=policy.value(obs[-1]), cuts=dones)


def test_an_update_changes_the_policy_compiles_once_and_a_checkpoint_restores_every_state(tmp_path):
    """Two updates; the state after the first, through a checkpoint file into a new policy, makes the same second
    update (the same minibatches, the same sampled actions) as the policy that never stopped."""
    from drlhp.policy.checkpoint import load_policy_checkpoint, save_policy_checkpoint

    rng = np.random.default_rng(1)
    a = _policy()
    before = a.get_state()
    first = _rollout(a, rng)
    losses = a.learn(first, lr=1e-3)
    assert {"policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "explained_variance"} <= set(losses)
    assert all(np.isfinite(v) for v in losses.values())
    assert not np.allclose(before["weight_0"], a.get_state()["weight_0"])  # it learned something
    save_policy_checkpoint(tmp_path, 1, a.get_state(), {"updates": 1, "algo": "ppo"})
    arrays, _ = load_policy_checkpoint(tmp_path)
    b = _policy(seed=7)  # another seed: everything that matters comes from the checkpoint
    b.set_state(arrays)
    for k, v in a.get_state().items():
        np.testing.assert_array_equal(b.get_state()[k], v, err_msg=k)
    second_rng = np.random.default_rng(2)
    obs = second_rng.normal(size=(2, 6)).astype(np.float32)
    np.testing.assert_array_equal(a.act(obs)[0], b.act(obs)[0])  # the acting generator was restored too
    rollout = _rollout(a, np.random.default_rng(3))
    a.learn(rollout, lr=1e-3)
    b.learn(rollout, lr=1e-3)
    for k, v in a.get_state().items():
        if k == "act_rng_state":  # a acted the rollout, b did not
            continue
        np.testing.assert_allclose(b.get_state()[k], v, rtol=1e-6, atol=1e-7, err_msg=k)
    assert a.traces == {"act": 1, "value": 1, "update": 1}  # fixed signatures: traced once each
    with pytest.raises(ValueError, match="does not fit this network"):
        b.set_state({**arrays, "weight_0": np.zeros((5, 64), np.float32)})


def test_with_algo_ppo_the_discrete_presets_give_cleanrls_atari_settings_and_pong_from_preferences_picks_it():
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import PRESETS, with_preset
    from drlhp.run.checks import resolve_algo

    def cfg_of(argv):
        expanded, name, line = with_preset(argv)
        return config_from_args(build_parser().parse_args(expanded)), line

    ppo, line = cfg_of(["--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--algo", "ppo", "--seed", "3"])
    p = ppo.ppo
    assert (p.n_envs, p.n_steps, p.n_epochs, p.n_minibatches, p.lr, p.clip_coef, p.ent_coef) == (
        8, 128, 4, 4, 2.5e-4, 0.1, 0.01)
    assert (p.gamma, p.gae_lambda, p.vf_coef, p.max_grad_norm, p.adam_eps) == (0.99, 0.95, 0.5, 0.5, 1e-5)
    assert p.clip_vloss and p.anneal_lr and p.norm_adv and ppo.algo == "ppo"
    assert "(with --algo ppo --ppo_n_envs 8" in line
    # from preferences the pong preset picks PPO itself (issue 37): the same config as with --algo ppo
    picked, picked_line = cfg_of(["--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--seed", "3"])
    assert picked == ppo and "(from preferences it picks --algo ppo; --algo a2c for A2C)" in picked_line
    a2c, _ = cfg_of(["--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--seed", "3", "--algo", "a2c"])
    # --algo a2c: the pong preset as it was, PPO's flags at their (MuJoCo) defaults
    assert a2c.ppo.n_steps == 256 and not a2c.ppo.clip_vloss and a2c.algo == "a2c"
    assert (ppo.prefs, ppo.reward, ppo.a2c) == (a2c.prefs, a2c.reward, a2c.a2c)  # the preset's other flags stay
    # on the true reward (no labels) and with --algo auto, Pong stays A2C's; so does MovingDot from preferences
    for argv in (["train_policy_with_original_rewards", "--env", "PongNoFrameskip-v4"],
                 ["--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--algo", "auto"],
                 ["--env", "MovingDot-v0", "--synthetic_prefs"]):
        cfg, line = cfg_of(argv)
        assert resolve_algo(cfg).algo == "a2c" and cfg.ppo.n_steps == 256 and "picks --algo" not in (line or ""), argv
    # the user's flag wins over the preset's PPO additions
    assert cfg_of(["--env", "PongNoFrameskip-v4", "--algo", "ppo", "--ppo_n_envs", "16"])[0].ppo.n_envs == 16
    assert "pong" in PRESETS


def _summary(run_dir):
    return json.loads((run_dir / "summary.json").read_text())


def _progress(run_dir):
    with open(run_dir / "progress.csv") as f:
        return list(csv.DictReader(f))


def test_moving_dot_on_the_true_reward_trains_saves_and_resumes(cli, tmp_path):
    """Two updates of 256 agent steps in two sittings; the second resumes the first's checkpoint."""
    run = tmp_path / "run"
    args = ("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--algo", "ppo",
            "--million_timesteps", 0.000512, *TINY, "--run_dir", run)
    first = cli(*args, "--stop_at_million_timesteps", 0.000256, check=True)
    assert "with PPO (discrete actions)" in first.stdout and "(with --algo ppo" in first.stdout
    assert _summary(run)["timesteps"] == 256 and (run / "checkpoints" / "policy-1.npz").is_file()
    assert json.loads((run / "config.json").read_text())["ppo"]["clip_vloss"] is True
    second = cli(*args, check=True)
    assert "resumed from" in second.stdout and "at 256 steps" in second.stdout
    summary = _summary(run)
    assert summary["algo"] == "ppo" and summary["timesteps"] == 512 and summary["updates"] == 2
    rows = _progress(run)
    assert {"policy/approx_kl", "policy/clip_frac", "policy/explained_variance", "policy/entropy",
            "policy/true_return_last100", "system/agent_steps_per_s"} <= set(rows[0])
    assert int(rows[-1]["step"]) == 512
    # watch plays it (A2C's network: the same arrays), with --algo ppo or without
    for algo in ("ppo", "auto"):
        watched = cli("watch", "--env", "MovingDot-v0", "--algo", algo, "--load_policy_ckpt_dir", run, "--video",
                      tmp_path / f"{algo}.gif", "--run_dir", tmp_path / f"watch-{algo}", check=True)
        assert "1 episode(s)" in watched.stdout and (tmp_path / f"{algo}.gif").is_file()
    # A2C reads no PPO checkpoint: its network is the same, its optimizer's state not
    proc = cli(*args[:3], "--algo", "a2c", "--load_policy_ckpt_dir", run, "--run_dir", tmp_path / "a2c")
    assert proc.returncode == 2 and "is ppo's; this run is A2C's" in proc.stderr


def test_synthetic_preferences_train_discrete_ppo_through_the_three_processes(cli, tmp_path):
    """train_policy_with_preferences --synthetic_prefs --algo ppo on MovingDot: segments reach the labeller, the
    predictor's reward trains PPO, and the run record says so."""
    run = tmp_path / "run"
    cli("train_policy_with_preferences", "--env", "MovingDot-v0", "--synthetic_prefs", "--algo", "ppo",
        "--preset", "none", "--segment_length", 5, "--n_initial_prefs", 40, "--n_initial_epochs", 1, "--n_labels", 60,
        "--million_timesteps", 0.000768, "--n_predictors", 1, "--reward_batch_size", 4, *TINY, "--run_dir", run,
        timeout=1200, check=True)  # about 30 s on an idle machine; 10+ minutes beside a Pong run
    summary = _summary(run)
    assert summary["algo"] == "ppo" and summary["timesteps"] == 768 and summary["updates"] == 3
    assert summary["segments_sent"] > 0 and summary["n_preferences"] >= 40 and summary["predictor_version"] >= 1
    assert summary["random_steps"] > 0  # the initial labels' segments came from random play
    assert json.loads((run / "status.json").read_text())["status"] == "finished"
    config = json.loads((run / "config.json").read_text())
    assert config["algo"] == "ppo" and config["ppo"]["n_envs"] == 4
    rows = _progress(run)
    assert {"policy/approx_kl", "policy/clip_frac", "policy/predictor_version",
            "system/segments_dropped"} <= set(rows[0])
    from drlhp.policy.checkpoint import load_policy_checkpoint

    _, meta = load_policy_checkpoint(run)
    assert meta["algo"] == "ppo" and meta["timesteps"] == 768


@pytest.mark.slow
def test_ppo_moves_the_dot_to_the_centre(cli, tmp_path):
    """The true reward, the moving-dot preset with PPO's Atari settings (--algo ppo), until the last 100 episodes
    reach the A2C learning test's bars (tests/test_learning.py) or 0.1M agent steps."""
    from test_learning import TARGET_RETURN, _ended_as_it_should

    run = tmp_path / "dot"
    cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--algo", "ppo", "--seed", 0,
        "--million_timesteps", 0.1, "--stop_at_true_return", TARGET_RETURN, "--stop_at_success_rate", 0.95,
        "--run_dir", run, "--log_interval", 10, check=True, timeout=1800)
    summary = _summary(run)
    _ended_as_it_should(summary, 100_352)  # 98 updates of 1,024 agent steps: the first past 0.1M
    assert summary["success_rate_last100"] >= 0.9, summary
    assert summary["true_return_last100"] >= TARGET_RETURN, summary

"""python -m floyd export: a run's newest policy as a small model folder that watch and training load."""
import json

import numpy as np
import pytest

from drlhp.processes.tf_setup import configure_tensorflow

configure_tensorflow(1, 1)

from drlhp.config.a2c import A2CConfig  # noqa: E402
from drlhp.policy.a2c.policy import A2CPolicy  # noqa: E402
from drlhp.policy.checkpoint import load_policy_checkpoint, save_policy_checkpoint  # noqa: E402
from floyd.__main__ import main as floyd_main  # noqa: E402
from floyd.export import RECORD  # noqa: E402


def _probs(policy, obs):
    import tensorflow as tf

    logits, _ = policy.model(obs, training=False)
    return tf.nn.softmax(logits).numpy()


def _run(tmp_path, timesteps=800):
    """A run folder as training leaves it: two checkpoints and the record, its summary at the newest."""
    run_dir = tmp_path / "runs" / "tiny"
    policy = A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=2, n_steps=2), seed=3)
    for updates in (100, 200):
        save_policy_checkpoint(run_dir / "checkpoints", updates, policy.get_state(),
                               {"timesteps": updates * 4, "episodes": 7})
    for name in RECORD:
        (run_dir / name).write_text("")
    (run_dir / "summary.json").write_text(json.dumps({"timesteps": timesteps}))
    (run_dir / "run.json").write_text(json.dumps({"argv": ["train"]}))
    return run_dir, policy


def test_export_writes_float16_weights_and_the_record_and_the_policy_acts_the_same(tmp_path, capsys):
    run_dir, policy = _run(tmp_path)
    out = tmp_path / "models" / "tiny"
    assert floyd_main(["--runs_dir", str(tmp_path / "runs"), "export", "tiny", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*RECORD, "policy-200.npz"])
    state, meta = load_policy_checkpoint(out)
    assert meta["weights_only"] and meta["timesteps"] == 800 and meta["episodes"] == 7
    assert set(state) == {k for k in policy.get_state() if k.startswith("weight_")}
    assert all(v.dtype == np.float16 for v in state.values())
    whole = (run_dir / "checkpoints" / "policy-200.npz").stat().st_size
    assert (out / "policy-200.npz").stat().st_size < whole / 3
    loaded = A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=2, n_steps=2), seed=99)
    obs = np.random.default_rng(0).integers(0, 256, (6, 84, 84, 4), dtype=np.uint8)
    assert np.abs(_probs(loaded, obs) - _probs(policy, obs)).max() > 1e-3  # another seed acts otherwise
    loaded.set_state(state)
    np.testing.assert_allclose(_probs(loaded, obs), _probs(policy, obs), atol=5e-3)
    assert "policy-200.npz" in capsys.readouterr().out


def test_export_carries_the_label_log_of_a_run_from_preferences(tmp_path):
    run_dir, _ = _run(tmp_path)
    (run_dir / "progress_prefs.csv").write_text("step,prefs/labels_given\n1000,500\n")
    out = tmp_path / "models" / "tiny"
    assert floyd_main(["--runs_dir", str(tmp_path / "runs"), "export", "tiny", "--out", str(out)]) == 0
    assert (out / "progress_prefs.csv").read_text() == "step,prefs/labels_given\n1000,500\n"


@pytest.mark.parametrize("case", ["summary behind the checkpoint", "out not empty", "no record"])
def test_export_refuses_with_one_line_and_exit_2(tmp_path, capsys, case):
    run_dir, _ = _run(tmp_path, timesteps=400 if case == "summary behind the checkpoint" else 800)
    out = tmp_path / "out"
    if case == "out not empty":
        out.mkdir()
        (out / "something").write_text("x")
    if case == "no record":
        (run_dir / "curves.png").unlink()
    assert floyd_main(["export", str(run_dir), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("python -m floyd: error:")
    assert {"summary behind the checkpoint": "400 agent steps", "out not empty": "not an empty folder",
            "no record": "no curves.png"}[case] in err
    if case != "out not empty":
        assert not out.exists()


def test_export_includes_the_runs_reward_predictor_in_float32_without_its_optimizer(tmp_path, capsys):
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.checkpoint import load_predictor_weights, save_predictor

    run_dir, _ = _run(tmp_path)
    (run_dir / "config.json").write_text(json.dumps({"env": "MovingDot-v0", "reward": {"batchnorm": False}}))
    rng = np.random.default_rng(0)
    state = {"m0_w0": rng.normal(size=(7, 7, 4, 16)).astype(np.float32), "m0_w1": np.zeros(16, np.float32),
             "m0_adam1_0": np.ones((7, 7, 4, 16), np.float32), "norm_mean": np.array([0.5], np.float32),
             "norm_std": np.array([2.0], np.float32), "adam_t": np.float32(3)}
    save_predictor(RunPaths(run_dir).predictor, state, {"n_members": 1, "version": 4, "steps": 9})
    out = tmp_path / "model"
    assert floyd_main(["export", str(run_dir), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*RECORD, "policy-200.npz", "reward_predictor.npz"])
    weights, meta = load_predictor_weights(out)
    assert meta["weights_only"] and meta["batchnorm"] is False and meta["version"] == 4  # batch norm: from config
    np.testing.assert_array_equal(weights.weights[0][0], state["m0_w0"])  # float32, as trained
    assert weights.norm_mean.tolist() == [0.5] and weights.norm_std.tolist() == [2.0]
    assert "reward_predictor.npz" in capsys.readouterr().out
    # a run with neither a policy nor a predictor: one line
    for path in (run_dir / "checkpoints").iterdir():
        path.unlink()
    RunPaths(run_dir).predictor.unlink()
    assert floyd_main(["export", str(run_dir), "--out", str(tmp_path / "other")]) == 2
    assert "nor has it a reward predictor" in capsys.readouterr().err


def test_a_ppo_policy_exported_keeps_its_observation_normalization_and_acts_the_same(tmp_path):
    """A MuJoCo run's policy (PPO): its float16 copy keeps the observation normalization its network acts on (mean,
    variance and a count of millions, in float32), so watch's numpy policy acts as from the full checkpoint."""
    from drlhp.policy.checkpoint import save_weights_only
    from drlhp.policy.ppo.numpy_policy import BoxMeanPolicy

    rng = np.random.default_rng(0)
    d, a, h = 11, 3, 64
    shapes = [(d, h), (h,), (h, h), (h,), (h, a), (a,)]
    state = {f"weight_{i}": rng.normal(scale=0.3, size=s).astype(np.float32) for i, s in enumerate(shapes)}
    state.update(obs_rms_mean=rng.normal(size=d) * 3, obs_rms_var=rng.uniform(0.01, 50, d), obs_rms_count=2.5e6,
                 weight_6=np.zeros(4, np.float32))  # the critic's, and so on: weights beyond the actor's
    save_weights_only(tmp_path / "policy-9.npz", state, {"timesteps": 9, "algo": "ppo"})
    arrays, meta = load_policy_checkpoint(tmp_path)
    assert meta["weights_only"] and arrays["weight_0"].dtype == np.float16
    assert arrays["obs_rms_count"] == 2.5e6 and arrays["obs_rms_mean"].dtype == np.float32
    low, high = -np.ones(a), np.ones(a)
    full, small = BoxMeanPolicy(state, d, low, high, 10.0), BoxMeanPolicy(arrays, d, low, high, 10.0)
    obs = rng.normal(size=(20, d)) * 3
    np.testing.assert_allclose(small.act_deterministic(obs), full.act_deterministic(obs), atol=2e-2)
    unnormalized = BoxMeanPolicy({k: v for k, v in state.items() if k.startswith("weight_")} | {
        "obs_rms_mean": np.zeros(d), "obs_rms_var": np.ones(d), "obs_rms_count": 1.0}, d, low, high, 10.0)
    assert np.abs(unnormalized.act_deterministic(obs) - full.act_deterministic(obs)).max() > 0.1  # it matters

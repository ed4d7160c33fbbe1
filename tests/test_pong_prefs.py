"""Pong from synthetic preferences, end to end with a tiny budget: the three processes on the real
Atari env (score blanked for the predictor and the labeller), the run completes and writes its
summary. Whether Pong is learned is bench/pong_prefs.sh's measurement, not the suite's."""
import json

import pytest


@pytest.mark.slow
def test_tiny_pong_run_from_synthetic_preferences_completes(cli, tmp_path):
    run_dir = tmp_path / "pong"
    proc = cli("--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--seed", 1, "--n_envs", 4,
               "--million_timesteps", 0.002, "--n_initial_prefs", 8, "--n_initial_epochs", 1, "--n_labels", 8,
               "--segment_length", 25, "--n_predictors", 2, "--reward_batch_size", 4, "--log_interval", 2,
               "--run_dir", run_dir, timeout=420, check=True)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mode"] == "train_policy_with_preferences" and summary["env"] == "PongNoFrameskip-v4"
    assert summary["timesteps"] == 2000
    assert summary["n_preferences"] >= 8 and summary["labels_given"] >= 8
    assert summary["predictor_version"] >= 1  # the policy trained on a published predictor
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"
    assert "[policy]" in proc.stdout and "pretraining on" in proc.stdout

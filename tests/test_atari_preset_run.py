"""A game besides Pong from synthetic preferences on the atari preset, end to end with a tiny budget (issue 59): the
three processes on the real emulator, its score blanked by its own rectangles (envs/score_blanking.py), PPO picked by
the preset, the run finished with a summary. Whether the game is learned: the Atari table (docs/results/atari.md)."""
import json

import pytest


@pytest.mark.slow
def test_tiny_breakout_run_from_synthetic_preferences_on_the_atari_preset_completes(cli, tmp_path):
    run_dir = tmp_path / "breakout"
    proc = cli("--env", "BreakoutNoFrameskip-v4", "--synthetic_prefs", "--seed", 2, "--ppo_n_envs", 4, "--ppo_n_steps",
               50, "--million_timesteps", 0.002, "--n_initial_prefs", 8, "--n_initial_epochs", 1, "--n_labels", 8,
               "--reward_batch_size", 4, "--log_interval", 2, "--run_dir", run_dir, timeout=420, check=True)
    assert "[run] preset atari (the default for BreakoutNoFrameskip-v4" in proc.stdout
    config = json.loads((run_dir / "config.json").read_text())
    assert config["preset"] == "atari" and config["algo"] == "ppo" and config["reward"]["n_members"] == 1
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env"] == "BreakoutNoFrameskip-v4" and summary["timesteps"] == 2000  # 10 updates of 4 x 50
    assert summary["n_preferences"] >= 8 and summary["predictor_version"] >= 1
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"

"""The policy learns, with fixed seeds.

A2C on MovingDot with true rewards, default hyper-parameters: 100k agent steps (16 envs x 5 steps x
1,250 updates), about 1.5 minutes on 2 cores (README, "Learning checks").
MovingDot from synthetic preferences, `make run`'s flags: the agent never sees the reward (README,
"MovingDot from preferences").
"""
import json

import pytest


@pytest.mark.slow
def test_a2c_moves_the_dot_to_the_centre(cli, tmp_path):
    run_dir = tmp_path / "dot"
    cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", 0,
        "--million_timesteps", 0.1, "--run_dir", run_dir, "--log_interval", 10, check=True, timeout=900)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["timesteps"] == 100_000
    assert summary["success_rate_last100"] >= 0.9, summary
    # a random policy gains about 0 per episode; one that walks to the centre gains its start distance
    # (22 on average: MovingDot-v0 starts 10-40 steps away)
    assert summary["true_return_last100"] >= 15, summary


@pytest.mark.slow
def test_moving_dot_learns_from_synthetic_preferences(cli, tmp_path):
    """The paper's loop with no reward given to the agent: `make run`'s configuration (the flags in
    bench/moving_dot_prefs.args), seed 1. The three processes are asynchronous, so the run is not
    bit-for-bit repeatable; README, "MovingDot from preferences", gives the 5-seed measurement."""
    from pathlib import Path

    args = (Path(__file__).resolve().parent.parent / "bench" / "moving_dot_prefs.args").read_text().split()
    run_dir = tmp_path / "dot_prefs"
    cli("--env", "MovingDot-v0", "--synthetic_prefs", "--seed", 1, *args, "--log_interval", 10,
        "--run_dir", run_dir, check=True, timeout=900)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mode"] == "train_policy_with_preferences"
    assert summary["timesteps"] == round(float(args[args.index("--million_timesteps") + 1]) * 1e6)
    assert summary["success_rate_last100"] >= 0.8, summary
    assert summary["true_return_last100"] >= 15, summary

"""The policy learns, with fixed seeds.

A2C on MovingDot with true rewards, default hyper-parameters: 100k agent steps (16 envs x 5 steps x
1,250 updates), about 1.5 minutes on 2 cores (docs/results.md, "learning checks").
MovingDot from synthetic preferences, `make run`'s flags: the agent never sees the reward
(docs/results.md, "MovingDot from preferences").
"""
import json

import pytest

# One run of make run's flags took about 15.5 minutes on a 2-core AMD EPYC with AVX2 only (2026-11-23:
# 14.4 of them pretraining and policy), against 6 on the machine the flags were tuned on: a timeout of
# 3x the slower machine's time, so that a slow CI machine fails only a pipeline that does not learn.
LEARNING_TIMEOUT_S = 2800


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
    """The paper's loop with no reward given to the agent: `make run`'s configuration, which is
    MovingDot's default preset (drlhp/presets.py, "moving-dot"): the command has no other flag. The three
    processes are asynchronous, so a run is not bit-for-bit repeatable, and one run in about ten stalls
    (docs/results.md, "MovingDot from preferences": a clean-clone suite's seed 1 ended at success 0.33).
    So the test passes when seed 1 learns, or, failing that, seed 2: a pipeline that does not learn fails
    both (6 to 17 minutes each, by machine)."""
    import warnings

    from drlhp.presets import preset_flags

    args = preset_flags("moving-dot")
    results = {}
    for seed in (1, 2):
        run_dir = tmp_path / f"dot_prefs_seed{seed}"
        cli("--env", "MovingDot-v0", "--synthetic_prefs", "--seed", seed, "--log_interval", 10,
            "--run_dir", run_dir, check=True, timeout=LEARNING_TIMEOUT_S)
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["mode"] == "train_policy_with_preferences"
        assert summary["timesteps"] == round(float(args[args.index("--million_timesteps") + 1]) * 1e6)
        results[seed] = {k: summary[k] for k in ("success_rate_last100", "true_return_last100",
                                                 "predictor_val_accuracy", "labels_given")}
        if summary["success_rate_last100"] >= 0.8 and summary["true_return_last100"] >= 15:
            break
        warnings.warn(f"MovingDot from preferences, seed {seed} did not learn: {results[seed]}")
    else:
        raise AssertionError(f"neither seed learned (success >= 0.8, true return >= 15): {results}")

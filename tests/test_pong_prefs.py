"""Pong from synthetic preferences, end to end with a tiny budget: the three processes on the real
Atari env (score blanked for the predictor and the labeller), the run completes and writes its
summary. Whether Pong is learned is experiments/pong_prefs.sh's measurement, not the suite's."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXPERIMENTS = Path(__file__).resolve().parent.parent / "experiments"


@pytest.mark.slow
def test_tiny_pong_run_from_synthetic_preferences_completes(cli, tmp_path):
    run_dir = tmp_path / "pong"
    proc = cli("--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--seed", 1, "--ppo_n_envs", 4, "--ppo_n_steps", 50,
               "--million_timesteps", 0.002, "--n_initial_prefs", 8, "--n_initial_epochs", 1, "--n_labels", 8,
               "--segment_length", 25, "--n_predictors", 2, "--reward_batch_size", 4, "--log_interval", 2,
               "--run_dir", run_dir, timeout=420, check=True)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["mode"] == "train_policy_with_preferences" and summary["env"] == "PongNoFrameskip-v4"
    assert summary["timesteps"] == 2000  # 10 PPO updates of 4 envs x 50 steps
    assert json.loads((run_dir / "config.json").read_text())["algo"] == "ppo"  # the preset's pick from preferences
    assert summary["n_preferences"] >= 8 and summary["labels_given"] >= 8
    assert summary["predictor_version"] >= 1  # the policy trained on a published predictor
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"
    assert "[policy]" in proc.stdout and "pretraining on" in proc.stdout
    # the diagnosis script reads the run's database and predictor
    out = subprocess.run([sys.executable, str(EXPERIMENTS / "pong_reward_by_phase.py"), str(run_dir)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "clips" in out.stdout and "point lost" in out.stdout and "return - miss" in out.stdout


def test_phase_of_play_from_frames():
    sys.path.insert(0, str(EXPERIMENTS))
    from pong_reward_by_phase import ball_column, event_windows, phase, returns

    def frame(ball_col=None):
        f = np.full((84, 84), 87, np.uint8)
        f[30:38, 8:10] = 148  # the opponent's paddle
        f[40:48, 74:76] = 147  # the agent's
        if ball_col is not None:
            f[50:52, ball_col:ball_col + 2] = 236
        return f

    assert ball_column(frame()) is None  # paddles are not a ball
    assert ball_column(frame(40)) == 40.5
    assert ball_column(frame(72)) == 72.5  # a ball at the agent's paddle is still a ball
    obs = lambda a, b: np.stack([frame(), frame(), frame(a), frame(b)], axis=-1)  # noqa: E731
    assert phase(obs(None, None)) == "no ball"
    assert phase(obs(None, 30)) == "ball appears"
    assert phase(obs(30, 33)) == "to agent, x 20-39"
    assert phase(obs(65, 62)) == "to opponent, x 60-79"
    # a clip: the ball comes to the agent, turns back at its paddle (a return), later a point is lost
    def clip_of(cols):
        return np.stack([np.stack([frame(), frame(), frame(cols[max(t - 1, 0)]), frame(cols[t])], axis=-1)
                         for t in range(len(cols))])

    cols = [62, 66, 70, 67, 64, None]
    clip = clip_of(cols)
    assert returns(clip) == [3]
    # not returns: a new serve after a miss (the ball jumps to the middle), a ball wiggling in place
    assert returns(clip_of([66, 70, 74, 40, 38, 36])) == []
    assert returns(clip_of([53, 67, 66, 67, 66, 67])) == []
    true = np.array([0, 0, 0, 0, 0, -1], np.float32)
    ev = event_windows(clip, true, window=2)
    assert [w.tolist() for w in ev["return"]] == [[3, 4]] and [w.tolist() for w in ev["miss"]] == [[4, 5]]
    assert [w.tolist() for w in ev["point lost"]] == [[5]] and ev["point won"] == []


def test_campaign_check_reads_the_predictor_accuracy_the_policy_held_at_each_checkpoint():
    """Across sittings the policy's clock restarts, so the predictor's figures are matched by the weights
    version the policy held, not by time (a resumed run once showed its latest accuracy everywhere)."""
    sys.path.insert(0, str(EXPERIMENTS))
    from campaign_check import figures_at

    policy = [{"step": str(s), "policy/predictor_version": str(v), "system/wall_s": str(w),
               "policy/true_return_last100": "-20"} for s, v, w in
              [(100_000, 5, 100.0), (300_000, 20, 300.0), (600_000, 40, 50.0), (1_000_000, 70, 400.0)]]
    reward = ([{"step": str(s), "reward/published_version": "", "reward/val_accuracy": str(a)}
               for s, a in [(25, 0.5), (50, 0.6)]]
              + [{"step": str(s), "reward/published_version": str(v), "reward/val_accuracy": str(a)}
                 for s, v, a in [(100, 10, 0.7), (200, 20, 0.8), (400, 40, 0.85), (800, 70, 0.9), (900, 80, 0.95)]])
    assert figures_at(policy, reward, 300_000)["val_accuracy"] == 0.8
    assert figures_at(policy, reward, 1_000_000)["val_accuracy"] == 0.9  # not 0.95, logged after
    assert figures_at(policy, reward, 2_000_000) is None  # not reached
    before_any = [{**policy[0], "policy/predictor_version": ""}]
    assert figures_at(before_any, reward, 100_000)["val_accuracy"] == 0.6  # pretraining's last evaluation


def test_campaign_check_finds_entropy_shocks_after_2m():
    """H7's signature: the entropy rising by more than 0.3 nats in one log row, or the value mean leaving
    +-1.2; rows before 2M agent steps (the first phase, entropy near its maximum) do not count."""
    sys.path.insert(0, str(EXPERIMENTS))
    from campaign_check import shocks

    rows = [{"step": str(s), "policy/entropy": str(e), "policy/value_mean": str(v), "system/sitting": "3",
             "policy/training_reward_mean": "-0.02"} for s, e, v in
            [(1_900_000, 1.0, 0.1), (1_950_000, 1.7, 0.1), (2_100_000, 1.0, 0.2), (2_200_000, 1.2, 0.3),
             (2_300_000, 1.6, -0.5), (2_400_000, 1.0, -1.5), (2_500_000, 1.0, 1.1)]]
    assert [f["step"] for f in shocks(rows)] == [2_300_000, 2_400_000]

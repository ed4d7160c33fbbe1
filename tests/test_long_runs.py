"""What a long run across sittings needs (issue 19): the learning rate's horizon apart from the budget,
a sitting that ends itself and resumes, milestone copies kept for good, the reward's figures around
points, Pong's rallies counted, and the predictor's normalization as one object."""
import json
import types

import numpy as np
import pytest

from drlhp.config import RunConfig
from drlhp.policy.reward_figures import RewardFigures
from drlhp.reward.norm import RewardNorm
from envs.pong_events import AGENT_SIDE, ReturnCounter, ball_columns


def _frame(ball_col: int | None, row: int = 40) -> np.ndarray:
    """An 84x84 Pong-like frame: both paddles (tall bright runs) and, where given, a 2x1 ball."""
    f = np.full((84, 84), 87, np.uint8)
    f[30:38, 8:10] = 147  # the opponent's paddle
    f[50:58, 72:74] = 147  # the agent's paddle
    if ball_col is not None:
        f[row:row + 2, ball_col] = 236
    return f


def test_ball_columns_ignore_paddles_and_find_the_ball():
    cols = ball_columns(np.stack([_frame(40), _frame(None), _frame(70)]))
    assert cols[0] == 40 and np.isnan(cols[1]) and cols[2] == 70


def test_return_counter_counts_a_turn_on_the_agents_side_once_per_game():
    rc = ReturnCounter(2)
    path = [60, 63, 66, 69, 66, 63, 60, 57]  # worker 0: comes in, turns back at 69: one return
    far = [20, 23, 26, 29, 26, 23, 20, 17]  # worker 1: the same turn far from the agent: none
    for a, b in zip(path, far):
        counts = rc.update(np.stack([_frame(a), _frame(b)]), np.array([False, False]))
    assert counts.tolist() == [1, 0]
    assert path[3] >= AGENT_SIDE
    # a jump (a serve) is no return; the game's end reports the count and starts the next game from 0
    for c in (70, 40, 30, 20):
        counts = rc.update(np.stack([_frame(c), _frame(c)]), np.array([False, False]))
    assert counts.tolist() == [1, 0]
    counts = rc.update(np.stack([_frame(10), _frame(10)]), np.array([True, False]))
    assert counts.tolist() == [1, 0]
    counts = rc.update(np.stack([_frame(10), _frame(10)]), np.array([False, False]))
    assert counts.tolist() == [0, 0]


def test_reward_norm_update_apply_and_clipped_share():
    norm = RewardNorm(2, target_std=0.05, clip=3.0)
    raw = np.array([[0.0, 1.0, 2.0, 3.0], [10.0, 10.0, 12.0, 12.0]])
    norm.update(raw)
    np.testing.assert_allclose(norm.mean, [1.5, 11.0])
    np.testing.assert_allclose(norm.std, [np.sqrt(1.25), 1.0], rtol=1e-6)
    r = norm.apply(raw)
    z = (raw - norm.mean[:, None]) / norm.std[:, None]
    np.testing.assert_allclose(r, z.mean(axis=0) * 0.05, rtol=1e-5)
    assert norm.clipped_share == 0.0
    r = norm.apply(np.array([[1.5 + 10 * np.sqrt(1.25)], [11.0]]))  # member 0 at 10 std: cut to 3
    assert norm.clipped_share == 0.5
    np.testing.assert_allclose(r, [(3.0 + 0.0) / 2 * 0.05], rtol=1e-5)
    norm.update(raw + 1.0, momentum=0.5)  # blended: half way to the new mean
    np.testing.assert_allclose(norm.mean, [2.0, 11.5])


def test_reward_figures_around_points():
    rewards = np.zeros((6, 2), np.float32)
    true = np.zeros((6, 2), np.float32)
    true[4, 0] = -1  # worker 0 concedes at t=4: t=2,3,4 are "before a point lost"
    rewards[2:5, 0] = -0.1
    true[1, 1] = 1  # worker 1 scores at t=1
    rewards[1, 1] = 0.3
    figures = RewardFigures(types.SimpleNamespace(clipped_share=0.25))
    figures.on_rollout(types.SimpleNamespace(rewards=rewards, true_rewards=true), None)
    m = figures.metrics()
    assert m["reward/before_point_lost"] == pytest.approx(-0.1)
    assert m["reward/at_point_won"] == pytest.approx(0.3)
    assert m["reward/points_won"] == 1 and m["reward/points_lost"] == 1
    assert m["reward/clipped_share"] == 0.25
    assert m["reward/mean"] == pytest.approx((0.3 - 0.3) / 12, abs=1e-7)
    assert figures.metrics() == {}  # per interval: nothing new, nothing reported


def test_learning_rate_horizon_is_apart_from_the_budget():
    assert RunConfig(million_timesteps=4).lr_horizon_timesteps == 4_000_000
    assert RunConfig(million_timesteps=4, lr_horizon_million_timesteps=80).lr_horizon_timesteps == 80_000_000


ARGS = ["train_policy_with_original_rewards", "--env", "MovingDot-v0", "--preset", "none", "--n_envs", 4,
        "--million_timesteps", 1, "--lr_horizon_million_timesteps", 80, "--milestone_million_timesteps", 0.0002,
        "--log_interval", 1, "--seed", 1]


@pytest.mark.slow
def test_a_sitting_ends_itself_saved_keeps_milestones_and_resumes(cli, tmp_path):
    """--stop_after_hours ends the sitting as Ctrl-C does but with status "stopped" and exit 0; milestones
    (float16 weights) stay; the same command resumes without --resume_with_changes, even with another
    time limit; a milestone loads as a policy (watch). Sittings of 20 and 15 s: a milestone comes every 200
    steps, a fraction of a second of training on an idle machine, so a loaded one still makes several."""
    run_dir = tmp_path / "run"
    first = cli(*ARGS, "--stop_after_hours", 20 / 3600, "--run_dir", run_dir, timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "stopped after --stop_after_hours" in first.stdout
    assert json.loads((run_dir / "status.json").read_text())["status"] == "stopped"
    steps_1 = json.loads((run_dir / "summary.json").read_text())["timesteps"]
    assert 0 < steps_1 < 1_000_000
    milestones = sorted((run_dir / "milestones").glob("policy-*.npz"))
    assert milestones, "no milestone copies"
    with np.load(milestones[0], allow_pickle=False) as data:
        weights = [k for k in data.files if k.startswith("weight_")]
        assert weights and all(data[k].dtype == np.float16 for k in weights)
        assert not any(k.startswith("rms_") for k in data.files)
    second = cli(*ARGS, "--stop_after_hours", 15 / 3600, "--run_dir", run_dir, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resumed from" in second.stdout
    assert json.loads((run_dir / "summary.json").read_text())["timesteps"] > steps_1
    assert len(list((run_dir / "milestones").glob("policy-*.npz"))) > len(milestones)  # none deleted
    watched = cli("watch", "--env", "MovingDot-v0", "--load_policy_ckpt_dir", milestones[0], "--run_dir",
                  tmp_path / "watch", "--video", tmp_path / "w.gif", timeout=300)
    assert watched.returncode == 0, watched.stderr[-3000:]

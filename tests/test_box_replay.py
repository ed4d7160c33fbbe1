"""experiments/box_replay.py: a MuJoCo run's final policy replayed as it played in training (numpy alone), the
loop mujoco_replay_returns.py and halfcheetah_pose.py share; on the committed models/hopper-prefs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "experiments"))

from box_replay import ReplayPolicy, replay_steps  # noqa: E402
from envs.fixed_length import fixed_length_env  # noqa: E402

MODEL = REPO / "models" / "hopper-prefs"


def _episode(deterministic: bool, seed: int):
    env = fixed_length_env("Hopper-v5")
    try:
        policy = ReplayPolicy(MODEL, env, deterministic=deterministic)
        steps = [(reward, info["reward_task"], ended) for reward, info, ended in replay_steps(env, policy, 1, seed)]
    finally:
        env.close()
    return policy, np.array([s[0] for s in steps]), [s[2] for s in steps]


def test_one_episode_is_the_tasks_fixed_length_and_the_spread_is_the_checkpoints():
    policy, rewards, ended = _episode(False, 100)
    assert len(rewards) == 1000 and ended == [False] * 999 + [True]  # fixed-length: ends on the 1,000th step only
    assert policy.timesteps and policy.timesteps > 900_000 and policy.std.shape == (3,) and np.all(policy.std > 0)
    assert rewards.sum() > 1000  # a trained hopper (the model's record: a ratio of 0.96 to the baseline)


def test_sampled_play_repeats_by_its_seed_and_differs_from_the_mean_which_ignores_it():
    _, sampled, _ = _episode(False, 100)
    _, again, _ = _episode(False, 100)
    np.testing.assert_array_equal(sampled, again)
    _, mean_a, _ = _episode(True, 100)
    assert not np.allclose(sampled[:50], mean_a[:50])  # the spread acts from the first steps
    env = fixed_length_env("Hopper-v5")
    try:  # the mean alone: the generator's draws change nothing
        policy = ReplayPolicy(MODEL, env, deterministic=True)
        obs, _ = env.reset(seed=1)
        a1, a2 = policy.act(obs, np.random.default_rng(0)), policy.act(obs, np.random.default_rng(9))
    finally:
        env.close()
    np.testing.assert_array_equal(a1, a2)
    assert np.all(np.abs(a1) <= 1.0)

"""envs/fixed_length.py: a fall costs reward and ends no episode; tasks that never end early pass through."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")

from envs.fixed_length import (  # noqa: E402
    FALL_PENALTY,
    FALLING_ENV_IDS,
    NEVER_ENDING_ENV_IDS,
    describe,
    episode_length,
    fixed_length_env,
    fixed_length_vector_env,
)


def run_episode(env, seed: int, action_fn):
    """One whole episode: (length, rewards, infos, terminated flags)."""
    env.reset(seed=seed)
    rewards, infos, terminated = [], [], []
    while True:
        obs, reward, term, trunc, info = env.step(action_fn())
        rewards.append(reward)
        infos.append(info)
        terminated.append(term)
        if term or trunc:
            return len(rewards), np.array(rewards), infos, terminated


@pytest.mark.parametrize("env_id", ["Hopper-v5", "Walker2d-v5", "InvertedPendulum-v5", "CartPole-v1"])
def test_a_fall_costs_reward_and_ends_no_episode(env_id):
    env = fixed_length_env(env_id)
    env.action_space.seed(0)
    length, rewards, infos, terminated = run_episode(env, seed=0, action_fn=env.action_space.sample)
    assert length == episode_length(env_id)  # the fixed length, though random actions fall many times
    assert not any(terminated)
    fell = np.array([info["fell"] for info in infos])
    assert fell.sum() >= 3, f"random actions should fall several times in {length} steps"
    assert infos[-1]["falls"] == fell.sum()
    # the penalty is on the falling steps and only there: each such reward is at least 100 below any other
    assert rewards[fell].max() <= rewards[~fell].min() - FALL_PENALTY + 20
    assert all(np.isclose(info["reward_env"], r) for info, r in zip(infos, rewards))
    for info in (i for i in infos if i["fell"]):
        assert info["fall_observation"].shape == env.observation_space.shape


def test_hopper_is_put_back_upright_after_a_fall():
    env = fixed_length_env("Hopper-v5")
    env.reset(seed=1)
    for _ in range(200):
        obs, reward, term, trunc, info = env.step(np.zeros(3, np.float32) - 1.0)  # flails: falls quickly
        if info["fell"]:
            break
    assert info["fell"] and not term
    z_after = env.unwrapped.data.qpos[1]
    assert 1.2 < z_after < 1.3  # the fresh start's height (1.25), not the fallen robot's (< 0.7)
    assert not np.allclose(obs, info["fall_observation"])


def test_the_task_reward_has_no_control_cost():
    env = fixed_length_env("Hopper-v5")
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(np.ones(3, np.float32))
    assert info["reward_ctrl"] < 0
    assert info["reward_task"] == pytest.approx(info["reward_env"] - info["reward_ctrl"])
    assert info["reward_task"] == pytest.approx(info["reward_forward"] + info["reward_survive"])


@pytest.mark.parametrize("env_id", NEVER_ENDING_ENV_IDS)
def test_tasks_that_never_end_early_pass_through(env_id, tmp_path, monkeypatch):
    import gymnasium as gym

    monkeypatch.chdir(tmp_path)  # MuJoCo writes MUJOCO_LOG.TXT (Swimmer's deprecated settotalmass) where it runs

    plain, wrapped = gym.make(env_id), fixed_length_env(env_id)
    plain.reset(seed=3)
    wrapped.reset(seed=3)
    action = plain.action_space.sample()
    a = plain.step(action)
    b = wrapped.step(action)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1] and b[4]["reward_env"] == a[1] and not b[4]["fell"]
    assert b[4]["reward_task"] == pytest.approx(a[1] - a[4]["reward_ctrl"])
    assert "never ends early" in describe(env_id)


def test_every_env_the_issue_names_is_covered():
    for env_id in ("Hopper-v5", "Walker2d-v5", "Ant-v5", "InvertedPendulum-v5", "InvertedDoublePendulum-v5",
                   "CartPole-v1"):
        assert env_id in FALLING_ENV_IDS
        assert "a fall costs 100 reward" in describe(env_id)
    with pytest.raises(ValueError, match="not known"):
        fixed_length_env("Humanoid-v5")


def test_the_vector_env_ends_every_episode_at_the_fixed_length():
    envs = fixed_length_vector_env("InvertedPendulum-v5", n_envs=3)
    envs.reset(seed=0)
    ends = []
    for t in range(1, 2 * 1000 + 1):
        _, _, term, trunc, info = envs.step(envs.action_space.sample())
        assert not term.any()
        if trunc.any():
            assert trunc.all()
            assert info["final_obs"][0].shape == (4,)
            ends.append(t)
    assert ends == [1000, 2000]


def test_env_kwargs_reach_the_env_hopper_flipped_is_no_fall():
    """A goal's env kwargs (pref_interface/goals.py: the backflip's terminate_when_unhealthy=False) reach
    gymnasium through every maker: the torso pitched far past Hopper's healthy +-0.2 rad is no fall."""
    kwargs = {"terminate_when_unhealthy": False}
    env = fixed_length_env("Hopper-v5", **kwargs)
    assert env.unwrapped._terminate_when_unhealthy is False
    length, rewards, infos, terminated = run_episode(env, seed=0, action_fn=lambda: np.ones(3, np.float32))
    assert length == episode_length("Hopper-v5") and not any(terminated)
    assert not any(info["fell"] for info in infos)
    assert not env.unwrapped.is_healthy  # it did leave the healthy range: with the default it would have fallen
    assert "nothing is a fall" in describe("Hopper-v5", make_kwargs=kwargs)
    assert "a fall costs" in describe("Hopper-v5")
    vec = fixed_length_vector_env("Hopper-v5", 2, **kwargs)
    assert all(e.unwrapped._terminate_when_unhealthy is False for e in vec.envs)
    with pytest.raises(TypeError):
        fixed_length_env("HalfCheetah-v5", **kwargs)  # a kwarg the env does not take is gymnasium's error

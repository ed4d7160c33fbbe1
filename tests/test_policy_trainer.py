from dataclasses import replace

import numpy as np
import pytest

import envs
from drlhp.policy.rollout import RolloutRunner
from drlhp.policy.trainer import env_seed, episode_ends_for


def test_env_seed_is_the_run_seed_then_new_31_bit_seeds_on_resume():
    assert env_seed(7, 0, 16) == 7
    resumed = [env_seed(7, u, 16) for u in (1, 25_000, 10**7)]
    assert len(set(resumed)) == 3 and 7 not in resumed
    assert all(0 <= s < 2**31 - 16 for s in resumed), "ale-py takes C ints; worker i adds i"
    assert env_seed(7, 25_000, 16) == env_seed(7, 25_000, 16)


class _ConstantReward:
    """Reward 1 on every step (a stand-in for a learned reward with a positive offset)."""

    name = "predicted"

    def rewards(self, obs, true_rewards):
        return np.ones(true_rewards.shape, np.float32)


class _ZeroValue:
    def value(self, obs):
        return np.zeros(len(obs), np.float32)


@pytest.mark.parametrize("episode_ends", [True, False])
def test_episode_ends_stop_the_returns_only_when_asked(episode_ends):
    """With episode_ends off (the paper, on the predictor's reward) the returns run on through a reset:
    an episode's end is not a terminal state to seek or avoid."""
    env = envs.make_vec_env("MovingDot-v0", 2)
    runner = RolloutRunner(env, _ZeroValue(), _ConstantReward(), 250, 0.9, seed=0, episode_ends=episode_ends)
    rollout = runner.run(random_actions=True)  # 250 steps: every worker's 200-step episode ends
    returns = rollout.b_returns.reshape(250, 2)
    t, w = np.argwhere(rollout.dones)[0]
    assert t < 240
    if episode_ends:
        assert returns[t, w] == pytest.approx(1.0)  # nothing flows back over the end
    else:
        assert returns[t, w] == pytest.approx((1 - 0.9 ** (250 - t)) / (1 - 0.9), rel=1e-4)


def test_auto_cuts_returns_with_original_rewards_and_not_with_the_predictors():
    from drlhp.config import RunConfig
    from drlhp.policy.reward_source import ClippedEnvReward

    def decided(source, setting="auto"):
        cfg = RunConfig(mode="train_policy_with_original_rewards", env="MovingDot-v0")
        cfg = replace(cfg, a2c=replace(cfg.a2c, episode_ends=setting))
        return episode_ends_for(cfg, source)

    assert decided(ClippedEnvReward()) is True
    assert decided(_ConstantReward()) is False
    assert decided(_ConstantReward(), "on") is True and decided(ClippedEnvReward(), "off") is False


def test_reward_centering_removes_the_running_mean_and_follows_a_jump_in_the_offset():
    """--reward_center_steps: the policy's reward loses its running mean (an exponential average over about
    center_steps agent steps), so a jump in the predictor's offset at a publication reaches the value
    function as a decaying transient, while the differences between steps are kept."""
    from drlhp.config import RewardConfig
    from drlhp.policy.reward_figures import RewardFigures
    from drlhp.policy.reward_source import PredictedReward

    source = PredictedReward((84, 84, 4), RewardConfig(n_members=1, batchnorm=False, center_steps=400), seed=0)
    source.ensemble.version = 1  # as if weights had arrived
    level = {"offset": 0.3}
    pattern = np.tile(np.array([0.0, 0.1], np.float32), 20)  # 40 steps: 5 steps x 8 envs
    source.ensemble.reward = lambda obs: level["offset"] + pattern
    obs, true = np.zeros((5, 8, 84, 84, 4), np.uint8), np.zeros((5, 8), np.float32)
    r = source.rewards(obs, true)
    assert r.shape == (5, 8) and r.dtype == np.float32
    assert abs(r.mean()) < 1e-6 and np.allclose(r.reshape(-1)[1] - r.reshape(-1)[0], 0.1)  # the first: its own mean
    level["offset"] = -0.2  # a publication moved the offset by -0.5
    means = [source.rewards(obs, true).mean() for _ in range(30)]
    w = 40 / 400
    assert np.isclose(means[0], -0.5 * (1 - w), atol=1e-5)  # the average moved a tenth of the way
    assert np.isclose(means[9], -0.5 * (1 - w) ** 10, atol=1e-5) and abs(means[-1]) < 0.03
    figures = RewardFigures(source)
    figures.on_rollout(type("R", (), {"rewards": source.rewards(obs, true), "true_rewards": true})(), None)
    assert np.isclose(figures.metrics()["reward/center_offset"], source.offset)
    off = PredictedReward((84, 84, 4), RewardConfig(n_members=1, batchnorm=False), seed=0)  # the default: not centred
    off.ensemble.version, off.ensemble.reward = 1, source.ensemble.reward
    assert np.isclose(off.rewards(obs, true).mean(), -0.2 + 0.05) and off.offset is None

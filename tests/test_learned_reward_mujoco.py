"""drlhp.LearnedReward on a MuJoCo predictor (issue 39): a Box-action env's predictor scores x_t = (o_t, clip(a_t)),
float32, as PPO's rollouts fed it; through gymnasium, and for our PPO with no predictor process (--no_labelling).

    wrapper   Hopper-v5 steps of random actions (some outside the bounds) through the wrapper are paid what the
              trained predictor pays the same (observation, clipped action) rows; the env's own reward in info;
              the vector wrapper pays each worker what one wrapper does; a Hopper predictor on another env, and a
              step before reset, are clear errors
    PPO       (slow) train_policy_with_preferences --no_labelling on the saved predictor: PPO on its reward, in this
              process, logging the task's true return for the ratio to the baseline
    models    a run exported by ``floyd export`` (float16 policy with its observation normalization) replays in watch
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mujoco")

from drlhp.learned_reward import (  # noqa: E402
    TRUE_REWARD_KEY,
    LearnedReward,
    LearnedRewardError,
    LearnedRewardVector,
    SavedPredictor,
)
from drlhp.runtime.tf_setup import configure_tensorflow  # noqa: E402

configure_tensorflow(1, 1)

HOPPER = "Hopper-v5"
D, A, T = 11, 3, 20  # Hopper's observation and action lengths; clip length


def _config(run_dir: Path, *args) -> None:
    """config.json as a run records it."""
    from drlhp.config import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args([str(a) for a in args]))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(cfg.to_dict()))


def _hopper_clips(n: int, seed: int):
    """``n`` clips of T steps of random actions in Hopper: x_t = (o_t, clipped a_t) float32 (n, T, D + A), and the
    env's reward (n, T)."""
    env = gym.make(HOPPER)
    rng = np.random.default_rng(seed)
    xs, rs = np.zeros((n, T, D + A), np.float32), np.zeros((n, T), np.float32)
    obs, _ = env.reset(seed=seed)
    for i in range(n):
        for t in range(T):
            action = rng.uniform(-1, 1, A)
            xs[i, t, :D], xs[i, t, D:] = obs, action
            obs, rs[i, t], terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                obs, _ = env.reset()
    env.close()
    return xs, rs


@pytest.fixture(scope="module")
def hopper_run(tmp_path_factory):
    """A tiny Hopper run directory: a predictor of 2 members (the paper's MLP, no batch norm) trained for a few steps
    on oracle-labelled clips of random play and saved with the project's own code, and the run's config.json; and
    the trained ensemble, to score rows with."""
    from drlhp.config import RewardConfig
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer
    from drlhp.runtime.messages import MU_LEFT, MU_RIGHT, Preference, Segment
    from drlhp.runtime.run_paths import RunPaths

    run_dir = tmp_path_factory.mktemp("hopper") / "run"
    xs, rs = _hopper_clips(12, seed=0)
    db = PrefDB(max_prefs=1000, seed=0)
    segments = [Segment(x, np.zeros((T, 0, 0), np.uint8), r, HOPPER, 0, i * T).check()
                for i, (x, r) in enumerate(zip(xs, rs))]
    for i in range(len(segments)):
        for j in range(i + 1, len(segments)):
            a, b = segments[i], segments[j]
            db.add(Preference(a, b, MU_LEFT if a.true_return > b.true_return else MU_RIGHT).check())
    _config(run_dir, "--env", HOPPER, "--synthetic_prefs", "--n_predictors", 2, "--no-reward_batchnorm",
            "--reward_dropout", 0, "--reward_batch_size", 8)
    cfg = RewardConfig(n_members=2, batchnorm=False, dropout=0.0, batch_size=8, bfloat16="off")
    trainer = RewardTrainer((D + A,), cfg, db, threading.Lock(), seed=0, obs_dtype=np.float32)
    for _ in range(20):
        trainer.train_step()
    trainer.publish()
    trainer.save(RunPaths(run_dir).predictor)
    return run_dir, trainer.ensemble


def _rows(obs, action, low=-1.0, high=1.0):
    return np.concatenate([np.asarray(obs, np.float32), np.clip(np.asarray(action, np.float32), low, high)])


def test_hopper_steps_are_paid_what_the_predictor_pays_their_observation_and_clipped_action(hopper_run):
    run_dir, ensemble = hopper_run
    env, mirror = LearnedReward(gym.make(HOPPER), run_dir), gym.make(HOPPER)
    assert env.predictor.takes_actions and env.predictor.env_id == HOPPER
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=3)
    mirror.reset(seed=3)
    rows, unclipped, paid = [], [], []
    for _ in range(150):  # random play falls within tens of steps: several episodes, each reset
        action = rng.uniform(-1.5, 1.5, A)  # a third outside the bounds: the env clips, and so did the rollouts
        rows.append(_rows(obs, action))
        unclipped.append(np.concatenate([obs, action]).astype(np.float32))
        obs, reward, terminated, truncated, info = env.step(action)
        _, true_reward, *_ = mirror.step(action)
        assert info[TRUE_REWARD_KEY] == true_reward and reward != true_reward  # the env's own, kept in info
        paid.append(reward)
        if terminated or truncated:
            obs, _ = env.reset()
            mirror.reset()
    expected = ensemble.reward(np.stack(rows))
    np.testing.assert_allclose(paid, expected, rtol=1e-5, atol=1e-6)
    assert np.std(expected) > 1e-3  # the steps are told apart
    assert not np.allclose(ensemble.reward(np.stack(unclipped)), expected, atol=1e-4)  # the clip matters
    assert SavedPredictor(run_dir).rewards(np.stack(rows)).dtype == np.float32


def test_the_vector_wrapper_pays_each_hopper_worker_what_one_wrapper_pays(hopper_run):
    from gymnasium.vector import SyncVectorEnv

    run_dir, _ = hopper_run
    predictor = SavedPredictor(run_dir)
    vec = LearnedRewardVector(SyncVectorEnv([lambda: gym.make(HOPPER)] * 2), predictor)  # NEXT_STEP autoreset
    singles = [LearnedReward(gym.make(HOPPER), predictor) for _ in range(2)]
    vec.reset(seed=0)
    for i, env in enumerate(singles):
        env.reset(seed=i)
    rng = np.random.default_rng(1)
    resetting, resets = np.zeros(2, bool), 0
    for _ in range(80):
        actions = rng.uniform(-1, 1, (2, A))
        _, rewards, terminated, truncated, info = vec.step(actions)
        for i, env in enumerate(singles):
            if resetting[i]:  # this step was the reset: paid 0
                env.reset()
                assert rewards[i] == 0.0
                resets += 1
                continue
            _, reward, term, trunc, single_info = env.step(actions[i])
            assert (term, trunc) == (terminated[i], truncated[i])
            assert info[TRUE_REWARD_KEY][i] == single_info[TRUE_REWARD_KEY]
            np.testing.assert_allclose(rewards[i], reward, rtol=1e-5, atol=1e-6)
        resetting = terminated | truncated
    assert resets >= 2  # random play falls: episodes end and start again within the 80 steps


def test_a_hopper_predictor_elsewhere_or_stepped_before_reset_is_a_clear_error(hopper_run):
    run_dir, _ = hopper_run
    with pytest.raises(LearnedRewardError, match=r"scores 14 values a step .*; this env has 17 \+ 6"):
        LearnedReward(gym.make("Walker2d-v5"), run_dir)
    with pytest.raises(LearnedRewardError, match="scores \\(observation, action\\) vectors of a Box-action env"):
        LearnedReward(gym.make("CartPole-v1"), run_dir)
    with pytest.raises(gym.error.ResetNeeded):
        LearnedReward(gym.make(HOPPER), run_dir).step(np.zeros(A))


@pytest.mark.slow
def test_our_ppo_trains_on_the_saved_predictor_with_no_predictor_process(cli, hopper_run, tmp_path):
    """train_policy_with_preferences --no_labelling: PPO on the saved predictor's reward in this process (no
    labeller, no predictor training), its true and task returns logged for the ratio to PPO's baseline."""
    run_dir, _ = hopper_run
    out = tmp_path / "ppo"
    proc = cli("--env", HOPPER, "--no_labelling", "--load_reward_predictor_ckpt_dir", run_dir, "--run_dir", out,
               "--million_timesteps", "0.004096", "--ppo_n_envs", 2, "--ppo_n_steps", 1024, "--seed", 0, timeout=540,
               check=True)
    assert "--no_labelling" in proc.stdout and "PPO on the predictor's reward" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["algo"] == "ppo" and summary["no_labelling"] and summary["timesteps"] >= 4096, summary
    assert summary["predictor_version"] >= 1, summary
    header = (out / "progress.csv").read_text().splitlines()[0].split(",")
    assert any("task_return_last100" in h for h in header), header

"""Any registered gymnasium env whose spaces fit (envs/gym_vec_env.py): CartPole accepted and run end to
end through the preference path; envs that do not fit refused in one line, exit 2, before anything
starts; MovingDot-v1 (gymnasium's TimeLimit) against MovingDot-v0."""
import json

import gymnasium as gym
import numpy as np
import pytest

import envs
from envs.gym_vec_env import BAR_HEIGHT, VectorQuantizer, bar_frames, spaces_problem


def test_cartpole_is_accepted_as_a_float_vector_env():
    envs.check_env_id("CartPole-v1")
    assert envs.is_valid_env_id("CartPole-v1") and envs.frames_per_agent_step("CartPole-v1") == 1
    assert envs.observation_shape("CartPole-v1") == (4,)
    vec = envs.make_vec_env("CartPole-v1", 3)
    try:
        obs = vec.reset(seed=0)
        assert obs.shape == (3, 4) and obs.dtype == np.float32 and vec.n_actions == 2
        finished = []
        for t in range(300):
            step = vec.step(np.full(3, t % 2 if t < 100 else 0))
            finished += step.finished
            assert step.obs.dtype == np.float32 and step.true_reward.dtype == np.float32
        # CartPole pays 1 per step: an episode's true return is its length; no success in CartPole
        assert finished and all(ep.true_return == ep.length and ep.success is None for ep in finished)
        view = vec.predictor_view(step.outcome_obs)  # what the predictor and a labeller see: one byte each
        assert view.dtype == np.uint8 and view.shape == (3, 4)
        frames = vec.frames_to_watch(view[None])  # (T, N, D) -> (T, N, H, W) bar charts
        assert frames.dtype == np.uint8 and frames.shape[:3] == (1, 3, BAR_HEIGHT)
        np.testing.assert_array_equal(vec.frames_to_watch(step.obs), vec.frames_to_watch(vec.predictor_view(step.obs)))
    finally:
        vec.close()


@pytest.mark.parametrize("rule, cost", [("reset", 100.0), ("penalty", 1.0)])
def test_cartpole_for_preferences_has_fixed_length_episodes_where_a_fall_costs_reward(rule, cost):
    """make_vec_env(falls=...) (the preference modes, issue 39): CartPole's episode no longer ends on a fall; every
    episode is 500 steps, and a fall is reward, 100 once (the reset rule) or 1 a step out of range (penalty)."""
    falls = {"fall_penalty": 100.0, "fall_rule": rule, "fall_step_penalty": 1.0}
    vec = envs.make_vec_env("CartPole-v1", 2, falls=falls)
    plain = envs.make_vec_env("CartPole-v1", 2)
    try:
        assert vec.fixed_length and not plain.fixed_length
        vec.reset(seed=0)
        rewards, finished = [], []
        for t in range(500):
            step = vec.step(np.zeros(2, np.int64))  # always left: the pole falls within a few dozen steps
            assert not step.terminated.any() and step.truncated.all() == (t == 499)
            rewards.append(step.true_reward)
            finished += step.finished
        rewards = np.array(rewards)
        assert [ep.length for ep in finished] == [500, 500]
        fallen = rewards < 1.0
        assert fallen[:5].sum() == 0 and fallen.sum() >= 2  # upright at first, then falls
        if rule == "reset":  # each fall one step 100 lower, then the pole stands again
            assert set(np.unique(rewards)) == {1.0, 1.0 - cost} and fallen.sum() >= 10
        else:  # out of range from its first fall on: gymnasium pays 1 on that step and 0 after, less 1 a step
            assert set(np.unique(rewards)) <= {1.0, 0.0, -1.0} and fallen[-1].all()
        assert [ep.true_return for ep in finished] == pytest.approx(rewards.sum(0))
        # without falls (any env but the falling ones, or no falls given): gymnasium's episodes, as before
        plain.reset(seed=0)
        ended = any(plain.step(np.zeros(2, np.int64)).terminated.any() for _ in range(100))
        assert ended
    finally:
        vec.close()
        plain.close()


def test_vector_quantizer_is_linear_within_finite_bounds_and_tanh_beyond():
    space = gym.spaces.Box(np.array([-2.0, -np.inf], np.float32), np.array([2.0, np.inf], np.float32))
    q = VectorQuantizer(space)
    x = np.array([[-2.0, 0.0], [0.0, -50.0], [2.0, 50.0], [9.0, 1.0]], np.float32)
    np.testing.assert_array_equal(q(x), [[0, 128], [128, 0], [255, 255], [255, round(255 * (1 + np.tanh(1)) / 2)]])
    bars = bar_frames(q(x))
    assert bars.shape[:2] == (4, BAR_HEIGHT) and bars[1].max() == 255


@pytest.mark.parametrize("space, words", [
    (gym.spaces.Box(-1, 1, (1,)), "continuous actions (Box) are not supported"),
    (gym.spaces.MultiDiscrete([2, 2]), "MultiDiscrete actions are not supported"),
])
def test_actions_that_do_not_fit(space, words):
    assert words in spaces_problem(space, gym.spaces.Box(-1, 1, (3,)))


@pytest.mark.parametrize("obs_space, words", [
    (gym.spaces.Discrete(16), "Discrete observations are not supported"),
    (gym.spaces.Box(0, 255, (5,), np.uint8), "vector observations of dtype uint8"),
    (gym.spaces.Box(0, 1, (8, 8, 3), np.float32), "image observations of dtype float32"),
    (gym.spaces.Box(0, 1, (2, 2, 2, 2), np.float32), "observations of shape (2, 2, 2, 2)"),
])
def test_observations_that_do_not_fit(obs_space, words):
    assert words in spaces_problem(gym.spaces.Discrete(2), obs_space)


def test_spaces_that_fit():
    assert spaces_problem(gym.spaces.Discrete(3, start=-1), gym.spaces.Box(-1, 1, (6,), np.float64)) is None
    assert spaces_problem(gym.spaces.Discrete(3), gym.spaces.Box(0, 255, (84, 84), np.uint8)) is None
    assert spaces_problem(gym.spaces.Discrete(3), gym.spaces.Box(0, 255, (84, 84, 3), np.uint8)) is None


def test_unknown_and_unsupported_ids():
    with pytest.raises(envs.UnknownEnvError):
        envs.check_env_id("CartPole-v9")
    with pytest.raises(envs.UnsupportedEnvError, match="FrozenLake-v1: Discrete observations are not supported"):
        envs.check_env_id("FrozenLake-v1")


def test_pendulum_labelled_by_a_person_is_one_line_exit_2_before_anything_starts(cli, tmp_path):
    """A person sees only MuJoCo clips, drawn from the simulator's states (issue 30): Pendulum is no MuJoCo env, so
    the window (the default labeller) is refused before anything starts; the synthetic oracle may label it."""
    proc = cli("train_policy_with_preferences", "--env", "Pendulum-v1", "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["run.py: error: Pendulum-v1 has continuous actions and is not a MuJoCo env: --labeller window "
                     "shows a person only MuJoCo clips (drawn from the simulator's states); --synthetic_prefs labels "
                     "it (the synthetic oracle)"]
    assert not (tmp_path / "run").exists()


def test_list_envs_says_any_discrete_gymnasium_env_runs(cli):
    out = cli("--list_envs", check=True).stdout
    assert "MovingDot-v1" in out.split() and "any other registered gymnasium id with a Discrete action space" in out


def test_moving_dot_v1_is_v0_with_gymnasiums_time_limit():
    v0, v1 = gym.make("MovingDot-v0"), gym.make("MovingDot-v1")
    assert v0.spec.max_episode_steps is None and v1.spec.max_episode_steps == 200
    assert v1.unwrapped.time_limit is None and v0.unwrapped.time_limit == 200
    o0, _ = v0.reset(seed=4)
    o1, _ = v1.reset(seed=4)
    np.testing.assert_array_equal(o0, o1)
    for step in range(1, 201):
        r0, r1 = v0.step(0), v1.step(0)  # noop: truncated at step 200 by the env (v0) or TimeLimit (v1)
        np.testing.assert_array_equal(r0[0], r1[0])
        assert r0[1:4] == r1[1:4] == (0.0, False, step == 200)
    assert gym.make("MovingDot-v1", max_episode_steps=7).spec.max_episode_steps == 7


@pytest.mark.slow
def test_tiny_cartpole_preference_pipeline_end_to_end(cli, tmp_path):
    """The same three processes, segments, oracle and predictor as MovingDot: a vector env's clips reach
    the predictor as bytes and the labeller as bar charts; the `cartpole` preset's choice from preferences (H40:
    PPO, the penalty rule)."""
    run_dir = tmp_path / "run"
    proc = cli("--env", "CartPole-v1", "--synthetic_prefs", "--seed", 1, "--million_timesteps", 0.003,
               "--ppo_n_envs", 4, "--ppo_n_steps", 256, "--n_initial_prefs", 12, "--n_initial_epochs", 1,
               "--n_labels", 20, "--n_predictors", 2, "--segment_length", 10, "--log_interval", 1, "--run_dir", run_dir,
               timeout=300, check=True)
    assert "[reward] pretraining on" in proc.stdout and "[policy]" in proc.stdout
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["env"] == "CartPole-v1" and summary["timesteps"] >= 3000
    assert summary["n_preferences"] >= 12 and summary["predictor_version"] >= 1
    # fixed-length episodes (issue 39; envs/fixed_length.py): CartPole's 500 steps whatever falls, under the
    # preset's penalty rule every step out of range 1 below one in it, so clips differ by their falls and the oracle
    # answers strictly (the predictor's accuracy and correlation are defined); a random policy falls within dozens
    # of steps and stays fallen
    assert "CartPole-v1: fixed-length episodes of 500 steps; --fall_rule penalty" in proc.stdout
    assert json.loads((run_dir / "config.json").read_text())["algo"] == "ppo"
    assert summary["episode_length_last100"] == 500 and summary["true_return_last100"] < 500 - 100
    assert summary["pred_true_corr"] is not None and "Mean of empty slice" not in proc.stderr
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"rollout/ep_rew_mean", "rollout/ep_len_mean", "policy/episode_length_last100"} <= set(header)


def test_cartpole_fall_step_leads_to_the_fallen_state_not_the_fresh_start():
    """Issue 39: under the reset rule the step of a fall is scored, and shown in a clip, on the state the fall led
    to (out of the healthy range), not on the fresh start the env returns for the policy to act in. Scored on the
    start, the oracle's 100-point penalty was learned as a property of a centred, still, upright pole."""
    falls = {"fall_penalty": 100.0, "fall_rule": "reset", "fall_step_penalty": 1.0}
    vec = envs.make_vec_env("CartPole-v1", 2, falls=falls)
    try:
        vec.reset(seed=0)
        seen = 0
        for t in range(200):
            step = vec.step(np.zeros(2, np.int64))  # always left: the pole falls every few dozen steps
            fell = step.true_reward < 0
            for i in range(2):
                if not fell[i]:
                    np.testing.assert_array_equal(step.outcome_obs[i], step.obs[i])
                    continue
                seen += 1
                x, angle = step.outcome_obs[i, 0], step.outcome_obs[i, 2]
                assert abs(angle) > 0.2095 or abs(x) > 2.4, "the fall step shows a state in range"
                assert np.all(np.abs(step.obs[i]) <= 0.05), "the policy acts on a fresh start"
                view = vec.predictor_view(step.outcome_obs[i:i + 1])[0]
                assert abs(int(view[2]) - 128) > 60  # a byte far from upright: the predictor sees the fall
        assert seen >= 4
    finally:
        vec.close()


def test_fall_observations_reads_a_fall_on_an_episodes_last_step_from_final_info():
    """A same-step-autoreset vector env puts a finished episode's step info under final_info: a fall on the last
    step is found there, and only for the workers whose episode ended."""
    from envs.fixed_length import fall_observations

    fallen = np.array([[0.1, 0.0, 0.3, 0.0], [0.0, 0.0, 0.0, 0.0]], np.float32)
    info = {"final_info": {"fall_observation": fallen, "_fall_observation": np.array([True, True])}}
    out = fall_observations(info, np.array([True, False]))
    assert list(out) == [0] and np.array_equal(out[0], fallen[0])
    info = {"fall_observation": fallen, "_fall_observation": np.array([False, True])}
    assert list(fall_observations(info, np.array([False, False]))) == [1]
    assert fall_observations({}, np.array([False, False])) == {}

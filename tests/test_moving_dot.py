import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs  # noqa: F401  (registers MovingDot-v0)
from envs.moving_dot import CENTRE, MAX_EPISODE_STEPS, MovingDotEnv

NOOP, UP, RIGHT, DOWN, LEFT = range(5)


def dot_position(frame):
    rows, cols = np.nonzero(frame[..., -1] if frame.ndim == 3 else frame)
    assert len(rows) == 9, "exactly one 3x3 dot"
    return int(rows.mean()), int(cols.mean())


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
def test_passes_gymnasium_env_checker():
    check_env(gym.make("MovingDot-v0").unwrapped)
    check_env(gym.make("MovingDot-v0"), skip_render_check=True)


def test_observation_is_stacked_uint8_frames():
    env = gym.make("MovingDot-v0")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (84, 84, 4) and obs.dtype == np.uint8
    assert set(np.unique(obs)) == {0, 255}
    # after a move the newest frame differs from the previous one: motion is visible in the stack
    obs, *_ = env.step(UP)
    assert dot_position(obs[..., -1]) != dot_position(obs[..., -2])


def test_start_is_at_least_10_pixels_from_centre_within_the_start_box_and_varies():
    env = MovingDotEnv()  # MovingDot-v0: start_box 20
    starts = set()
    for seed in range(300):
        obs, _ = env.reset(seed=seed)
        r, c = dot_position(obs)
        assert abs(r - CENTRE) + abs(c - CENTRE) >= 10
        assert abs(r - CENTRE) <= 20 and abs(c - CENTRE) <= 20
        starts.add((r, c))
    assert len(starts) > 250


def test_wide_variant_starts_anywhere_in_the_frame():
    env = gym.make("MovingDotWide-v0").unwrapped
    far = 0
    for seed in range(300):
        obs, _ = env.reset(seed=seed)
        r, c = dot_position(obs)
        assert abs(r - CENTRE) + abs(c - CENTRE) >= 10
        far += max(abs(r - CENTRE), abs(c - CENTRE)) > 20
    assert far > 150  # outside MovingDot-v0's start box: most of the frame is


def test_rewards_follow_manhattan_distance_and_walls_clip():
    env = MovingDotEnv()
    env.reset(seed=0)
    env._pos = (10, 10)  # up-left of the centre
    assert env.step(DOWN)[1] == 1.0
    assert env.step(RIGHT)[1] == 1.0
    assert env.step(UP)[1] == -1.0
    assert env.step(LEFT)[1] == -1.0
    assert env.step(NOOP)[1] == 0.0
    env._pos = (1, 1)  # top-left corner: moving further is clipped, distance unchanged
    obs, reward, *_ = env.step(UP)
    assert reward == 0.0 and dot_position(obs) == (1, 1)


def test_terminates_with_success_on_centre_and_truncates_at_200_steps():
    env = MovingDotEnv()
    env.reset(seed=0)
    env._pos = (CENTRE, CENTRE + 1)
    _, reward, terminated, truncated, info = env.step(LEFT)
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    env.reset(seed=0)
    for step in range(1, MAX_EPISODE_STEPS + 1):
        _, _, terminated, truncated, info = env.step(NOOP)
        assert not terminated
        assert truncated == (step == MAX_EPISODE_STEPS)
    assert info["success"] is False


def test_vec_env_reports_episodes_with_success():
    vec = envs.make_vec_env("MovingDot-v0", 4)
    obs = vec.reset(seed=3)
    assert obs.shape == (4, 84, 84, 4)
    finished = []
    for _ in range(MAX_EPISODE_STEPS):
        step = vec.step(np.zeros(4, dtype=np.int64))
        finished += step.finished
    assert sorted(ep.worker for ep in finished) == [0, 1, 2, 3]
    assert all(ep.length == MAX_EPISODE_STEPS and ep.success is False and ep.true_return == 0 for ep in finished)


def test_invalid_action_is_an_error():
    env = MovingDotEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(7)


def test_vec_env_gives_the_last_observation_of_a_finished_episode():
    """The reward predictor sees what each action led to: for the step that reaches the centre, the
    frame with the dot ON the centre (outcome_obs), not the next episode's first frame (obs)."""
    vec = envs.make_vec_env("MovingDot-v0", 1)
    obs = vec.reset(seed=5)
    for _ in range(400):
        r, c = np.argwhere(obs[0, :, :, -1] == 255).mean(axis=0).round().astype(int)
        action = 3 if r < CENTRE else 1 if r > CENTRE else 2 if c < CENTRE else 4  # down, up, right, left
        step = vec.step(np.array([action]))
        if step.done[0]:
            break
        assert step.final_obs is None and step.outcome_obs is step.obs
        obs = step.obs
    assert step.terminated[0] and step.finished[0].success
    on_centre = np.argwhere(step.outcome_obs[0, :, :, -1] == 255).mean(axis=0)
    np.testing.assert_array_equal(on_centre, [CENTRE, CENTRE])
    assert not np.array_equal(step.obs[0], step.outcome_obs[0]), "obs is already the next episode's start"
    vec.close()

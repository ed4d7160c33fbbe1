import numpy as np

import envs
from drlhp.policy.reward_source import ClippedEnvReward
from envs.atari import atari_game


def test_env_ids_map_to_ale_games():
    assert atari_game("PongNoFrameskip-v4") == "pong"
    assert atari_game("SpaceInvadersNoFrameskip-v4") == "space_invaders"
    assert atari_game("BeamRiderNoFrameskip-v4") == "beam_rider"
    assert atari_game("PongNoFrameskip-v0") is None
    assert atari_game("NotAGameNoFrameskip-v4") is None
    assert "PongNoFrameskip-v4" in envs.list_env_ids()


def test_pong_observations_are_channels_last_and_seeded():
    def first_steps(seed):
        vec = envs.make_vec_env("PongNoFrameskip-v4", 2, n_threads=1)
        frames = [vec.reset(seed)]
        for _ in range(30):
            frames.append(vec.step(np.array([2, 3])).obs)
        vec.close()
        return np.stack(frames)

    a, b, c = first_steps(5), first_steps(5), first_steps(6)
    assert a.shape == (31, 2, 84, 84, 4) and a.dtype == np.uint8
    assert np.array_equal(a, b), "same seed, same observations"
    assert not np.array_equal(a, c), "another seed, other observations (random no-op starts)"
    # stacked frames are consecutive agent steps: the newest channel of step t is a channel of step t+1
    assert np.array_equal(a[10, ..., -1], a[11, ..., -2])


def test_true_rewards_are_unclipped_and_training_rewards_clipped():
    vec = envs.make_vec_env("SpaceInvadersNoFrameskip-v4", 4, n_threads=1)
    vec.reset(0)
    rng = np.random.default_rng(0)
    rewards = np.concatenate([vec.step(rng.integers(0, vec.n_actions, 4)).true_reward for _ in range(400)])
    vec.close()
    assert rewards.max() > 1, "Space Invaders scores 5-30 per alien: the env must report the real score"
    clipped = ClippedEnvReward().rewards(None, rewards)
    assert set(np.unique(clipped)) <= {-1.0, 0.0, 1.0} and clipped.max() == 1.0


def test_a_games_first_stacks_are_filled_with_its_first_frame_as_baselines_does():
    """ale-py pads the frame stack with black after a reset; baselines' FrameStack (the paper's code) repeats
    the first frame. fill_stack does the latter: no stacked frame is ever all zero, and the first real
    frame stands in for the missing ones while the stack fills."""
    import numpy as np

    from envs import make_vec_env
    from envs.atari import fill_stack

    stack = np.zeros((2, 84, 84, 4), np.uint8)
    stack[0, ..., 2], stack[0, ..., 3] = 5, 7  # [0, 0, f0, f1]
    stack[1] = 9  # a full stack is left alone
    out = fill_stack(stack.copy())
    assert [int(out[0, 0, 0, k]) for k in range(4)] == [5, 5, 5, 7]
    assert (out[1] == 9).all()

    env = make_vec_env("PongNoFrameskip-v4", 2, n_threads=1)
    try:
        obs = env.reset(seed=0)
        for k in range(3):
            np.testing.assert_array_equal(obs[..., k], obs[..., 3])  # [f0, f0, f0, f0]
        first = obs[..., 3].copy()
        for _ in range(3):
            obs = env.step(np.zeros(2, np.int64)).obs
            assert (obs.max(axis=(1, 2)) > 0).all()
            np.testing.assert_array_equal(obs[..., 0], first)  # the first frame fills what the game has not drawn
    finally:
        env.close()

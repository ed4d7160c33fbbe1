import numpy as np
import pytest

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


def _playfield_levels(ale) -> int:
    """How many grey levels Pong's playfield (rows 34-193, between the score and the bottom wall) shows: a game
    in play shows the field, both paddles and the ball; the attract mode one paddle on a cycling background."""
    return len(np.unique(ale.getScreenGrayscale()[34:194]))


def _ale(game: str):
    from ale_py import ALEInterface, roms

    ale = ALEInterface()
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("max_num_frames_per_episode", 200_000)
    ale.loadROM(roms.get_rom_path(game))
    return ale


@pytest.mark.parametrize("actions", ["no-ops", "random"])
def test_pong_stops_playing_after_about_65000_frames_of_a_game_whatever_the_actions_and_its_cap_is_below(actions):
    """The cartridge's attract mode, measured: a Pong game kept from ending (both scores set back to 0 in the RAM,
    AtariARI's addresses 13 and 14), played by no-ops or by random actions, is in play up to the truncation frame
    (plus the at most 31 frames of a reset's no-ops and FIRE) and from 66,000 frames shows a dead screen on which no
    point is ever scored."""
    from envs.atari import max_frames_per_episode

    ale = _ale("pong")
    moves = ale.getMinimalActionSet()
    rng = np.random.default_rng(0)
    cap = max_frames_per_episode("pong")
    assert cap < 65_000
    levels_before, points_after = [], 0
    while ale.getEpisodeFrameNumber() < 70_000:
        if ale.getEpisodeFrameNumber() % 50 == 0:
            ale.setRAM(13, 0)
            ale.setRAM(14, 0)
        reward = ale.act(moves[0] if actions == "no-ops" else moves[rng.integers(len(moves))])
        assert not ale.game_over()
        frame = ale.getEpisodeFrameNumber()
        if cap - 2_000 <= frame <= cap + 31 and frame % 16 == 0:
            levels_before.append(_playfield_levels(ale))
        if frame >= 66_000:
            points_after += abs(reward)
            assert _playfield_levels(ale) <= 2, f"frame {frame}: still playing"
    assert max(levels_before) >= 3 and np.mean(np.array(levels_before) >= 3) > 0.9, "in play up to the cap"
    assert points_after == 0


def test_breakout_left_unserved_cycles_its_colours_after_about_65000_frames_beyond_its_cap():
    """Breakout's attract mode, seen idle (ALE issue #623 and gym issue #833 report it in play): a game whose ball is
    never served (no-ops only) shows the same few greys up to its truncation frame, and from 66,000 frames greys it
    never showed before."""
    from envs.atari import max_frames_per_episode

    ale = _ale("breakout")
    noop = ale.getMinimalActionSet()[0]
    cap = max_frames_per_episode("breakout")
    before, after = set(), set()
    while ale.getEpisodeFrameNumber() < 68_000:
        ale.act(noop)
        assert not ale.game_over()
        frame = ale.getEpisodeFrameNumber()
        if frame % 32 == 0 and (frame <= cap + 31 or frame >= 66_000):
            (before if frame <= cap + 31 else after).update(np.unique(ale.getScreenGrayscale()).tolist())
    assert cap < 65_000 and len(after - before) >= 10, (sorted(before), sorted(after))


def test_the_vector_env_truncates_a_game_at_its_own_frame_limit(monkeypatch):
    from envs import atari

    assert atari.max_frames_per_episode("space_invaders") == atari.MAX_FRAMES_PER_EPISODE == 108_000
    monkeypatch.setitem(atari.ATTRACT_MODE_TRUNCATION, "pong", 400)
    vec = envs.make_vec_env("PongNoFrameskip-v4", 2, n_threads=1, watch_steps=4)  # a person's colour emulators too
    try:
        vec.reset(0)
        for t in range(1, 121):  # past the cap: the watch's emulators end their game where the vector env does
            result = vec.step(np.zeros(2, np.int64))
            assert not result.terminated.any()
            assert result.truncated.all() == (t == 100), t  # 400 frames: 100 agent steps of 4, reset no-ops aside
        assert vec.watch.max_frames == 400
    finally:
        vec.close()

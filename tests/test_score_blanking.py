"""Score blanking: the predictor and the labeller see no score (envs/score_blanking.py).

Each game of the paper is played for 400 random steps through the real hook: RolloutRunner
(env.predictor_view on next_obs) -> the reward source's input -> SegmentCutter (Segment.obs,
Segment.frames, Segment.true_rewards for the oracle). The runner's b_obs, the policy's own input, is
the raw screen to compare with.
"""
import numpy as np
import pytest

import envs
from drlhp.policy.a2c.rollout import A2CRunner
from drlhp.policy.discrete_rollout import RolloutRunner
from drlhp.policy.reward_source import ClippedEnvReward, RewardSource
from drlhp.policy.segments import SegmentCutter
from envs.atari_ids import atari_env_id
from envs.score_blanking import SCORE_REGIONS, blank_score, score_regions

PAPER_GAMES = {"pong", "enduro", "breakout", "space_invaders", "seaquest", "beam_rider", "qbert"}
N_STEPS, N_ROLLOUTS, SEGMENT_LENGTH = 50, 8, 25
SCORE_SHOWS_WITHIN = 3  # agent steps between a reward and the new score on screen (measured: 0-1 in Pong)


def blanked_mask(env_id: str) -> np.ndarray:
    mask = np.zeros((84, 84), bool)
    for r0, r1, c0, c1 in score_regions(env_id):
        mask[r0:r1, c0:c1] = True
    return mask


class RecordingReward(RewardSource):
    """Keeps what the predictor would be given; gives no reward, so the runner never asks a policy."""

    def __init__(self):
        self.seen = []

    def rewards(self, obs, true_rewards):
        self.seen.append(obs.copy())
        return None


def play_through_hook(env_id: str, seed: int = 0) -> dict:
    env = envs.make_vec_env(env_id, 1, n_threads=1)
    reward = RecordingReward()
    runner = RolloutRunner(env, None, reward, N_STEPS, seed)  # random actions: no policy needed
    cutter = SegmentCutter(env_id, 1, env.obs_shape, SEGMENT_LENGTH, 1, env.frames_to_watch)
    raw, next_obs, rewards, dones, segments = [], [], [], [], []
    try:
        for i in range(N_ROLLOUTS):
            rollout = runner.run(random_actions=True)
            raw.append(rollout.b_obs.copy())  # (T, 84, 84, 4): the policy's input before each action
            next_obs.append(rollout.next_obs[:, 0].copy())
            rewards.append(rollout.true_rewards[:, 0])
            dones.append(rollout.dones[:, 0])
            segments += cutter.add(rollout.next_obs, rollout.true_rewards, None, i * N_STEPS)[0]
    finally:
        env.close()
    return {"raw": np.concatenate(raw), "next_obs": np.concatenate(next_obs),
            "seen": np.concatenate(reward.seen)[:, 0], "rewards": np.concatenate(rewards),
            "dones": np.concatenate(dones).astype(bool), "segments": segments}


def test_table_covers_the_papers_games_inside_the_frame():
    assert set(SCORE_REGIONS) == PAPER_GAMES
    for game, rects in SCORE_REGIONS.items():
        assert rects, game
        for r0, r1, c0, c1 in rects:
            assert 0 <= r0 < r1 <= 84 and 0 <= c0 < c1 <= 84, (game, (r0, r1, c0, c1))
    assert score_regions("PongNoFrameskip-v4") == SCORE_REGIONS["pong"]
    assert score_regions("BeamRiderNoFrameskip-v4") == SCORE_REGIONS["beam_rider"]
    assert score_regions(envs.MOVING_DOT_ID) == () and score_regions("AlienNoFrameskip-v4") == ()


def test_blank_score_works_on_any_leading_dims_in_place_or_on_a_copy():
    rng = np.random.default_rng(0)
    obs = rng.integers(1, 256, (5, 3, 84, 84, 4), dtype=np.uint8)  # a (T, N) rollout, no zeros
    mask = blanked_mask("BeamRiderNoFrameskip-v4")
    out = blank_score("BeamRiderNoFrameskip-v4", obs)
    assert out is not obs and obs.min() > 0, "a copy by default: the input is untouched"
    assert (out[..., mask, :] == 0).all() and np.array_equal(out[..., ~mask, :], obs[..., ~mask, :])
    one = blank_score("BeamRiderNoFrameskip-v4", obs[2, 1])  # one stacked observation
    assert np.array_equal(one, out[2, 1])
    same = blank_score("BeamRiderNoFrameskip-v4", obs, inplace=True)
    assert same is obs and np.array_equal(obs, out)
    dot = rng.integers(1, 256, (2, 84, 84, 4), dtype=np.uint8)
    assert blank_score(envs.MOVING_DOT_ID, dot) is dot, "nothing to blank: obs itself"
    with pytest.raises(ValueError):
        blank_score("PongNoFrameskip-v4", np.zeros((84, 4), np.uint8))


@pytest.mark.parametrize("game", sorted(PAPER_GAMES))
def test_predictor_and_labeller_see_the_score_area_blank(game):
    env_id = atari_env_id(game)
    run = play_through_hook(env_id)
    raw, next_obs, rewards, dones = run["raw"], run["next_obs"], run["rewards"], run["dones"]
    mask = blanked_mask(env_id)
    # (a) really blank: what the reward source gets, the rollout's next_obs, every segment's obs and frames
    assert np.array_equal(run["seen"], next_obs)
    assert (next_obs[:, mask, :] == 0).all()
    assert run["segments"], "the run cut segments"
    for seg in run["segments"]:
        assert (seg.obs[:, mask, :] == 0).all() and (seg.frames[:, mask] == 0).all()
    # the oracle still compares the true, unclipped score: segments carry the env's own rewards
    seg_true = np.concatenate([seg.true_rewards for seg in run["segments"]])
    assert np.array_equal(seg_true, rewards[: len(seg_true)])
    if game == "space_invaders":
        assert seg_true.max() > 1, "5-30 points per alien, not clipped to 1"
    # (b) everything else unchanged: next_obs[t] is the raw observation t+1 (within an episode), blanked
    within = np.flatnonzero(~dones[:-1])
    assert np.array_equal(next_obs[within][:, ~mask, :], raw[within + 1][:, ~mask, :])
    # ... and the policy's own input keeps the score
    assert (raw[:, mask, :] != 0).any()
    # (c) each rectangle covered something drawn that changed during play (not empty background) ...
    newest = raw[..., -1].astype(int)
    for r0, r1, c0, c1 in score_regions(env_id):
        region = newest[:, r0:r1, c0:c1]
        assert (region != region[0]).any(), f"{game}: rectangle {(r0, r1, c0, c1)} never changed"
    # ... and where a reward came, the blanked area changed with it: the score is drawn there
    in_region = newest[:, mask]
    rewarded = [t for t in np.flatnonzero(rewards) if t + SCORE_SHOWS_WITHIN < len(newest)]
    if game != "enduro":  # random play passes no car in 400 steps; its odometer changes (checked above)
        assert rewarded, f"{game}: no reward in {len(rewards)} random steps"
    if rewarded:
        assert any((in_region[t + 1:t + 1 + SCORE_SHOWS_WITHIN] != in_region[t]).any() for t in rewarded)


def test_pong_blanks_the_score_digits_and_never_the_play_area():
    run = play_through_hook("PongNoFrameskip-v4", seed=1)
    newest, rewards, dones = run["raw"][..., -1].astype(int), run["rewards"], run["dones"]
    (r0, r1, c0, c1), = score_regions("PongNoFrameskip-v4")
    top_wall, bottom_wall, play = slice(r1, 13), slice(78, 84), slice(13, 78)  # measured rows, 84x84
    # (d) every point scored changes the blanked digits, and nothing outside the play area but them
    points = [t for t in np.flatnonzero(rewards) if t + SCORE_SHOWS_WITHIN < len(newest) and not dones[t]]
    assert len(points) >= 3
    for t in points:
        after = newest[t + 1:t + 1 + SCORE_SHOWS_WITHIN]
        assert (after[:, r0:r1, c0:c1] != newest[t, r0:r1, c0:c1]).any(), f"point at step {t}: no new score"
    for rows in (top_wall, bottom_wall):
        assert (newest[:, rows] == newest[0, rows]).all(), "the walls never change"
    # (e) the ball and paddles move only below the top wall, and the blanked rows end above it
    moving_rows = np.flatnonzero((newest[1:] != newest[:-1]).any(axis=(0, 2)))
    assert set(moving_rows) - set(range(r0, r1)) <= set(range(13, 78))
    assert r1 <= 13 and c0 == 0 and c1 == 84
    seen_play = run["next_obs"][:, play, :, -1]
    moving_seen = (seen_play != seen_play[0]).any(axis=0).any(axis=1)
    assert moving_seen.sum() > 50, "the predictor sees the ball and paddles move"


def test_original_rewards_and_the_policys_input_keep_the_score():
    class ZeroValue:  # the runner asks the policy only for the last values (actions are random here)
        def value(self, obs):
            return np.zeros(len(obs), np.float32)

    env = envs.make_vec_env("PongNoFrameskip-v4", 2, n_threads=1)
    try:
        runner = A2CRunner(env, ZeroValue(), ClippedEnvReward(), 100, 0.99, seed=1)
        rollout = runner.run(random_actions=True)
    finally:
        env.close()
    mask = blanked_mask("PongNoFrameskip-v4")
    assert rollout.true_rewards.any() and np.array_equal(rollout.rewards, np.sign(rollout.true_rewards))
    assert (rollout.next_obs[..., mask, :] == 0).all()
    score = rollout.b_obs[..., mask, -1]
    assert (score != 0).all() and (score != score[0]).any(), "the policy still sees the score, and it changes"


def test_score_visible_leaves_what_the_predictor_sees_as_it_is():
    """--score_visible: the predictor's and the labeller's view keeps the score (the original reproduction)."""
    from envs import make_vec_env

    obs = np.random.default_rng(0).integers(1, 255, (3, 84, 84, 4), dtype=np.uint8)
    visible = make_vec_env("PongNoFrameskip-v4", 1, n_threads=1, score_visible=True)
    blanked = make_vec_env("PongNoFrameskip-v4", 1, n_threads=1)
    try:
        assert np.array_equal(visible.predictor_view(obs.copy()), obs)
        assert not np.array_equal(blanked.predictor_view(obs.copy()), obs)
    finally:
        visible.close()
        blanked.close()

"""What a person watches of an Atari game: the emulator's colour frames (issue 62, part 1; envs/atari_watch.py).

Checked on each of the paper's seven games: the frames a ColourWatch keeps are, pixel for pixel, ale-py's own colour
frames (its C++ AtariVectorEnv made with grayscale=False at 210 x 160, the same seeds and actions), across episode
ends; they are the predictor's 84x84 grey frames in colour and at full size (their grey, area-resized as ale-py resizes,
is the predictor's frame to rounding, but where a moving thing is pooled over two frames); the score rectangles mapped
onto them hide exactly what the predictor's hide; the segment cutter cuts a person's clips from the watched workers
with those frames, across rollouts; the segment pool keeps them compressed and gives them back whole.
"""
import numpy as np
import pytest

from drlhp.policy.a2c.rollout import A2CRunner
from drlhp.policy.segments import SegmentCutter
from envs.atari import AtariVecEnv
from envs.atari_ids import atari_env_id, atari_game
from envs.atari_watch import WATCHED_WORKERS, OutOfStep
from envs.score_blanking import SCORE_REGIONS, SCREEN, blank_score, full_frame_rect, score_regions
from test_score_blanking import PAPER_GAMES, RecordingReward, blanked_mask

GAMES = sorted(PAPER_GAMES)


def area_weights(n_out: int, n_in: int) -> np.ndarray:
    """(n_out, n_in): output pixel o is the overlap-weighted mean of input pixels [o * s, (o + 1) * s), s = n_in /
    n_out (OpenCV's INTER_AREA when shrinking, which ale-py's vector env uses)."""
    weights, s = np.zeros((n_out, n_in)), n_in / n_out
    for o in range(n_out):
        lo, hi = o * s, (o + 1) * s
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            weights[o, i] = min(hi, i + 1) - max(lo, i)
    return weights / s


ROWS, COLS = area_weights(84, SCREEN[0]), area_weights(84, SCREEN[1])


def shrink(frame: np.ndarray) -> np.ndarray:
    """A colour frame (210, 160, 3) as the predictor's: ale-py's grey (its palette's luminance), area-resized."""
    rgb = frame.astype(np.float64)
    grey = np.round(rgb[..., 0] * 0.2989 + rgb[..., 1] * 0.5870 + rgb[..., 2] * 0.1140)
    return ROWS @ grey @ COLS.T


class Reference:
    """ale-py's own colour frames: its C++ vector env in colour at 210 x 160, stepped with the same seed and actions
    (a finished episode's frame is its last, from final_obs, as the predictor's observations are)."""

    def __init__(self, env_id: str, n_envs: int, seed: int):
        from ale_py.vector_env import AtariVectorEnv

        self.env = AtariVectorEnv(atari_game(env_id), n_envs, num_threads=1, repeat_action_probability=0.0,
                                  frameskip=4, maxpool=True, noop_max=30, stack_num=1, img_height=SCREEN[0],
                                  img_width=SCREEN[1], grayscale=False, episodic_life=False, reward_clipping=False,
                                  use_fire_reset=True, max_num_frames_per_episode=108_000, autoreset_mode="SameStep")
        self.env.reset(seed=seed)

    def step(self, actions) -> np.ndarray:
        obs, _, terminated, truncated, info = self.env.step(np.asarray(actions, np.int64))
        frames = obs[:, 0].copy()
        done = terminated | truncated
        if done.any():
            frames[done] = info["final_obs"][done, 0]
        return frames

    def close(self) -> None:
        self.env.close()


class Lockstep:
    """An AtariVecEnv whose every step also steps a Reference: ``truth`` holds ale-py's colour frames, (T, N, ...)."""

    def __init__(self, env: AtariVecEnv, reference: Reference):
        self.env, self.reference, self.truth = env, reference, []

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step(self, actions):
        result = self.env.step(actions)
        self.truth.append(self.reference.step(actions))
        return result


@pytest.mark.parametrize("game", GAMES)
def test_watched_frames_are_ale_pys_colour_frames_and_the_predictors_frames_in_colour(game):
    env_id = atari_env_id(game)
    env = AtariVecEnv(env_id, 3, n_threads=1, score_visible=True, watch_steps=1)
    reference = Reference(env_id, 3, seed=11)
    rng = np.random.default_rng(0)
    ends, far = 0, []
    try:
        env.reset(11)
        assert env.watch.workers == tuple(range(WATCHED_WORKERS))
        for t in range(400):
            actions = rng.integers(0, env.n_actions, 3)
            step = env.step(actions)
            truth = reference.step(actions)
            ends += int(step.done[:WATCHED_WORKERS].sum())
            for w in env.watch.workers:
                frame = env.watch.frames(w, 0, 1)[0]
                assert np.array_equal(frame, truth[w]), f"step {t}, worker {w}"
                if t % 20 == 0:  # the predictor's frame (score visible here): its newest grey frame
                    far.append(np.abs(shrink(frame) - step.outcome_obs[w, ..., -1]))
    finally:
        env.close()
        reference.close()
    far = np.array(far)
    # area resize in float against OpenCV's in fixed point: within half a level; beyond it only where a moving object
    # is pooled over the step's last two frames (the colour max of two frames is not the max of their greys)
    assert (far <= 0.51).mean() > 0.995, (far.max(), (far <= 0.51).mean())
    if game in ("breakout", "qbert"):  # random play ends their games within 400 steps: resets are followed too
        assert ends > 0


def test_full_frame_rectangles_are_the_area_resizes_footprint():
    """Each 84x84 rectangle maps to the full frame's rows and columns that the resize averages into it: all of them,
    and none that it does not."""
    for rects in SCORE_REGIONS.values():
        for rect in rects:
            r0, r1, c0, c1 = rect
            f0, f1, g0, g1 = full_frame_rect(rect)
            rows, cols = np.flatnonzero(ROWS[r0:r1].any(axis=0)), np.flatnonzero(COLS[c0:c1].any(axis=0))
            assert (f0, f1, g0, g1) == (rows[0], rows[-1] + 1, cols[0], cols[-1] + 1), rect


@pytest.mark.parametrize("game", GAMES)
def test_a_blanked_colour_frame_hides_what_the_predictors_frame_hides(game):
    """On a real frame after 300 random steps or more (until a score shows): the colour frame, blanked, shrinks to 0
    on every 84x84 rectangle (the predictor's blanked pixels); every pixel outside the mapped rectangles is the raw
    frame's; shrunk, it is the raw frame's shrunk outside the rectangles and their one-pixel rim (a rim pixel mixes
    blanked and kept rows), and so the predictor's frame there (to rounding, but for moving things pooled over two
    frames)."""
    env_id = atari_env_id(game)
    env = AtariVecEnv(env_id, 1, n_threads=1, watch_steps=1)
    visible = AtariVecEnv(env_id, 1, n_threads=1, score_visible=True, watch_steps=1)
    mask84, mask = blanked_mask(env_id), np.zeros(SCREEN, bool)
    for rect in score_regions(env_id):
        f0, f1, g0, g1 = full_frame_rect(rect)
        mask[f0:f1, g0:g1] = True
    rng = np.random.default_rng(3)
    try:
        env.reset(4)
        visible.reset(4)
        for t in range(900):
            actions = rng.integers(0, env.n_actions, 1)
            step = env.step(actions)
            visible.step(actions)
            if t >= 300 and (visible.watch.frames(0, 0, 1)[0][mask] != 0).any():  # a score on screen
                break
        blanked, raw = env.watch.frames(0, 0, 1)[0], visible.watch.frames(0, 0, 1)[0]
        seen = env.predictor_view(step.outcome_obs[0])[..., -1]
    finally:
        env.close()
        visible.close()
    assert (blanked[mask] == 0).all() and np.array_equal(blanked[~mask], raw[~mask])
    assert (raw[mask] != 0).any(), "the rectangles hid something"
    small = shrink(blanked)
    assert (small[mask84] == 0).all()
    rim = np.zeros((84, 84), bool)
    for r0, r1, c0, c1 in score_regions(env_id):
        rim[max(0, r0 - 1):r1 + 1, max(0, c0 - 1):c1 + 1] = True
    away = ~rim
    assert np.array_equal(small[away], shrink(raw)[away])
    assert (seen[mask84] == 0).all() and (np.abs(small[away] - seen[away]) <= 0.51).mean() > 0.98


def test_a_watch_out_of_step_with_its_game_says_so():
    env = AtariVecEnv("BreakoutNoFrameskip-v4", 2, n_threads=1, watch_steps=2)
    try:
        env.reset(0)
        env.step(np.zeros(2, np.int64))
        with pytest.raises(OutOfStep, match="worker 1 is [0-9]+ frames into its game, its colour emulator"):
            env.watch._ales[1].act(env.watch._actions[0])  # one frame more than its game
            env.step(np.zeros(2, np.int64))
    finally:
        env.close()


def test_a_person_clips_come_from_the_watched_workers_with_their_colour_frames():
    """The cutter on a watched env (rollouts of 30 steps, clips of 25: windows across rollouts): clips only of the
    watched workers, each with ale-py's colour frames of its steps, blanked; its obs the predictor's as ever."""
    env_id, n_envs, n_steps, length = "PongNoFrameskip-v4", 4, 30, 25
    env = AtariVecEnv(env_id, n_envs, n_threads=1, watch_steps=n_steps + length)
    lockstep = Lockstep(env, Reference(env_id, n_envs, seed=5))
    runner = A2CRunner(lockstep, None, RecordingReward(), n_steps, 0.99, seed=5)
    cutter = SegmentCutter(env_id, n_envs, env.obs_shape, length, 4, env.frames_to_watch, watch=env.watch)
    segments, steps = [], 0
    try:
        for _ in range(6):
            rollout = runner.run(random_actions=True)
            steps += n_steps
            for seg in cutter.add(rollout.next_obs, rollout.true_rewards, None, steps)[0]:
                segments.append((seg, steps))
    finally:
        env.close()
        lockstep.reference.close()
    truth = np.stack(lockstep.truth)  # (steps, N, 210, 160, 3)
    assert len(segments) == 2 * (6 * n_steps // length)  # every window, the two watched workers
    assert {seg.worker for seg, _ in segments} == set(range(WATCHED_WORKERS))
    for k, (seg, _) in enumerate(segments):
        window = k // 2  # windows of 25 steps from the first step: window i is steps [25 i, 25 (i + 1))
        expected = blank_score(env_id, truth[window * length:(window + 1) * length, seg.worker])
        assert seg.frames.shape == (length, *SCREEN, 3) and np.array_equal(seg.frames, expected)
        assert (seg.obs[:, blanked_mask(env_id), :] == 0).all()


def test_the_pool_keeps_colour_frames_compressed_and_gives_them_back_whole():
    from drlhp.processes.messages import Segment
    from pref_interface.pool import SegmentPool

    rng = np.random.default_rng(0)
    pool = SegmentPool(10, seed=0)
    made = []
    for i in range(3):
        frames = np.zeros((25, *SCREEN, 3), np.uint8)
        frames[:, 100:120, 50 + i:70] = rng.integers(0, 255, 3, dtype=np.uint8)  # a block, as Atari frames are
        seg = Segment(np.full((25, 84, 84, 4), i, np.uint8), frames, np.zeros(25, np.float32), "PongNoFrameskip-v4",
                      0, 0).check()
        pool.add(seg)
        made.append(seg)
    assert pool.frames_nbytes < 3 * 25 * 100_800 / 50
    pair = pool.select("random", 1)
    for seg in pair:
        original = next(s for s in made if s.id == seg.id)
        assert np.array_equal(seg.frames, original.frames) and seg.frames.flags.writeable


def qimage_array(image) -> np.ndarray:
    """A QImage as (H, W, 3) uint8."""
    from PyQt5.QtGui import QImage

    image = image.convertToFormat(QImage.Format_RGB888)
    raw = np.frombuffer(image.constBits().asstring(image.sizeInBytes()), np.uint8)
    return raw.reshape(image.height(), image.bytesPerLine())[:, :3 * image.width()].reshape(image.height(), -1, 3)


def test_a_reviewed_atari_clip_is_the_colour_frame_recorded_for_it_with_the_score_blanked(tmp_path):
    """A person's Pong clips, end to end but for the processes: cut from a watched env (beside ale-py's own colour env,
    the truth), through the segment pool (compressed, then given back), a preference, the saved and loaded database,
    to review: what review shows (its clip source, and the window's screen, offscreen Qt, its whole-factor scale
    undone) is ale-py's colour frame of that step, the score rectangles blanked."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from drlhp.processes.messages import MU_LEFT, Preference
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.clip_view import application
    from pref_interface.pool import SegmentPool
    from pref_interface.review import Review, ReviewWindow
    from pref_interface.review_clips import ReviewClips

    env_id, n_envs, n_steps, length = "PongNoFrameskip-v4", 2, 25, 25
    env = AtariVecEnv(env_id, n_envs, n_threads=1, watch_steps=n_steps + length)
    lockstep = Lockstep(env, Reference(env_id, n_envs, seed=9))
    runner = A2CRunner(lockstep, None, RecordingReward(), n_steps, 0.99, seed=9)
    cutter = SegmentCutter(env_id, n_envs, env.obs_shape, length, 2, env.frames_to_watch, watch=env.watch)
    pool, windows = SegmentPool(10, seed=0), {}
    try:
        for i in range(4):  # a window is a rollout here: window i, steps [25 i, 25 (i + 1))
            for seg in cutter.add(runner.run(random_actions=True).next_obs, np.zeros((n_steps, n_envs), np.float32),
                                  None, i)[0]:
                pool.add(seg)
                windows[seg.id] = (i, seg.worker)
    finally:
        env.close()
        lockstep.reference.close()
    truth = np.stack(lockstep.truth)
    pair = pool.select("random", 1)
    db = PrefDB(seed=0)
    db.add(Preference(pair[0], pair[1], MU_LEFT).check())
    db.save(tmp_path / "prefs.npz")
    db = PrefDB.load(tmp_path / "prefs.npz")

    def recorded(seg_id):
        i, worker = windows[seg_id]
        return blank_score(env_id, truth[i * length:(i + 1) * length, worker])

    clips = ReviewClips(db)
    for seg in pair:
        frames, _ = clips.clip(seg.id)
        assert frames.shape == (length, *SCREEN, 3) and np.array_equal(frames, recorded(seg.id))
        (r0, r1, c0, c1), = [full_frame_rect(rect) for rect in score_regions(env_id)]
        assert (frames[:, r0:r1, c0:c1] == 0).all()
    app = application()  # held: a QApplication collected before the window aborts the process
    window = ReviewWindow(Review(db))
    try:
        window.resize(1000, 620)
        window.show()
        app.processEvents()
        window.timer.stop()  # the clip plays on a timer: on a loaded machine it would move past frame 7 before the grab
        entry = window.review.entry
        for view, seg_id in ((window.left, entry.id1), (window.right, entry.id2)):
            view.show_frame(7)
            app.processEvents()
            screen = qimage_array(view.screen.grab().toImage())
            shown = view.screen.image_rect()
            k = view.screen.scale()
            assert k >= 1 and (shown.width(), shown.height()) == (160 * k, 210 * k)
            painted = screen[shown.top():shown.top() + 210 * k:k, shown.left():shown.left() + 160 * k:k]
            assert np.array_equal(painted, recorded(seg_id)[7])
    finally:
        window.close()
        app.processEvents()


def test_the_labelling_window_grows_for_colour_clips_to_show_at_2x_where_the_screen_allows():
    """Made for 84x84 clips (1000 x 620: 4x), the window shows a 210 x 160 colour clip at 1x; on its first pair it
    grows until both clips are at 2x, or to the screen's size (offscreen Qt's screen: 800 x 600, so the window starts
    smaller here)."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from drlhp.processes.messages import Segment
    from pref_interface.answers import PairQueue
    from pref_interface.clip_view import application
    from pref_interface.gui import LabelWindow

    app = application()
    frames = np.full((25, *SCREEN, 3), 90, np.uint8)
    seg = Segment(np.zeros((25, 84, 84, 4), np.uint8), frames, np.zeros(25, np.float32), "PongNoFrameskip-v4", 0,
                  0).check()
    pairs = PairQueue()
    pairs.add((seg, seg))
    window = LabelWindow(pairs)
    try:
        window.resize(640, 420)
        window.show()
        app.processEvents()
        before = (window.width(), window.height())
        assert window.left.screen.scale() == 1
        window.fit_clips(frames.shape[1:])
        app.processEvents()
        room = app.primaryScreen().availableGeometry()
        assert window.width() >= before[0] and window.height() > before[1]
        assert window.left.screen.scale() >= 2 or window.height() >= room.height() or window.width() >= room.width()
    finally:
        window.close()
        app.processEvents()

"""Review of a person's MuJoCo database (issue 40, item 3): the clips are drawn from the states the database kept, as
the labelling drew them; a database without them, or a machine that cannot draw, gets one line and exit code 2.
(The page in a real browser: tests/test_web_browser.py.)"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO
from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment

T = 30  # Hopper steps per clip: 6 frames drawn (every 5th state)


def hopper_segment(seed: int, states: bool = True) -> Segment:
    """A random-action Hopper clip of T steps (test_mujoco_labelling.py's), with its recorded states or none."""
    from test_mujoco_labelling import hopper_segment as clip

    return clip(seed, T, states)


def hopper_db(path, states: bool = True):
    """A saved database of two Hopper preferences (four clips)."""
    from drlhp.reward.pref_db import PrefDB

    db = PrefDB(seed=0)
    db.add(Preference(hopper_segment(1, states), hopper_segment(2, states), MU_LEFT))
    db.add(Preference(hopper_segment(3, states), hopper_segment(4, states), MU_RIGHT))
    db.save(path)
    return db


def review(*args, env=None):
    return subprocess.run([sys.executable, "-m", "pref_interface.review", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env=env)


def test_a_clip_is_drawn_from_its_kept_states_as_the_labelling_drew_it(tmp_path):
    """ReviewClips (the window's and the page's source of frames) gives a MuJoCo clip the render worker's frames of
    the states the database kept, at the labelling's size and each frame's real seconds; an Atari-like clip its own
    frames."""
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.answers import FPS
    from pref_interface.review_clips import ReviewClips
    from test_mujoco_labelling import rerender

    hopper_db(tmp_path / "prefs.npz")
    db = PrefDB.load(tmp_path / "prefs.npz")
    sid = db.segment_ids()[0]
    clips = ReviewClips(db)
    try:
        frames, frame_s = clips.clip(sid)
        assert frames.shape == (6, 256, 256, 3) and frame_s == pytest.approx(5 * 0.008)
        assert np.array_equal(frames, rerender(hopper_segment(1).states))
        assert not np.array_equal(frames, clips.clip(db.segment_ids()[1])[0])  # another clip, other pixels
    finally:
        clips.close()
    from test_pref_db import make_pref

    atari = PrefDB()
    atari.add(make_pref(0))
    shown, frame_s = ReviewClips(atari).clip(atari.segment_ids()[0])
    assert np.array_equal(shown, atari.segment(atari.segment_ids()[0]).frames) and frame_s == 1.0 / FPS


def test_the_review_window_shows_the_drawn_clips_on_their_own_clock(tmp_path):
    """ReviewWindow (offscreen Qt) on a Hopper database: both clips are the render worker's frames of the kept states,
    and its clock ticks each frame's real 40 ms (the Atari clips' 1 / FPS elsewhere)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.clip_view import application
    from pref_interface.review import Review, ReviewWindow
    from test_mujoco_labelling import rerender

    hopper_db(tmp_path / "prefs.npz")
    db = PrefDB.load(tmp_path / "prefs.npz")
    app = application()  # held: a QApplication collected before the window aborts the process
    window = ReviewWindow(Review(db))
    try:
        e = window.review.entry
        assert np.array_equal(window.left.frames, rerender(db.segment(e.id1).states))
        assert np.array_equal(window.right.frames, rerender(db.segment(e.id2).states))
        assert window.timer.interval() == 40 and window.left.n_frames == 6
    finally:
        window.close()
        app.processEvents()


def test_a_database_without_states_gets_one_line_and_exit_2(tmp_path):
    """An oracle's run (or a database from before states were kept): nothing to draw its MuJoCo clips from."""
    hopper_db(tmp_path / "prefs.npz", states=False)
    for flags in ([], ["--web"]):
        proc = review("--load_prefs_dir", tmp_path / "prefs.npz", *flags,
                      env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, proc.stderr
        assert lines[0] == ("python -m pref_interface.review: error: 4 of the database's 4 clips are MuJoCo clips "
                            "without their recorded simulator states (a database from before drlhp kept them, or an "
                            "oracle's run, which records none): review has nothing to draw them from")


def test_review_on_a_machine_that_cannot_draw_gets_the_run_checks_line_and_exit_2(tmp_path):
    """With an OpenGL backend that does not load here (OSMesa, where libosmesa6 is not installed), review says what
    the run's check says (pref_interface.clip_drawer.render_problem), in one line, before serving anything."""
    hopper_db(tmp_path / "prefs.npz")
    env = {**os.environ, "MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}  # (MUJOCO_GL=disable, as watch's test)
    probe = subprocess.run([sys.executable, "-c", "from pref_interface.clip_drawer import render_problem; "
                            "print(render_problem('Hopper-v5') is None)"], cwd=REPO, capture_output=True, text=True,
                           timeout=300, env=env)
    if probe.stdout.strip() == "True":
        pytest.skip("OSMesa draws here: no backend to fail with")
    proc = review("--load_prefs_dir", tmp_path / "prefs.npz", "--web", env=env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("python -m pref_interface.review: error: this machine cannot draw MuJoCo clips "
                               "offscreen") and "install libegl1 libegl-mesa0 libgl1-mesa-dri" in lines[0]


class _FlatWorker:
    """A stand-in render worker: every 5th state drawn as a flat grey frame, 40 ms each (Hopper's)."""

    def __init__(self):
        self.done = []

    def submit(self, key, env_id, states):
        n = -(-len(states) // 5)
        self.done.append((key, np.full((n, 64, 64, 3), 90, np.uint8), {"every": 5, "frame_s": 0.04}))

    def results(self):
        out, self.done = self.done, []
        return out

    def close(self):
        pass


def test_review_marks_a_fall_the_database_kept_and_an_older_database_shows_none(tmp_path):
    """A clip whose robot fell at step 10 (Segment.falls, kept by the database): review's frames from frame 2 (step 10
    // 5) for half a second carry the fall's mark, as the labelling marked them, and the frames before do not; the same
    clip from a database saved without fall flags shows no mark."""
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.fall_mark import mark
    from pref_interface.review_clips import ReviewClips

    seg = hopper_segment(5)
    falls = np.zeros(T, bool)
    falls[10] = True
    fell = Segment(seg.obs, seg.frames, seg.true_rewards, seg.env_id, seg.worker, seg.step, seg.states, falls).check()
    for kept in (True, False):
        path = tmp_path / f"{kept}.npz"
        db = PrefDB(seed=0)
        db.add(Preference(fell if kept else seg, hopper_segment(6), MU_LEFT))
        db.save(path)
        clips = ReviewClips(PrefDB.load(path), worker_factory=_FlatWorker)
        frames, frame_s = clips.clip(seg.id)
        flat = np.full((64, 64, 3), 90, np.uint8)
        assert frames.shape == (6, 64, 64, 3) and frame_s == 0.04
        if kept:
            assert all(np.array_equal(f, flat) for f in frames[:2])
            assert all(np.array_equal(f, mark(flat)) for f in frames[2:])  # 0.5 s from step 10: frames 2 to 5
        else:
            assert all(np.array_equal(f, flat) for f in frames)
        assert not np.array_equal(mark(flat), flat)

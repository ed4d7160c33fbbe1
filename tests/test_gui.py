"""The labelling window, offscreen (QT_QPA_PLATFORM=offscreen, as `make test` sets it): real Qt key
events (QTest) on the real window, the preference interface's own glue (pref_interface.human) between
queues, and what each key does to the preferences sent and the database."""
import os
import queue
import threading

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("PyQt5.QtWidgets")
from PyQt5.QtCore import QEvent, Qt, QTimer  # noqa: E402
from PyQt5.QtGui import QImage, QKeyEvent  # noqa: E402
from PyQt5.QtTest import QTest  # noqa: E402
from PyQt5.QtWidgets import QApplication  # noqa: E402

from drlhp.config import PrefConfig, RunConfig  # noqa: E402
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment  # noqa: E402
from drlhp.processes.ports import PrefInterfacePorts  # noqa: E402
from drlhp.reward.pref_db import PrefDB  # noqa: E402
from pref_interface.answers import PairQueue  # noqa: E402
from pref_interface.gui import LOOP_PAUSE_FRAMES, WINDOW_TITLE, LabelWindow, application  # noqa: E402

T = 6  # frames per test clip
KEYS = {"left": (Qt.Key_Left, Qt.Key_A), "right": (Qt.Key_Right, Qt.Key_D), "equal": (Qt.Key_Up, Qt.Key_W),
        "cant_tell": (Qt.Key_Down, Qt.Key_S)}


def seg(value: int) -> Segment:
    """A clip whose every frame differs (from other frames and other clips): value, frame index, noise."""
    rng = np.random.default_rng(value)
    frames = rng.integers(0, 256, (T, 6, 7), dtype=np.uint8)
    frames[:, 0, 0] = value
    frames[:, 0, 1] = np.arange(T)
    obs = np.repeat(np.pad(frames, ((0, 0), (1, 1), (0, 1)))[..., None], 4, axis=-1)  # (T, 8, 8, 4)
    return Segment(obs, frames, np.full(T, value, np.float32), "Test-v0", 0, value).check()


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture(scope="module")
def app():
    return application()


def make_window(pairs, **kw) -> LabelWindow:
    window = LabelWindow(pairs, **kw)
    window.timer.stop()  # frames advance only when a test says so
    window.resize(700, 420)
    window.show()
    application().processEvents()
    return window


def press(window, key) -> None:
    QTest.keyClick(window, key)
    application().processEvents()


def test_each_key_answers_the_pair_on_screen(app):
    clock = FakeClock()
    pairs = PairQueue(hold_s=5.0, clock=clock)
    segments = [seg(v) for v in range(1, 18)]
    for i in range(8):
        pairs.add((segments[2 * i], segments[2 * i + 1]))
    window = make_window(pairs)
    assert window.windowTitle() == WINDOW_TITLE == "drlhp: which clip is better?"
    shown, given = [], []
    for kind, keys in KEYS.items():
        for key in keys:
            shown.append(pairs.current)
            press(window, key)
            given.append(kind)
    answers = pairs.flush()
    assert [a.kind for a in answers] == given
    assert [a.mu for a in answers] == [MU_LEFT, MU_LEFT, MU_RIGHT, MU_RIGHT, MU_EQUAL, MU_EQUAL, None, None]
    assert [a.pair for a in answers] == shown  # each answer is about the pair that was on screen
    assert pairs.n_answers == 8 and pairs.n_cant_tell == 2 and pairs.current is None
    press(window, Qt.Key_Left)  # nothing on screen: no answer
    assert pairs.n_answers == 8
    window.close()


def test_keys_ignore_auto_repeat_and_modifiers(app):
    pairs = PairQueue()
    for v in range(0, 6, 2):
        pairs.add((seg(v), seg(v + 1)))
    window = make_window(pairs)
    QTest.keyPress(window, Qt.Key_Left, Qt.ControlModifier)  # Ctrl+Left is not an answer
    QTest.keyRelease(window, Qt.Key_Left, Qt.ControlModifier)
    assert pairs.n_answers == 0
    press(window, Qt.Key_Q)  # an unbound key does nothing
    assert pairs.n_answers == 0 and pairs.n_waiting == 3
    press(window, Qt.Key_Left)
    assert pairs.n_answers == 1
    QApplication.sendEvent(window, QKeyEvent(QEvent.KeyPress, Qt.Key_Left, Qt.NoModifier, "", True))  # held key
    press(window, Qt.Key_Left)  # the same key again within 0.2 s
    assert pairs.n_answers == 1
    QTest.qWait(250)
    press(window, Qt.Key_Left)
    assert pairs.n_answers == 2
    window.close()


def test_undo_takes_back_the_held_answer_only(app):
    clock = FakeClock()
    pairs = PairQueue(hold_s=5.0, clock=clock)
    p1, p2, p3 = (seg(1), seg(2)), (seg(3), seg(4)), (seg(5), seg(6))
    for p in (p1, p2, p3):
        pairs.add(p)
    window = make_window(pairs)
    press(window, Qt.Key_Left)  # p1: left
    assert pairs.current is p2 and window._shown is p2
    press(window, Qt.Key_U)  # undo: p1 is back on screen, nothing is final
    assert pairs.current is p1 and window._shown is p1 and window.left.frames is p1[0].frames
    assert pairs.n_answers == 0 and pairs.take_ready() == []
    press(window, Qt.Key_D)  # p1: right
    press(window, Qt.Key_W)  # p2: equal; p1's answer is now final
    press(window, Qt.Key_U)  # takes back p2's answer, not p1's
    press(window, Qt.Key_U)  # one level only: nothing more to undo
    assert "nothing to undo" in window.statusBar().currentMessage()
    ready = pairs.take_ready()
    assert [(a.pair, a.mu) for a in ready] == [(p1, MU_RIGHT)]
    assert pairs.current is p2
    press(window, Qt.Key_Down)  # p2: can't tell
    clock.now += 5.0  # after hold_s the answer is final: too late to undo
    press(window, Qt.Key_U)
    assert pairs.current is p3
    assert [(a.pair, a.mu) for a in pairs.take_ready()] == [(p2, None)]
    assert pairs.n_undone == 2 and pairs.n_answers == 2
    window.close()


def test_cant_tell_does_not_hold_back_the_next_pair():
    """At the label schedule's limit, a held "can't tell" (discarded, never a label) must not count as
    pending: the next pair is offered at once, not after the 5 s hold."""
    clock = FakeClock()
    pairs = PairQueue(hold_s=5.0, clock=clock)
    pairs.add((seg(1), seg(2)))
    assert pairs.n_pending == 1
    pairs.answer("cant_tell")
    assert pairs.held is not None and pairs.n_pending == 0  # a new pair may be taken now
    pairs.add((seg(3), seg(4)))
    pairs.answer("left")
    assert pairs.n_pending == 1  # a real answer counts until it is taken, held or ready
    clock.now += 5.0
    assert [a.mu for a in pairs.take_ready()] == [None, MU_LEFT] and pairs.n_pending == 0


def test_the_waiting_text_says_why_no_pair_is_shown_in_the_window_and_on_the_page():
    """pref_interface.answers.why_no_pair, which the window and the page both show: drawing first, then too few
    clips, then the schedule's limit (counting the labels given, sent, and pending), then every pair asked."""
    from types import SimpleNamespace

    from pref_interface.answers import why_no_pair

    iface = SimpleNamespace(n_drawing=1, pool=[1, 2, 3], given=3, outbox=[1], allowed=5)
    assert why_no_pair(iface, pending=0).startswith("drawing the robot's clips")
    iface.n_drawing, iface.pool = 0, [1]
    assert why_no_pair(iface, pending=0).startswith("waiting for clips from the agent")
    iface.pool = [1, 2, 3]
    assert why_no_pair(iface, pending=0).startswith("every pair of the clips at hand was asked")  # 3 + 1 + 0 < 5
    assert why_no_pair(iface, pending=1).startswith("all 5 labels that the label schedule allows so far are given:")
    assert why_no_pair(iface, pending=1, given="given or on a page").startswith(
        "all 5 labels that the label schedule allows so far are given or on a page:")


def test_space_replays_both_clips_from_the_start(app):
    pairs = PairQueue()
    pairs.add((seg(1), seg(2)))
    window = make_window(pairs)
    for _ in range(3):
        window.next_frame()
    assert window.left.frame_index == window.right.frame_index == 3
    assert window.left.index_label.text() == f"frame 4 / {T}"
    press(window, Qt.Key_Space)
    assert window.left.frame_index == window.right.frame_index == 0
    assert window.left.index_label.text() == f"frame 1 / {T}"
    for _ in range(T - 1 + LOOP_PAUSE_FRAMES):  # the last frame stays a moment, then the clips loop
        window.next_frame()
    assert window.left.frame_index == T - 1
    window.next_frame()
    assert window.left.frame_index == 0
    assert pairs.n_answers == 0  # Space answers nothing
    window.close()


def _shown_pixels(view) -> tuple[np.ndarray, int]:
    """What the clip's screen widget shows (grabbed from Qt's rendering), as (H, W) gray, and the scale."""
    screen = view.screen
    image = screen.grab().toImage().convertToFormat(QImage.Format_Grayscale8)
    ptr = image.constBits()
    ptr.setsize(image.bytesPerLine() * image.height())
    gray = np.frombuffer(ptr, np.uint8).reshape(image.height(), image.bytesPerLine())[:, :image.width()]
    rect = screen.image_rect()
    return gray[rect.top():rect.bottom() + 1, rect.left():rect.right() + 1].copy(), screen.scale()


def test_left_clip_shows_segment_1_and_right_clip_segment_2_scaled_up_nearest(app):
    s1, s2 = seg(11), seg(22)
    pairs = PairQueue()
    pairs.add((s1, s2))
    window = make_window(pairs)
    for index in (0, 2, T - 1):
        window.tick = index
        window.refresh()
        app.processEvents()
        for view, segment, other in ((window.left, s1, s2), (window.right, s2, s1)):
            pixels, k = _shown_pixels(view)
            assert k >= 3, "clips are scaled up"
            expected = np.kron(segment.frames[index], np.ones((k, k), np.uint8))  # nearest neighbour
            assert pixels.shape == expected.shape
            assert np.array_equal(pixels, expected)
            assert not np.array_equal(pixels, np.kron(other.frames[index], np.ones((k, k), np.uint8)))
    window.close()


def test_colour_frames_are_shown_in_colour(app):
    s = seg(3)
    rgb = np.stack([s.frames, 255 - s.frames, np.zeros_like(s.frames)], axis=-1)
    coloured = Segment(s.obs, rgb, s.true_rewards, s.env_id, 0, 0).check()
    pairs = PairQueue()
    pairs.add((coloured, seg(4)))
    window = make_window(pairs)
    screen = window.left.screen
    image = screen.grab().toImage()
    rect, k = screen.image_rect(), screen.scale()
    color = image.pixelColor(rect.left() + 2 * k + k // 2, rect.top() + 3 * k + k // 2)  # frame 0, row 3, col 2
    assert (color.red(), color.green(), color.blue()) == tuple(int(v) for v in rgb[0, 3, 2])
    window.close()


def test_status_bar_shows_answers_rate_waiting_database_and_predictor(app):
    clock = FakeClock()
    pairs = PairQueue(clock=clock)
    for v in range(0, 8, 2):
        pairs.add((seg(v), seg(v + 1)))
    window = make_window(pairs, status=lambda: {"db_size": 512, "predictor_version": 42})
    clock.now += 30.0
    press(window, Qt.Key_A)
    press(window, Qt.Key_S)
    text = window.counts.text()
    assert "2 answers (1 can't tell)" in text
    assert "4.0 per minute" in text  # 2 answers in the 30 s since the first pair was on screen
    assert "2 pairs waiting" in text and "database 512" in text and "predictor v42" in text
    window.close()


def test_agent_view_loops_the_latest_episode(app):
    pairs = PairQueue()
    window = make_window(pairs, show_agent=True)
    assert window.agent is not None and "waiting for clips" in window.left.screen.placeholder
    episode = seg(9).frames
    window.set_agent_episode(episode)
    for _ in range(2):
        window.next_frame()
    assert window.agent.frame_index == 2 and window.agent.frames is episode
    window.close()


# ---- the process glue: queues in, keys, preferences out ---------------------------------------------
def _drive(steps):
    """Run the generator ``steps`` inside the Qt event loop (it yields waits in ms); its exception is
    kept (an exception escaping a Qt slot would abort the process) and the windows are closed."""
    errors = []
    gen = steps()

    def step():
        try:
            QTimer.singleShot(next(gen), step)
        except StopIteration:
            pass
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            for w in application().topLevelWidgets():
                w.close()

    QTimer.singleShot(0, step)
    return errors


def _label_window():
    return next(w for w in application().topLevelWidgets() if isinstance(w, LabelWindow) and w.isVisible())


def test_interface_process_glue_sends_what_the_keys_say_and_closing_stops_the_run(app, tmp_path):
    from pref_interface.human import label_in_window
    from pref_interface.process import PrefInterface

    cfg = RunConfig(mode="gather_initial_prefs", env="MovingDot-v0", log_interval=0.2,
                    prefs=PrefConfig(n_initial_prefs=5, segment_pool_size=10))
    segment_queue, preference_queue, stop = queue.Queue(), queue.Queue(maxsize=16), threading.Event()
    for v in range(5):
        segment_queue.put(seg(v))
    iface = PrefInterface(cfg, PrefInterfacePorts(stop_event=stop, segment_queue=segment_queue,
                                                  preference_queue=preference_queue), str(tmp_path), 1)
    on_screen = []

    def person():
        while True:  # until the tick has filled the window's queue
            window = _label_window()
            if window.pairs.n_waiting:
                break
            yield 20
        for key in (Qt.Key_Left, Qt.Key_D, Qt.Key_Down, Qt.Key_W, Qt.Key_U, Qt.Key_A, Qt.Key_Right):
            if key != Qt.Key_U:
                on_screen.append(window.pairs.current)
            else:
                on_screen.pop()
            QTest.keyClick(window, key)
            yield 40
        yield 200
        window.close()  # the person closes the window

    errors = _drive(person)
    figures = label_in_window(iface, log=lambda *a, **k: None, hold_s=60.0)
    iface.close()
    assert not errors, errors
    assert stop.is_set() and figures["labelling_window_closed"] is True
    sent = []
    while (item := preference_queue.get(timeout=1)) is not None:
        sent.append(item)
    # left, right, (can't tell: nothing), equal -> undone, left, right; the held last answer is sent at exit
    assert [p.mu for p in sent] == [MU_LEFT, MU_RIGHT, MU_LEFT, MU_RIGHT]
    asked = [pair for pair, key in zip(on_screen, ("l", "r", "s", "a", "r")) if key != "s"]
    assert [(p.segment_1.id, p.segment_2.id) for p in sent] == [(a.id, b.id) for a, b in asked]
    assert figures["answers"] == 5 and figures["answers_cant_tell"] == 1 and figures["answers_undone"] == 1
    assert iface.given == 4 and iface.discarded == 1
    db = PrefDB(seed=0)
    for p in sent:
        assert db.add(p)
    assert sorted(e.mu for e in db.entries("train") + db.entries("val")) == sorted([MU_LEFT, MU_RIGHT] * 2)
    assert (tmp_path / "progress_prefs.csv").is_file()


def test_the_window_leaves_when_the_run_stops(app, tmp_path):
    from pref_interface.human import label_in_window
    from pref_interface.process import PrefInterface

    cfg = RunConfig(mode="gather_initial_prefs", env="MovingDot-v0", prefs=PrefConfig(n_initial_prefs=5))
    preference_queue, stop = queue.Queue(maxsize=16), threading.Event()
    iface = PrefInterface(cfg, PrefInterfacePorts(stop_event=stop, segment_queue=queue.Queue(),
                                                  preference_queue=preference_queue), str(tmp_path), 1)
    QTimer.singleShot(300, stop.set)  # e.g. the predictor has its initial preferences, or Ctrl-C
    figures = label_in_window(iface, log=lambda *a, **k: None)
    iface.close()
    assert figures["labelling_window_closed"] is False and figures["answers"] == 0
    assert preference_queue.get(timeout=1) is None  # only the sentinel


def test_the_window_says_why_no_pair_is_on_screen(app, tmp_path):
    from pref_interface.human import label_in_window
    from pref_interface.process import PrefInterface

    cfg = RunConfig(mode="gather_initial_prefs", env="MovingDot-v0", prefs=PrefConfig(n_initial_prefs=2))
    segment_queue, stop = queue.Queue(), threading.Event()
    iface = PrefInterface(cfg, PrefInterfacePorts(stop_event=stop, segment_queue=segment_queue,
                                                  preference_queue=queue.Queue(maxsize=16)), str(tmp_path), 1)
    seen = []

    def person():
        window = _label_window()
        yield 100
        seen.append(window.left.screen.placeholder)  # no segments yet
        for v in range(4):
            segment_queue.put(seg(v))
        while not window.pairs.n_waiting:
            yield 20
        for key in (Qt.Key_A, Qt.Key_D):  # the 2 labels the schedule allows
            QTest.keyClick(window, key)
            yield 40
        yield 100
        seen.append(window.left.screen.placeholder)
        stop.set()

    errors = _drive(person)
    label_in_window(iface, log=lambda *a, **k: None)
    iface.close()
    assert not errors, errors
    assert seen[0].startswith("waiting for clips from the agent")
    assert seen[1].startswith("all 2 labels that the label schedule allows so far are given"), seen


def test_screenshot_of_a_saved_database(app, tmp_path):
    from drlhp.processes.messages import Preference
    from pref_interface.gui import main

    db = PrefDB(seed=0)
    db.add(Preference(seg(1), seg(2), MU_LEFT))
    db.add(Preference(seg(3), seg(4), MU_EQUAL))
    db.save(tmp_path / "prefs.npz")
    out = tmp_path / "shot.png"
    assert main(["--load_prefs_dir", str(tmp_path), "--screenshot", str(out), "--size", "640x400"]) == 0
    image = QImage(str(out))
    assert image.width() >= 640 and image.height() == 400  # no narrower than the buttons need
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---- the review tool ---------------------------------------------------------------------------------
def test_review_relabels_deletes_undoes_and_saves(app, tmp_path):
    from drlhp.processes.messages import Preference
    from pref_interface.review import REVIEW_TITLE, Review, ReviewWindow

    db = PrefDB(seed=0)
    pairs = [(seg(10 + 2 * i), seg(11 + 2 * i)) for i in range(5)]
    for (a, b), mu in zip(pairs, (MU_LEFT, MU_RIGHT, MU_EQUAL, MU_LEFT, MU_RIGHT)):
        db.add(Preference(a, b, mu))
    path = tmp_path / "prefs.npz"
    db.save(path)
    review = Review(PrefDB.load(path))
    saved = []

    def save():
        review.apply()
        review.db.save(path)
        saved.append(True)

    window = ReviewWindow(review, save=save)
    window.timer.stop()
    window.show()
    assert window.windowTitle() == REVIEW_TITLE
    assert "pair 1 of 5" in window.header.text() and "recorded left is better" in window.header.text()
    assert window.left.frames is not None and np.array_equal(window.left.frames, pairs[0][0].frames)
    assert np.array_equal(window.right.frames, pairs[0][1].frames)
    press(window, Qt.Key_D)  # pair 0: left -> right, next
    assert "pair 2 of 5" in window.header.text()
    assert np.array_equal(window.left.frames, pairs[1][0].frames)
    press(window, Qt.Key_Down)  # pair 1: delete
    press(window, Qt.Key_N)  # pair 2: unchanged
    press(window, Qt.Key_Delete)  # pair 3: delete
    press(window, Qt.Key_U)  # ... undone: back on pair 3, kept
    assert "pair 4 of 5" in window.header.text() and review.n_deleted == 1
    press(window, Qt.Key_W)  # pair 3: left -> equal
    press(window, Qt.Key_P)  # back to pair 3 (shown as changed)
    assert "now equally good" in window.header.text()
    assert "1 deleted" in window.counts.text() and "2 relabelled" in window.counts.text()
    window.close()  # saves
    assert saved
    reloaded = PrefDB.load(path)
    got = {(e.id1, e.id2): e.mu for e in reloaded.entries("train") + reloaded.entries("val")}
    want = {(pairs[0][0].id, pairs[0][1].id): MU_RIGHT, (pairs[2][0].id, pairs[2][1].id): MU_EQUAL,
            (pairs[3][0].id, pairs[3][1].id): MU_EQUAL, (pairs[4][0].id, pairs[4][1].id): MU_RIGHT}
    assert got == want
    assert reloaded.n_segments == 8  # the deleted pair's clips are gone


def test_review_and_label_tools_need_a_display(tmp_path):
    import subprocess
    import sys

    from drlhp.processes.messages import Preference

    db = PrefDB(seed=0)
    db.add(Preference(seg(1), seg(2), MU_LEFT))
    db.save(tmp_path / "prefs.npz")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    for module, extra in (("pref_interface.review", []),
                          ("pref_interface.gui", ["--label_to", str(tmp_path / "o.npz")])):
        proc = subprocess.run([sys.executable, "-m", module, "--load_prefs_dir", str(tmp_path), *extra], env=env,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and "DISPLAY is not set" in proc.stderr, proc.stderr

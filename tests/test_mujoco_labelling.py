"""A person labels MuJoCo clips (issue 30): the preference interface draws a pair of segments' recorded states in
its render worker before offering it; the page serves the drawn frames (each shown k * dt: real speed) and the
window shows them on its own clock; what reaches the reward predictor is the segments as the policy sent them,
with their recorded states (the database keeps them for review) and without the drawn frames."""
import io
import os
import queue
import threading
import time

import numpy as np
import pytest

from drlhp.config import PrefConfig, RunConfig
from drlhp.processes.messages import MU_LEFT, Segment
from drlhp.processes.ports import PrefInterfacePorts
from pref_interface.shown_pairs import ShownPair

T = 12  # Hopper steps per clip: 3 frames drawn (every 5th state: 25 a second of the task's 125)


def hopper_segment(seed: int, steps: int = T, states: bool = True) -> Segment:
    """A random-action Hopper clip as the policy sends it where a person labels: (steps, D + A) float32, no frames,
    and its recorded states (or none, as an oracle's run records). tests/test_review_mujoco.py uses it too."""
    import gymnasium as gym

    from envs.mujoco_state import record_state

    env = gym.make("Hopper-v5")
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    xs, recorded = [], []
    for _ in range(steps):
        action = env.action_space.sample()
        recorded.append(record_state(env))
        xs.append(np.concatenate([obs, action]).astype(np.float32))
        obs, *_ = env.step(action)
    env.close()
    return Segment(np.array(xs), np.zeros((steps, 0, 0), np.uint8), np.full(steps, seed, np.float32), "Hopper-v5", 0,
                   seed, np.array(recorded) if states else None).check()


def interface(tmp_path, segments):
    from pref_interface.process import PrefInterface

    cfg = RunConfig(mode="gather_initial_prefs", env="Hopper-v5", log_interval=1e9,
                    prefs=PrefConfig(n_initial_prefs=10, segment_pool_size=10))
    segment_queue, preference_queue = queue.Queue(), queue.Queue()
    for s in segments:
        segment_queue.put(s)
    ports = PrefInterfacePorts(stop_event=threading.Event(), segment_queue=segment_queue,
                               preference_queue=preference_queue)
    iface = PrefInterface(cfg, ports, str(tmp_path), 1)
    iface.receive_segments()
    return iface


def drawn_pair(iface, timeout_s: float = 120.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        pair = iface.next_pair()
        if pair is not None:
            return pair
        time.sleep(0.05)
    raise AssertionError("no drawn pair came back")


def rerender(states: np.ndarray) -> np.ndarray:
    """The frames a fresh render worker draws of ``states`` (every 5th state of Hopper's)."""
    from pref_interface.clip_drawer import RenderWorker
    from test_clip_drawer import wait_results

    worker = RenderWorker()
    try:
        worker.submit("again", "Hopper-v5", states)
        return wait_results(worker, 1)[0][1]
    finally:
        worker.close()


def test_a_pair_of_mujoco_segments_is_offered_drawn_and_sent_on_with_its_states_without_frames(tmp_path):
    segments = [hopper_segment(s) for s in range(3)]
    iface = interface(tmp_path, segments)
    try:
        assert iface.next_pair() is None and iface.n_drawing == 1  # drawn first
        pair = drawn_pair(iface)
        assert isinstance(pair, ShownPair) and pair.frame_s == pytest.approx(5 * 0.008)
        assert [c.shape for c in pair.clips] == [(3, 256, 256, 3)] * 2
        assert np.array_equal(pair.clips[0], rerender(pair[0].states))
        iface.send(pair, MU_LEFT)
        pref = iface.preference_queue.get_nowait()
        for sent, original in ((pref.segment_1, pair[0]), (pref.segment_2, pair[1])):
            # the states go on (the database keeps them, for review to draw); the drawn frames never do
            assert sent.id == original.id and np.array_equal(sent.states, original.states)
            assert sent.frames.shape == (T, 0, 0)
        figures = iface.figures()
        assert figures["clip_frames_per_label"] == 6 and figures["clip_ms_per_frame"] > 0
    finally:
        iface.close()


def test_the_page_serves_the_drawn_frames_with_their_own_frame_time(tmp_path):
    import asyncio

    import requests
    from PIL import Image

    from pref_interface.web import WebLabeller

    iface = interface(tmp_path, [hopper_segment(s) for s in range(2)])
    server = WebLabeller(iface, log=lambda *a, **k: None)
    thread = threading.Thread(target=lambda: asyncio.run(server.run()))
    thread.start()
    try:
        assert server.ready.wait(10)
        url, headers = f"http://127.0.0.1:{server.port}", {"X-Token": server.token}
        t0, state = time.monotonic(), {}
        while not state.get("pairs") and time.monotonic() - t0 < 120:
            state = requests.get(f"{url}/api/state?page=mujocopage1", headers=headers, timeout=10).json()
            if not state["pairs"]:
                assert state["waiting_text"].startswith(("drawing", "waiting", "every"))
                time.sleep(0.2)
        (shown,) = state["pairs"]
        assert shown["frame_ms"] == pytest.approx(40.0) and shown["frames"] == 3 and shown["size"] == [[256, 256]] * 2
        png = requests.get(f"{url}/clip/{shown['number']}/right", headers=headers, timeout=10).content
        sheet = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        pair = server.out[shown["number"]]
        assert np.array_equal(sheet, pair.clips[1].reshape(3 * 256, 256, 3))
    finally:
        iface.ports.stop_event.set()
        thread.join(10)
        iface.close()


def test_the_window_shows_the_drawn_frames_on_the_pairs_own_clock(tmp_path):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    pytest.importorskip("PyQt5.QtWidgets")
    from pref_interface.answers import PairQueue
    from pref_interface.gui import LabelWindow, application

    app = application()  # kept: a QApplication nobody holds is gone
    a, b = hopper_segment(0), hopper_segment(1)
    clips = (np.full((3, 8, 8, 3), 10, np.uint8), np.full((3, 8, 8, 3), 200, np.uint8))
    pairs = PairQueue()
    window = LabelWindow(pairs)
    assert window.timer.interval() == window.default_frame_ms
    pairs.add(ShownPair((a, b), clips, 0.04))
    window.refresh()
    assert window.left.frames is clips[0] and window.right.frames is clips[1] and window.timer.interval() == 40
    window.give("left")
    window.refresh()
    assert window.timer.interval() == window.default_frame_ms  # no pair on screen: the window's own fps again
    window.close()
    app.processEvents()


def test_the_page_stops_the_run_when_its_clips_cannot_be_drawn(tmp_path):
    """A request handler's error is logged and answered 500 (the run goes on): a drawing failure must stop the run
    instead, from the labeller's tick, with its line."""
    from types import SimpleNamespace

    from pref_interface.clip_drawer import RenderError
    from pref_interface.web import WebLabeller

    iface = interface(tmp_path, [])
    server = WebLabeller(iface, log=lambda *a, **k: None)
    try:
        server.tick()  # nothing drawn, nothing wrong
        iface.drawer = SimpleNamespace(failure=RenderError("cannot draw Hopper-v5 clips: GLError"), n_drawing=0,
                                       close=lambda: None, figures=lambda: {})
        with pytest.raises(RenderError, match="cannot draw Hopper-v5 clips"):
            server.tick()
    finally:
        server.close()
        iface.close()

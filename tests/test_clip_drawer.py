"""MuJoCo clips drawn for a person by the render worker (envs/render_worker.py, a child interpreter without
TensorFlow: this test process may have it loaded), through pref_interface.clip_drawer: every k-th state, at the
task's real speed, the same frames a fresh worker draws of the same states, pairs back in order; a clip that cannot
be drawn is one line, and the worker goes on."""
from __future__ import annotations

import numpy as np
import pytest

from pref_interface.clip_drawer import ClipDrawer, RenderError, RenderWorker
from pref_interface.shown_pairs import ShownPair, frame_seconds, shown_clips


def hopper_states(steps: int, seed: int = 0) -> np.ndarray:
    """States of Hopper-v5 under random actions (no rendering in this process)."""
    import gymnasium as gym

    from envs.mujoco_state import record_state

    env = gym.make("Hopper-v5")
    env.reset(seed=seed)
    env.action_space.seed(seed)
    states = []
    for _ in range(steps):
        states.append(record_state(env))
        env.step(env.action_space.sample())
    env.close()
    return np.array(states)


def wait_results(worker, n, timeout_s=120.0):
    import time

    out, t0 = [], time.monotonic()
    while len(out) < n:
        out += worker.results()
        assert time.monotonic() - t0 < timeout_s, "the render worker did not answer"
        time.sleep(0.02)
    return out


@pytest.fixture(scope="module")
def worker():
    w = RenderWorker(size=64)
    w.submit("probe", "Hopper-v5", hopper_states(1))
    try:
        wait_results(w, 1)
    except RenderError as e:
        w.close()
        if "GL" not in str(e):  # only a machine without offscreen OpenGL may skip
            raise
        pytest.skip(f"no offscreen OpenGL in the render worker ({e}): install libegl1 libegl-mesa0 libgl1-mesa-dri")
    yield w
    w.close()


def test_the_worker_draws_every_kth_state_each_shown_k_steps_long(worker):
    """Hopper steps every 8 ms (125 a second): at most 30 frames a second is every 5th state, 40 ms each; frame i is
    exactly what a second, fresh worker draws of state 5 i alone, and different states look different."""
    states = hopper_states(22, seed=1)
    worker.submit("clip", "Hopper-v5", states)
    ((key, frames, head),) = wait_results(worker, 1)
    assert key == "clip" and head["every"] == 5 and head["frame_s"] == pytest.approx(0.04)
    assert frames.shape == (5, 64, 64, 3) and frames.dtype == np.uint8 and head["ms_per_frame"] > 0
    fresh = RenderWorker(size=64)
    try:
        fresh.submit("one", "Hopper-v5", states[15:16])
        ((_, again, head1),) = wait_results(fresh, 1)
    finally:
        fresh.close()
    assert head1["every"] == 5 and np.array_equal(again[0], frames[3])
    assert not np.array_equal(frames[0], frames[4])


def test_a_clip_that_cannot_be_drawn_is_one_line_and_the_worker_goes_on(worker):
    worker.submit("bad", "Hopper-v5", np.zeros((3, 5)))  # Hopper's state has 12 numbers
    with pytest.raises(RenderError, match=r"cannot draw Hopper-v5 clips: ValueError: .*states must be \(T, 12\)"):
        wait_results(worker, 1)
    worker.submit("good", "Hopper-v5", hopper_states(2))
    assert wait_results(worker, 1)[0][0] == "good"


class _Seg:
    """What the drawer reads of a Segment: its states, env id and fall flags (none here)."""

    def __init__(self, states, env_id="Hopper-v5"):
        self.states, self.env_id, self.falls = states, env_id, None


def test_the_drawer_gives_pairs_back_in_order_as_shown_pairs(worker):
    import time

    drawer = ClipDrawer(worker)
    pairs = [(_Seg(hopper_states(6, seed=s)), _Seg(hopper_states(11, seed=s + 10))) for s in range(2)]
    for pair in pairs:
        drawer.add(pair)
    assert drawer.n_drawing == 2
    shown, t0 = [], time.monotonic()
    while len(shown) < 2 and time.monotonic() - t0 < 120:
        pair = drawer.take()
        if pair is None:
            time.sleep(0.02)
        else:
            shown.append(pair)
    assert [tuple(p) for p in shown] == pairs and all(isinstance(p, ShownPair) for p in shown)
    left, right = shown_clips(shown[0])
    assert left.shape == (2, 64, 64, 3) and right.shape == (3, 64, 64, 3) and frame_seconds(shown[0]) == 0.04
    assert drawer.n_drawing == 0
    figures = drawer.figures()
    assert figures["clip_frames_drawn"] == 10 and figures["clip_frames_per_label"] == 5.0
    with pytest.raises(ValueError, match="without recorded states"):
        drawer.add((_Seg(None), _Seg(None)))


def test_the_workers_import_chain_loads_no_tensorflow_and_nothing_of_drlhp():
    """What ``python -m envs.render_worker`` imports, drawing a clip included: never TensorFlow (EGL beside it
    segfaults) nor drlhp (which may load it)."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, numpy as np; from envs import render_worker as w;"
            "from envs.mujoco_render import StateRenderer; r = StateRenderer('InvertedPendulum-v5', 8, 8);"
            "r.render(np.zeros((1, 4))); r.close();"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'drlhp', 'pref_interface')];"
            "print('BAD', bad)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                          text=True, timeout=120)
    assert "BAD []" in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_the_worker_draws_at_the_lowest_cpu_priority(worker):
    """SCHED_IDLE (Linux): the policy's speed must not depend on who labels (envs/render_worker.lowest_priority)."""
    import os

    if not hasattr(os, "sched_getscheduler"):
        pytest.skip("no scheduling policies here")
    tasks = [int(t) for t in os.listdir(f"/proc/{worker.proc.pid}/task")]
    policies = {t: os.sched_getscheduler(t) for t in tasks}  # every thread: numpy's and Mesa's (llvmpipe) too
    assert all(p == os.SCHED_IDLE for p in policies.values() if p != os.SCHED_BATCH), policies


def test_a_drawer_whose_clip_cannot_be_drawn_keeps_failing_with_that_line(worker):
    import time

    drawer = ClipDrawer(worker)
    drawer.add((_Seg(np.zeros((3, 5))), _Seg(np.zeros((3, 5)))))
    t0 = time.monotonic()
    with pytest.raises(RenderError, match="cannot draw Hopper-v5 clips"):
        while time.monotonic() - t0 < 60:
            drawer.take()
            time.sleep(0.02)
    with pytest.raises(RenderError, match="cannot draw Hopper-v5 clips"):
        drawer.take()  # kept: the web labeller's tick raises it and the run stops, saying why
    assert drawer.failure is not None
    with pytest.raises(RenderError):  # the second clip's error, still in the shared worker's results
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            worker.results()
            time.sleep(0.02)


def test_the_draw_priority_is_normal_while_a_person_waits_with_no_pair_ready_and_idle_once_pairs_are():
    from pref_interface.clip_drawer import DrawPriority

    priority = DrawPriority(ready_ahead=2)
    assert not priority.urgent
    assert not priority.update(person_waits=False, n_ready=0, n_drawing=2)  # no one waits: idle
    assert not priority.update(person_waits=True, n_ready=1, n_drawing=2)  # a pair is ready: idle
    assert not priority.update(person_waits=True, n_ready=0, n_drawing=0)  # nothing to draw: idle
    assert priority.update(person_waits=True, n_ready=0, n_drawing=2) and priority.urgent  # waits, none ready
    assert not priority.update(person_waits=False, n_ready=1, n_drawing=2) and priority.urgent  # one ahead: not yet
    assert priority.update(person_waits=False, n_ready=2, n_drawing=2) and not priority.urgent  # two ahead: idle
    assert priority.update(person_waits=True, n_ready=0, n_drawing=1) and priority.urgent
    assert priority.update(person_waits=True, n_ready=0, n_drawing=0) and not priority.urgent  # all drawn


def _policies(pid: int) -> set[int]:
    import os

    return {os.sched_getscheduler(int(task)) for task in os.listdir(f"/proc/{pid}/task")}


def test_the_worker_leaves_idle_while_a_person_waits_and_returns_to_it():
    """The render worker's every thread goes to the normal policy when a person waits with no pair ready (the
    drawer's need) and back to SCHED_IDLE once two are ready; where the system refuses, the figures say so."""
    import os
    import time

    from drlhp.processes.messages import Segment

    worker = RenderWorker(size=8)
    try:
        deadline = time.monotonic() + 120
        while _policies(worker.proc.pid) != {os.SCHED_IDLE}:  # the worker put itself at idle as it started
            assert time.monotonic() < deadline and worker.proc.poll() is None
            time.sleep(0.05)
        drawer = ClipDrawer(worker)
        states = hopper_states(3)
        segment = Segment(np.zeros((3, 4), np.float32), np.zeros((3, 0, 0), np.uint8), np.zeros(3, np.float32),
                          "Hopper-v5", 0, 0, states).check()
        drawer.add((segment, segment))
        drawer.need(person_waits=True, ready_ahead=0)
        if worker.priority_refused:
            assert drawer.figures()["clip_priority_refused"] == 1
            pytest.skip("this machine refuses to raise a process from SCHED_IDLE (no CAP_SYS_NICE, RLIMIT_NICE 0)")
        assert drawer.priority.urgent and _policies(worker.proc.pid) == {os.SCHED_OTHER}
        drawer.need(person_waits=False, ready_ahead=2)  # two pairs ready ahead (on the page)
        assert not drawer.priority.urgent and _policies(worker.proc.pid) == {os.SCHED_IDLE}
        assert drawer.figures()["clip_priority_switches"] == 2
    finally:
        worker.close()


def test_a_fall_is_marked_on_the_frames_of_its_step_and_the_next_half_second_only():
    """pref_interface.fall_mark: the frames drawn from a fall's step on, for half a second of the task's time, carry
    a red border and banner (they differ from the same frames unmarked there, and only there); other frames none."""
    from pref_interface.fall_mark import BANNER, BORDER, mark_falls

    rng = np.random.default_rng(0)
    frames = rng.integers(0, 100, (30, 64, 64, 3), dtype=np.uint8)  # no pure red anywhere
    falls = np.zeros(150, np.bool_)
    falls[52] = True  # Hopper: every 5th state drawn, 0.04 s each: the frame of step 52 is frame 10, and 0.5 s is 13
    out = mark_falls(frames, falls, every=5, frame_s=0.04)
    changed = [j for j in range(30) if not np.array_equal(out[j], frames[j])]
    assert changed == list(range(10, 23))
    border, band = round(BORDER * 64), round(BANNER * 64)
    region = np.zeros((64, 64), bool)
    region[:band], region[-border:], region[:, :border], region[:, -border:] = True, True, True, True
    for j in changed:
        differs = (out[j] != frames[j]).any(axis=-1)
        assert differs[region].mean() > 0.9 and not differs[~region].any()  # the mark, and nothing else
    assert mark_falls(frames, np.zeros(150, np.bool_), 5, 0.04) is frames
    assert mark_falls(frames, None, 5, 0.04) is frames


def test_the_drawer_marks_the_frames_of_a_segments_fall(worker):
    """Through the render worker: the same Hopper states drawn for a segment with a fall and without; the frames
    differ exactly where the fall's mark is."""
    from drlhp.processes.messages import Segment

    states = hopper_states(25, seed=2)

    def segment(falls):
        return Segment(np.zeros((25, 4), np.float32), np.zeros((25, 0, 0), np.uint8), np.zeros(25, np.float32),
                       "Hopper-v5", 0, 0, states, falls).check()

    fell = np.zeros(25, np.bool_)
    fell[7] = True
    drawer = ClipDrawer(worker)
    drawer.add((segment(fell), segment(np.zeros(25, np.bool_))))
    import time

    deadline = time.monotonic() + 120
    while (shown := drawer.take()) is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    marked, plain = shown.clips
    assert marked.shape == plain.shape == (5, 64, 64, 3)  # every 5th of 25 states
    same = [bool(np.array_equal(a, b)) for a, b in zip(marked, plain)]
    assert same == [True, False, False, False, False]  # step 7 is frame 1's; the mark holds 0.5 s (13 frames)
    assert (marked[1, 0, 32] == (220, 30, 30)).all()  # red at the top

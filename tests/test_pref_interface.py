"""The preference interface's parts and the queue policies: oracle, pool and pair selection,
label schedule, segment cutting, the segment queue's drop policy, latest-wins weights."""
import multiprocessing as mp
import time

import numpy as np
import pytest

from drlhp.policy.segments import SegmentCutter
from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Segment
from drlhp.processes.ports import PrefInterfacePorts
from drlhp.processes.queues import LatestValue, put_or_drop
from pref_interface.oracle import SyntheticOracle
from pref_interface.pool import SegmentPool
from pref_interface.schedule import LabelSchedule


def seg(value: int, rewards, t: int = 4) -> Segment:
    obs = np.full((t, 6, 6, 4), value, np.uint8)
    return Segment(obs, obs[..., -1].copy(), np.asarray(rewards, np.float32), "Test-v0", 0, 0).check()


def test_oracle_prefers_larger_true_return_and_ties_are_half():
    oracle = SyntheticOracle()
    assert oracle.label(seg(1, [1, 0, 0, 1]), seg(2, [0, 0, 0, 1])) == MU_LEFT
    assert oracle.label(seg(1, [-1, 0, 0, 0]), seg(2, [0, 0, 0, 0])) == MU_RIGHT
    assert oracle.label(seg(1, [1, -1, 0, 0]), seg(2, [0, 0, 0, 0])) == MU_EQUAL
    assert oracle.label(seg(1, [0.5, 0.5, 0, 0]), seg(2, [1, 0, 0, 0])) == MU_EQUAL


def test_pool_never_asks_a_pair_twice_and_is_bounded():
    pool = SegmentPool(max_segments=6, seed=0)
    for v in range(10):
        pool.add(seg(v, [v, 0, 0, 0]))
    pool.add(seg(9, [9, 0, 0, 0]))  # the same content again is not a new segment
    assert len(pool) == 6
    asked = set()
    while (pair := pool.select("random", 10)) is not None:
        key = frozenset((pair[0].id, pair[1].id))
        assert key not in asked and len(key) == 2
        asked.add(key)
        pool.mark_asked(*pair)
    assert len(asked) == 15  # every pair of 6 segments, each once
    values = {int(s.obs[0, 0, 0, 0]) for s in pool._segments.values()}
    assert values == set(range(4, 10)), "the oldest segments left the pool"


def test_variance_selection_takes_the_most_disputed_pair():
    pool = SegmentPool(max_segments=10, seed=1)
    for v in range(6):
        pool.add(seg(v, [0, 0, 0, 0]))

    def probs(s1, s2):  # members disagree most on pairs containing segment 5
        has5 = (s1[:, 0, 0, 0, 0] == 5) | (s2[:, 0, 0, 0, 0] == 5)
        spread = np.where(has5, 0.4, 0.05)
        return np.stack([0.5 - spread, 0.5 + spread])

    for _ in range(5):
        a, b = pool.select("variance", 10, probs)
        assert 5 in (int(a.obs[0, 0, 0, 0]), int(b.obs[0, 0, 0, 0]))
        pool.mark_asked(a, b)


def test_label_schedules():
    const = LabelSchedule("constant", n_initial=100, n_labels=1000, total_frames=1_000_000)
    assert const.allowed(0) == 100
    assert const.allowed(500_000) == 600
    assert const.allowed(2_000_000) == 1100
    paper = LabelSchedule("paper", n_initial=0, n_labels=1000, total_frames=50_000_000)
    # rate proportional to 5e6 / (T + 5e6): the first 5M frames get ln 2 / ln 11 of the labels
    assert paper.allowed(5_000_000) == int(1000 * np.log(2) / np.log(11))
    assert paper.allowed(50_000_000) == 1000
    even = LabelSchedule("constant", n_initial=0, n_labels=1000, total_frames=50_000_000)
    assert paper.allowed(5_000_000) > 2.5 * even.allowed(5_000_000)  # front-loaded


def test_segments_are_cut_from_every_worker_in_turn_and_copied():
    cutter = SegmentCutter("Test-v0", 3, (6, 6, 4), segment_length=4, segments_per_cut=2,
                           frames_to_watch=lambda o: o[..., -1])
    workers = []
    for r in range(4):  # 4 rollouts of 2 steps: cuts after rollouts 2 and 4
        obs = np.zeros((2, 3, 6, 6, 4), np.uint8)
        obs[:, :, 0, 0, 0] = np.arange(3)  # each worker's frames carry its index
        true = np.ones((2, 3), np.float32)
        segments, cut_returns = cutter.add(obs, true, None, step=100 * r)
        obs[:] = 255  # the caller reuses its buffers: segments must hold copies
        for s in segments:
            assert s.obs.shape == (4, 6, 6, 4) and s.frames.shape == (4, 6, 6)
            assert (s.obs[:, 0, 0, 0] == s.worker).all() and s.true_return == 4.0
            workers.append(s.worker)
        for pred, true_ret in cut_returns:
            assert np.isnan(pred).all() and (true_ret == 4.0).all()
    assert workers == [0, 1, 2, 0]


def test_full_segment_queue_drops_and_never_blocks():
    ctx = mp.get_context("spawn")
    q = ctx.Queue(maxsize=2)
    t0 = time.perf_counter()
    results = [put_or_drop(q, seg(v, [0, 0, 0, 0])) for v in range(5)]
    assert time.perf_counter() - t0 < 1.0
    assert results == [True, True, False, False, False]
    assert int(q.get(timeout=5).obs[0, 0, 0, 0]) == 0
    assert put_or_drop(q, seg(7, [0, 0, 0, 0]))  # room again


def test_latest_value_gives_only_the_newest():
    ctx = mp.get_context("spawn")
    ch = LatestValue(ctx)
    assert ch.poll() is None
    for v in range(3):
        ch.publish(v)
    time.sleep(0.2)
    assert ch.poll() == 2
    assert ch.poll() is None


def test_cutter_cuts_no_more_than_the_budget_and_counts_the_rest():
    cutter = SegmentCutter("Test-v0", 4, (6, 6, 4), segment_length=2, segments_per_cut=3,
                           frames_to_watch=lambda o: o[..., -1])
    obs, true = np.zeros((4, 4, 6, 6, 4), np.uint8), np.zeros((4, 4), np.float32)
    segments, cut_returns = cutter.add(obs, true, None, step=0, budget=4)  # two cuts: 3, then 1
    assert len(segments) == 4 and len(cut_returns) == 2 and cutter.not_cut == 2
    assert [s.worker for s in segments] == [0, 1, 2, 3]
    segments, cut_returns = cutter.add(obs, true, None, step=0, budget=0)
    assert segments == [] and len(cut_returns) == 2 and cutter.not_cut == 8  # returns still measured


def test_segment_flow_wants_only_more_and_carries_the_policy_step():
    from drlhp.processes.queues import SegmentFlow

    flow = SegmentFlow(mp.get_context("spawn"))
    assert flow.wanted() == 0 and flow.policy_step() == 0
    flow.ask_for(10)
    flow.ask_for(7)
    flow.report_step(400)
    assert flow.wanted() == 10 and flow.policy_step() == 400


def _stacked(t: int, n_stack: int = 4, seed: int = 0) -> np.ndarray:
    strip = np.random.default_rng(seed).integers(0, 256, (24, 24, t + n_stack - 1), dtype=np.uint8)
    return np.stack([strip[..., i:i + n_stack] for i in range(t)])


@pytest.mark.parametrize("case", ["stacked", "episode_boundary", "own_frames"])
def test_compact_pickling_gives_back_an_equal_segment(case):
    import pickle
    from multiprocessing.reduction import ForkingPickler

    from drlhp.processes.segment_wire import compact_nbytes_sent, register_compact_pickling

    obs = _stacked(5)
    frames = obs[..., -1].copy()
    if case == "episode_boundary":  # a reset in the middle: the stacks are not shifted copies
        obs[3] = obs[3, ..., :1]
        frames = obs[..., -1].copy()
    if case == "own_frames":
        frames = 255 - frames
    original = Segment(obs, frames, np.arange(5, dtype=np.float32), "Test-v0", 2, 40).check()
    plain = pickle.dumps(original)  # whole: ForkingPickler may already be compact here (an earlier test's register)
    register_compact_pickling()
    counted = compact_nbytes_sent()
    wire = ForkingPickler.dumps(original)
    assert 0 < len(wire) - (compact_nbytes_sent() - counted) < 500  # the arrays' bytes: all but the framing
    back = pickle.loads(wire)
    assert isinstance(back, Segment) and back.id == original.id
    for name in ("obs", "frames", "true_rewards"):
        a, b = getattr(original, name), getattr(back, name)
        assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all() and b.flags.c_contiguous
    assert (back.env_id, back.worker, back.step) == ("Test-v0", 2, 40)
    if case == "stacked":  # 8 frames instead of 20 + 5
        assert len(wire) < 0.4 * len(plain)
    assert pickle.dumps(original) == plain, "ordinary pickling is left alone"


def test_the_interface_asks_for_its_pools_room_then_two_segments_per_pair(tmp_path):
    import queue
    import threading

    from drlhp.config import PrefConfig, RunConfig
    from drlhp.processes.queues import SegmentFlow
    from pref_interface.process import PrefInterface

    cfg = RunConfig(mode="train_policy_with_preferences", env="MovingDot-v0", million_timesteps=0.001,
                    prefs=PrefConfig(n_initial_prefs=3, n_labels=100, segment_pool_size=10, segment_queue_size=4))
    flow = SegmentFlow(mp.get_context("spawn"))
    segment_queue = queue.Queue()
    ports = PrefInterfacePorts(stop_event=threading.Event(), segment_queue=segment_queue, segment_flow=flow,
                               preference_queue=queue.Queue())
    iface = PrefInterface(cfg, ports, str(tmp_path), 1)
    assert flow.wanted() == 4  # the pool's room (10), but no more than the queue holds beyond those received
    for v in range(6):
        segment_queue.put(seg(v, [v, 0, 0, 0]))
    iface.receive_segments()
    assert flow.wanted() == 10  # the pool's room
    for _ in range(3):  # the initial labels: two fresh segments asked for each pair
        iface.send(iface.next_pair(), MU_LEFT)
    assert flow.wanted() == 6 + 4 and iface.segments_wanted == 10 + 2 * 3 - 6
    assert iface.next_pair() is None  # no more labels allowed until the policy moves on ...
    flow.report_step(500)  # ... which it says through the flow, not through segments
    iface.receive_segments()
    assert iface.allowed == 3 + 50 and iface.next_pair() is not None


@pytest.mark.parametrize("kind", ["constant", "paper"])
def test_frames_before_inverts_the_schedule(kind):
    """frames_before(n): the first frame count at which the schedule allows more than n labels."""
    from pref_interface.schedule import LabelSchedule

    schedule = LabelSchedule(kind, n_initial=250, n_labels=650, total_frames=2_000_000)
    assert schedule.planned == 900 and schedule.frames_before(249) == 0 and schedule.frames_before(900) is None
    for n in (250, 251, 400, 777, 899):
        frames = schedule.frames_before(n)
        assert schedule.allowed(frames) > n >= schedule.allowed(frames - 1)


def test_a_persons_labels_set_the_step_the_policy_waits_at_and_the_oracles_set_none(tmp_path):
    """Where a person labels (web), the interface publishes the step at which the schedule would allow more than
    given + margin labels, at most the budget's last step while labels are owed, none once all are given; where
    the oracle labels, nothing: its runs are paced exactly as before."""
    import queue
    import threading

    from drlhp.config import PrefConfig, RunConfig
    from drlhp.processes.queues import SegmentFlow
    from pref_interface.process import PrefInterface
    from pref_interface.schedule import LabelSchedule

    for labeller in ("web", "oracle"):
        cfg = RunConfig(mode="train_policy_with_preferences", env="MovingDot-v0", million_timesteps=0.001,
                        prefs=PrefConfig(labeller=labeller, n_initial_prefs=2, n_labels=10, segment_pool_size=10,
                                         person_pace_margin=3))
        flow = SegmentFlow(mp.get_context("spawn"))
        segment_queue = queue.Queue()
        for v in range(10):
            segment_queue.put(seg(v, [v, 0, 0, 0]))
        ports = PrefInterfacePorts(stop_event=threading.Event(), segment_queue=segment_queue, segment_flow=flow,
                                   preference_queue=queue.Queue())
        iface = PrefInterface(cfg, ports, str(tmp_path / labeller), 1)
        iface.receive_segments()
        schedule = LabelSchedule("constant", 2, 10, 1000)  # 1,000 agent steps of MovingDot, one frame each
        limits = [flow.step_limit()]
        for _ in range(12):
            flow.report_step(1000)  # the policy at its end: every label allowed
            iface.receive_segments()
            iface.send(iface.next_pair(), MU_LEFT)
            limits.append(flow.step_limit())
        if labeller == "oracle":
            assert limits == [None] * 13
            continue
        # given 0: more than 0 + 3 labels from step 0 (the 2 initial ones and 2 of the 10 at steps 0, 100, 200)
        expected = [None if given >= 12 else 1000 if schedule.frames_before(given + 3) is None
                    else min(1000, schedule.frames_before(given + 3)) for given in range(13)]
        assert limits == expected
        assert limits[0] == 200 and limits[9:12] == [1000, 1000, 1000] and limits[12] is None
        assert iface.labels_to_go == 0


class _Flow:
    """A segment flow whose step limit moves on by itself after ``hold`` reads: the preference interface's side."""

    def __init__(self, limits):
        self.limits, self.reported, self.reads = list(limits), [], 0

    def step_limit(self):
        self.reads += 1
        return self.limits[0] if len(self.limits) == 1 else self.limits.pop(0)

    def report_step(self, step):
        self.reported.append(step)


def test_label_pace_waits_at_the_limit_and_at_the_end_until_the_labels_move_it():
    import threading

    from drlhp.policy.feeds import LabelPace
    from drlhp.processes.ports import PolicyPorts

    flow = _Flow([500])
    pace = LabelPace(PolicyPorts(segment_flow=flow, stop_event=threading.Event()), total_timesteps=1000)
    pace.POLL_S = 0.0
    pace.before_update(400)  # below the limit: no wait, no report
    assert flow.reported == [] and pace.waits == 0
    flow.limits = [500, 500, 500, 700]  # the person's labels move the limit on after a few reads
    pace.before_update(500)
    assert flow.reported == [500] and pace.waits == 1 and flow.limits == [700]
    pace.before_end(900)  # a sitting that ends before the budget's end does not wait
    flow.limits = [1000, 1000, None]  # at the end: until every planned label is in
    pace.before_end(1000)
    assert flow.reported == [500, 1000] and pace.waits == 2 and flow.limits == [None]
    stop = threading.Event()
    stop.set()
    stopped = LabelPace(PolicyPorts(segment_flow=_Flow([0]), stop_event=stop), total_timesteps=1000)
    stopped.before_update(10)  # Ctrl-C: no wait (the loop then ends, saved)
    assert stopped.waits == 0

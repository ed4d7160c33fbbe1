"""MuJoCo segments carry the simulator's states where a person labels (issue 30): recorded by PPO's rollout before
each step (the state action t was taken in, aligned with x_t), cut with the segment, carried by its wire form and
checked; on the synthetic oracle's path nothing is recorded."""
import pickle
from dataclasses import replace

import numpy as np
import pytest

from drlhp.policy.segments import SegmentCutter
from drlhp.processes.messages import Segment


def _empty_frames(obs):
    return np.zeros((len(obs), 0, 0), np.uint8)


def _segment(t=4, states=True):
    rng = np.random.default_rng(0)
    return Segment(rng.normal(size=(t, 5)).astype(np.float32), np.zeros((t, 0, 0), np.uint8),
                   rng.normal(size=t).astype(np.float32), "Hopper-v5", 1, 64,
                   rng.normal(size=(t, 12)) if states else None)


def test_a_segment_takes_states_of_its_length_in_float64_or_none():
    _segment().check()
    _segment(states=False).check()
    for wrong in (np.zeros((3, 12)), np.zeros((4, 12), np.float32), np.zeros(4)):
        with pytest.raises(ValueError, match="Segment.states"):
            replace(_segment(), states=wrong).check()


def test_states_travel_in_the_segments_compact_wire_form(monkeypatch):
    from multiprocessing.reduction import ForkingPickler

    from drlhp.processes.segment_wire import register_compact_pickling

    monkeypatch.setattr(ForkingPickler, "_extra_reducers", dict(ForkingPickler._extra_reducers))
    register_compact_pickling()
    for original in (_segment(), _segment(states=False)):
        back = pickle.loads(ForkingPickler.dumps(original))
        assert back.id == original.id
        if original.states is None:
            assert back.states is None
        else:
            assert back.states.dtype == np.float64 and np.array_equal(back.states, original.states)


def test_a_cutter_with_a_state_size_cuts_each_workers_states_and_wants_them_every_time():
    cutter = SegmentCutter("Hopper-v5", 2, (5,), segment_length=3, segments_per_cut=2, frames_to_watch=_empty_frames,
                           obs_dtype=np.float32, state_size=4)
    obs = np.zeros((3, 2, 5), np.float32)
    states = np.arange(3 * 2 * 4, dtype=np.float64).reshape(3, 2, 4) / 3.0
    segments, _ = cutter.add(obs, np.zeros((3, 2), np.float32), None, step=6, states=states)
    assert [s.worker for s in segments] == [0, 1]
    for s in segments:
        assert np.array_equal(s.states, states[:, s.worker])
    with pytest.raises(ValueError, match="states are given exactly"):
        cutter.add(obs, np.zeros((3, 2), np.float32), None, step=6)
    plain = SegmentCutter("Hopper-v5", 2, (5,), 3, 2, _empty_frames, np.float32)
    assert all(s.states is None for s in plain.add(obs, np.zeros((3, 2), np.float32), None, step=6)[0])
    with pytest.raises(ValueError, match="states are given exactly"):
        plain.add(obs, np.zeros((3, 2), np.float32), None, step=6, states=states)


def _run(tmp_path, labeller, monkeypatch):
    from drlhp.policy.process import run_policy
    from test_ppo_prefs import _cfg, _ports, _segments, _SpyReward

    monkeypatch.setattr("drlhp.policy.reward_source.PredictedReward", _SpyReward)
    _SpyReward.not_ready, _SpyReward.made = 1, []
    cfg = _cfg(million_timesteps=0.000256)
    cfg = replace(cfg, prefs=replace(cfg.prefs, labeller=labeller))
    ports = _ports(10_000)
    run_policy(cfg, ports, str(tmp_path), log=lambda *a, **k: None)
    return _segments(ports)


@pytest.mark.parametrize("labeller", ["web", "window"])
def test_where_a_person_labels_hopper_each_segment_carries_the_state_each_action_was_taken_in(
        tmp_path, monkeypatch, labeller):
    """Hopper-v5's observation is qpos[1:] and qvel clipped to [-10, 10]: x_t's observation part must be exactly the
    recorded state's, step by step (so the state is the one action t was taken in, not the one after it)."""
    segments = _run(tmp_path, labeller, monkeypatch)
    assert segments
    for s in segments:
        assert s.states is not None and s.states.shape == (16, 12) and s.states.dtype == np.float64
        qpos, qvel = s.states[:, :6], s.states[:, 6:]
        from_state = np.concatenate([qpos[:, 1:], np.clip(qvel, -10, 10)], axis=1).astype(np.float32)
        np.testing.assert_allclose(s.obs[:, :11], from_state, rtol=1e-6, atol=1e-6)


def test_the_oracles_segments_carry_no_states(tmp_path, monkeypatch):
    segments = _run(tmp_path, "oracle", monkeypatch)
    assert segments and all(s.states is None for s in segments)


def test_falls_go_with_the_states_through_the_cutter_and_the_wire(monkeypatch):
    """A step's fall flag (info["fell"]) is cut with its segment's states, carried by the wire form and checked (only
    with states, (T,) bool). (The states reach the database, which keeps them for review: tests/test_pref_db.py.)"""
    from multiprocessing.reduction import ForkingPickler

    from drlhp.processes.segment_wire import register_compact_pickling

    cutter = SegmentCutter("Hopper-v5", 2, (5,), segment_length=3, segments_per_cut=2, frames_to_watch=_empty_frames,
                           obs_dtype=np.float32, state_size=4)
    falls = np.zeros((3, 2), np.bool_)
    falls[1, 1] = True
    segments, _ = cutter.add(np.zeros((3, 2, 5), np.float32), np.zeros((3, 2), np.float32), None, step=6,
                             states=np.zeros((3, 2, 4)), falls=falls)
    assert [s.falls.tolist() for s in segments] == [[False, False, False], [False, True, False]]
    monkeypatch.setattr(ForkingPickler, "_extra_reducers", dict(ForkingPickler._extra_reducers))
    register_compact_pickling()
    back = pickle.loads(ForkingPickler.dumps(segments[1]))
    assert back.falls.dtype == np.bool_ and back.falls.tolist() == [False, True, False]
    for wrong in (np.zeros(3, np.float32), np.zeros(2, np.bool_)):
        with pytest.raises(ValueError, match="Segment.falls"):
            replace(segments[0], falls=wrong).check()
    with pytest.raises(ValueError, match="Segment.falls"):
        replace(segments[0], states=None).check()  # falls only with states


def test_a_hopper_rollout_where_a_person_labels_records_each_steps_fall():
    """PPO's rollout on the fixed-length Hopper, recording states: its falls are info["fell"] step by step (a
    random policy's Hopper falls within a few dozen steps), and a rollout without states records none."""
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy
    from drlhp.policy.ppo.rollout import RolloutCollector
    from envs.fixed_length import any_vector_env

    envs = any_vector_env("Hopper-v5", 2, 100.0)
    try:
        space = envs.single_action_space
        policy = PPOPolicy(envs.single_observation_space.shape[0], space.shape[0],
                           PPOConfig(n_envs=2, n_steps=200, n_minibatches=4), 0, space.low, space.high)
        seen = []
        step = envs.step

        def spy(actions):
            out = step(actions)
            seen.append(np.asarray(out[4]["fell"], bool) & out[4]["_fell"])
            return out

        envs.step = spy
        rollout = RolloutCollector(envs, policy, seed=0, record_states=True).run()
        assert rollout.falls.shape == (200, 2) and rollout.falls.any()
        assert np.array_equal(rollout.falls, np.array(seen))
        assert RolloutCollector(envs, policy, seed=0).run().falls is None
    finally:
        envs.close()

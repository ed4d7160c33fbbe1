"""Metrics really land in TensorBoard; checkpoints are atomic and refuse corrupt files."""
import json

import numpy as np
import pytest

from drlhp.policy.checkpoint import (
    CheckpointError,
    find_latest_checkpoint,
    load_policy_checkpoint,
    save_policy_checkpoint,
)
from drlhp.runtime.metrics import MetricsLogger


def test_easy_tf_log_events_land_and_progress_csv(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logger = MetricsLogger(tmp_path)
    logger.log(100, {"policy/entropy": 1.5, "system/agent_steps_per_s": 900.0})
    logger.log(200, {"policy/entropy": 1.25, "system/agent_steps_per_s": 950.0, "policy/new_metric": 3.0})
    logger.close()
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    events = acc.Scalars("policy/entropy")
    assert [(e.step, e.value) for e in events] == [(100, 1.5), (200, 1.25)]
    assert [e.value for e in acc.Scalars("policy/new_metric")] == [3.0]
    lines = (tmp_path / "progress.csv").read_text().splitlines()
    assert lines[0] == "step,policy/entropy,system/agent_steps_per_s,policy/new_metric"
    assert lines[1:] == ["100,1.5,900.0,", "200,1.25,950.0,3.0"]


def test_checkpoint_round_trip_keeps_newest_three(tmp_path):
    for updates in (10, 20, 30, 40):
        save_policy_checkpoint(tmp_path, updates, {"weight_0": np.full(3, updates, np.float32)}, {"timesteps": updates})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy-20.npz", "policy-30.npz", "policy-40.npz"]
    arrays, meta = load_policy_checkpoint(tmp_path)
    assert meta["updates"] == 40 and meta["timesteps"] == 40
    np.testing.assert_array_equal(arrays["weight_0"], np.full(3, 40, np.float32))
    assert find_latest_checkpoint(tmp_path).name == "policy-40.npz"


def test_corrupt_or_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="no policy checkpoint"):
        load_policy_checkpoint(tmp_path)
    (tmp_path / "policy-5.npz").write_bytes(b"not a zip file")
    with pytest.raises(CheckpointError, match="cannot read"):
        load_policy_checkpoint(tmp_path)


def test_checkpoint_never_needs_pickle(tmp_path):
    path = save_policy_checkpoint(tmp_path, 1, {"weight_0": np.zeros(2)}, {"note": "x"})
    with np.load(path, allow_pickle=False) as data:
        assert json.loads(str(data["meta"]))["note"] == "x"

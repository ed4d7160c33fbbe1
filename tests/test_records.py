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
from drlhp.records.metrics import MetricsLogger


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


def test_a_runs_curves_are_drawn_from_its_progress_files(tmp_path):
    """drlhp.records.curves (called by the pipeline at the end of every run; floyd draws its compare
    figure with the same helpers): curves.png from progress.csv and progress_reward.csv, titled from the
    run's records; no panel, no file."""
    from drlhp.records.curves import _title, read_progress_csv, write_run_curves

    run = tmp_path / "dot-run"
    run.mkdir()
    assert write_run_curves(run) is None  # nothing to draw yet
    (run / "progress.csv").write_text("step,policy/true_return_last100,policy/entropy\n"
                                      "100,-3.5,1.2\n200,,1.1\n300,-1.0,0.9\n400,2.0\n")  # a half-written last row
    (run / "progress_reward.csv").write_text("step,reward/train_accuracy,reward/val_accuracy\n1,0.5,0.4\n2,0.7,0.6\n")
    cols = read_progress_csv(run / "progress.csv")
    assert cols["step"] == [100.0, 200.0, 300.0] and cols["policy/entropy"] == [1.2, 1.1, 0.9]
    assert cols["policy/true_return_last100"][1] != cols["policy/true_return_last100"][1]  # an empty cell: NaN
    (run / "config.json").write_text(json.dumps({"mode": "train_policy_with_preferences", "env": "MovingDot-v0",
                                                 "seed": 3}))
    (run / "status.json").write_text(json.dumps({"status": "finished"}))
    assert _title(run) == "dot-run: train_policy_with_preferences on MovingDot-v0, seed 3 (finished)"
    path = write_run_curves(run)
    assert path == run / "curves.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_children_write_the_status_once_the_parent_is_gone(tmp_path):
    """record_parent_gone: several children merge their outcomes into status.json under one lock, in any
    order; "saved" once every role of pids.json has saved; a final outcome is never set back to stopping."""
    from drlhp.records.run_record import record_parent_gone

    (tmp_path / "pids.json").write_text(json.dumps({"parent": 1, "policy": 2, "pref_interface": 3,
                                                    "reward_predictor": 4}))
    (tmp_path / "status.json").write_text(json.dumps({"status": "running", "time": "2026-11-26T08:00:00"}))
    assert record_parent_gone(tmp_path, "policy", "stopping")["status"] == "parent gone: saving"
    assert record_parent_gone(tmp_path, "policy", "saved")["status"] == "parent gone: saving"
    record_parent_gone(tmp_path, "policy", "stopping")  # the watch thread, late: changes nothing
    assert record_parent_gone(tmp_path, "reward_predictor", "saved")["status"] == "parent gone: saving"
    last = record_parent_gone(tmp_path, "pref_interface", "saved")
    assert json.loads((tmp_path / "status.json").read_text()) == last
    assert last["status"] == "parent gone: saved"
    assert last["roles"] == {"policy": "saved", "pref_interface": "saved", "reward_predictor": "saved"}
    last = record_parent_gone(tmp_path, "pref_interface", "cut short 8 s after the parent died")
    assert last["status"] == "parent gone: not all saved"


def test_concurrent_children_lose_no_outcome(tmp_path):
    """Many processes at once (the flock on the run directory): every outcome lands."""
    import multiprocessing as mp

    from drlhp.records.run_record import record_parent_gone

    roles = [f"role{i}" for i in range(8)]
    (tmp_path / "pids.json").write_text(json.dumps({"parent": 1, **{r: i for i, r in enumerate(roles)}}))
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=record_parent_gone, args=(tmp_path, role, "saved")) for role in roles]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["status"] == "parent gone: saved" and set(status["roles"]) == set(roles)


def test_a_planned_stop_during_an_atomic_write_waits_for_the_whole_file(tmp_path):
    """--stop_after_hours's alarm (and SIGTERM) firing inside an atomic write: the write ends, the file is whole, and
    the stop is raised after it. Before, it was raised inside numpy's savez, whose zip then failed to close and
    turned the planned stop into a crash (session 31's suite: ValueError "Can't close the ZIP file")."""
    import signal
    import time

    from drlhp.processes.interrupts import SittingOver, sigterm_as_interrupt, sitting_timer
    from drlhp.records import atomic
    from drlhp.records.atomic import interrupts_deferred

    arrays = {"w": np.arange(1000, dtype=np.float32)}

    def slow_npz(f):  # the alarm comes while savez writes
        time.sleep(0.3)
        np.savez(f, **arrays)

    path = tmp_path / "policy.npz"
    started = time.monotonic()
    with pytest.raises(SittingOver):
        with sitting_timer(0.05 / 3600):
            atomic._atomic_write(path, slow_npz)
            raise AssertionError("the stop must come as the write ends, before this line")  # pragma: no cover
    assert time.monotonic() - started >= 0.3  # it waited for the write
    assert np.array_equal(np.load(path, allow_pickle=False)["w"], arrays["w"])
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]

    with pytest.raises(KeyboardInterrupt):  # SIGTERM the same way; the write is whole
        with sigterm_as_interrupt():
            atomic._atomic_write(tmp_path / "b.json", lambda f: (signal.raise_signal(signal.SIGTERM),
                                                                f.write(b"{}\n")))
    assert (tmp_path / "b.json").read_text() == "{}\n"

    with pytest.raises(SittingOver) as stop:  # a write that fails still lets the stop through, the error its context
        with sitting_timer(0.05 / 3600):
            with interrupts_deferred():
                time.sleep(0.2)
                raise OSError("disk full")
    assert isinstance(stop.value.__context__, OSError)
    with interrupts_deferred():  # nothing left pending
        pass

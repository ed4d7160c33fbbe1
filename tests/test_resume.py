"""A preference run stopped with Ctrl-C and started again with the same command goes on where it
stopped: the policy (weights, step counter, learning-rate schedule), the predictor (weights, steps),
the preference database and the label schedule's count (issue 4: runs longer than one sitting)."""
import csv
import json
import signal
import subprocess

import numpy as np
import pytest

from test_pipeline import _json, _kill_session, _load_prefs, _output, _popen, _wait_for

# stopped once the policy has made STOP_AT steps, then resumed to BUDGET; a policy checkpoint every
# CKPT_UPDATES updates of 4 envs x 5 steps (1,000 steps), so a resume from 0 cannot pass for one from a checkpoint
BUDGET, STOP_AT, CKPT_UPDATES = 8_000, 2_000, 50
N_INITIAL, N_LABELS = 20, 200
ARGS = ["--env", "MovingDot-v0", "--synthetic_prefs", "--preset", "none", "--n_envs", 4, "--segment_length", 5,
        "--n_initial_prefs", N_INITIAL, "--n_initial_epochs", 1, "--n_labels", N_LABELS,
        "--million_timesteps", BUDGET / 1e6, "--log_interval", 1, "--n_predictors", 2, "--reward_batch_size", 4,
        "--policy_ckpt_interval", CKPT_UPDATES, "--prefs_save_interval", 5, "--seed", 3]


def _steps(path, column="step") -> list[float]:
    with open(path) as f:
        return [float(r[column]) for r in csv.DictReader(f) if r.get(column)]


def _predictor_steps(run_dir) -> int:
    with np.load(run_dir / "reward_predictor" / "reward_predictor.npz", allow_pickle=False) as data:
        return int(json.loads(str(data["meta"]))["steps"])


@pytest.mark.slow
def test_stop_and_resume_continues_the_run(cli, tmp_path):
    run_dir = tmp_path / "run"
    proc = _popen(tmp_path, *ARGS, "--run_dir", run_dir)
    try:
        _wait_for(lambda: (run_dir / "progress.csv").exists() and any(
            s >= STOP_AT for s in _steps(run_dir / "progress.csv")), 240, proc, f"{STOP_AT:,} policy steps")
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("run.py still running 60 s after SIGINT\n" + _output(tmp_path)[1][-3000:]) from None
    finally:
        _kill_session(proc)
    assert code == 130, _output(tmp_path)[1][-3000:]
    assert _json(run_dir / "status.json")["status"] == "interrupted"
    first_steps = _steps(run_dir / "progress.csv")
    stopped_at = first_steps[-1]
    assert STOP_AT <= stopped_at < BUDGET
    labels_1 = _json(run_dir / "prefs" / "labeller_state.json")["labels_given"]
    n_prefs_1 = len(_load_prefs(run_dir / "prefs" / "prefs.npz"))
    predictor_1 = _predictor_steps(run_dir)
    assert labels_1 >= N_INITIAL and n_prefs_1 >= N_INITIAL and predictor_1 > 0

    # the same command again: it resumes
    proc = cli(*ARGS, "--run_dir", run_dir, timeout=300, check=True)
    assert "resumed from" in proc.stdout
    assert "pretraining on" not in proc.stdout  # the saved predictor is loaded, not trained afresh
    summary = _json(run_dir / "summary.json")
    assert summary["timesteps"] == BUDGET and _json(run_dir / "status.json")["status"] == "finished"
    steps = _steps(run_dir / "progress.csv")
    resumed = steps[len(first_steps):]
    assert resumed and min(resumed) > stopped_at - 4 * 5 * CKPT_UPDATES - 1  # from the last checkpoint, not from 0
    assert resumed[-1] == BUDGET
    # the label schedule counts on: all sittings together give at most the schedule's total
    labels_2 = _json(run_dir / "prefs" / "labeller_state.json")["labels_given"]
    assert labels_1 <= labels_2 <= N_INITIAL + N_LABELS
    db = _load_prefs(run_dir / "prefs" / "prefs.npz")
    assert n_prefs_1 <= len(db) <= N_INITIAL + N_LABELS
    assert summary["labels_given"] == labels_2
    assert _predictor_steps(run_dir) > predictor_1  # the predictor trained on from its saved steps
    # the learning rate goes on decaying from where it was, not from its start value
    lr = _steps(run_dir / "progress.csv", "policy/learning_rate")
    assert lr[len(first_steps)] < lr[0]


def _database_of_three_chunks(path, per_chunk=12):
    """A preference database of MovingDot-shaped segments saved three times (chunks 000000-000002), the
    synthetic oracle's labels (the segment with the larger true return preferred)."""
    from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment
    from drlhp.reward.pref_db import PrefDB

    rng = np.random.default_rng(0)

    def segment():
        obs = rng.integers(0, 256, (5, 84, 84, 4), dtype=np.uint8)
        return Segment(obs, obs[..., -1].copy(), rng.normal(size=5).astype(np.float32), "MovingDot-v0", 0, 0)

    db = PrefDB(max_prefs=3000, seed=3)
    for _ in range(3):
        for _ in range(per_chunk):
            a, b = segment(), segment()
            db.add(Preference(a, b, MU_LEFT if a.true_return > b.true_return else MU_RIGHT))
        db.save(path)
    return db


@pytest.mark.slow
def test_a_cut_middle_chunk_is_one_line_before_anything_starts_or_skipped_with_the_flag(cli, tmp_path):
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.pref_db_files import chunks_dir

    run_dir = tmp_path / "run"
    prefs = run_dir / "prefs" / "prefs.npz"
    _database_of_three_chunks(prefs)
    middle = chunks_dir(prefs) / "000001.npz"
    middle.write_bytes(middle.read_bytes()[:1000])  # cut short
    args = [*ARGS, "--million_timesteps", 0.002, "--run_dir", run_dir]

    # the same command as the run's: found in the parent, one line naming the chunk, exit 2, nothing started
    proc = cli(*args, timeout=60)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"run.py: error: preference database chunk {middle} is damaged: "), lines
    assert "12 preferences of" in lines[0] and "24 are readable" in lines[0], lines
    assert lines[0].endswith("add --skip_damaged_prefs to go on without them"), lines
    assert sorted(p.name for p in run_dir.iterdir()) == ["prefs"]  # no record, no process, no log

    # --skip_damaged_prefs: says what is lost, goes on with the other chunks' labels and finishes
    proc = cli(*args, "--skip_damaged_prefs", timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[run] --skip_damaged_prefs: 12 preferences lost with " + str(middle) in proc.stderr, proc.stderr[-3000:]
    assert "going on with the other 24" in proc.stderr
    assert "[reward] loaded 24 preferences" in proc.stdout, proc.stdout[-3000:]
    assert _json(run_dir / "status.json")["status"] == "finished"
    assert middle.with_name("000001.npz.damaged").exists() and not middle.exists()  # kept aside
    assert len(PrefDB.load(prefs)) >= 24  # whole again: loads without the flag

"""No orphans, and SIGTERM is a stop (issue 11, item 4), with the real processes of run.py on MovingDot-v0.

    kill -9 of run.py            every child notices its parent is gone, saves and exits within 10 s, and
                                 the run's status (status.json, `python -m floyd list`) says "parent gone: saved"
    SIGTERM to the whole group   (`timeout`, `docker stop`, `kill -TERM -PGID`) a stop like Ctrl-C: exit
                                 code 130, status "interrupted", database and predictor saved, and the
                                 same command with the same --run_dir resumes
"""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from test_pipeline import (
    SMALL,
    _child_processes,
    _json,
    _kill_session,
    _load_prefs,
    _our_lines,
    _output,
    _popen,
    _wait_for,
    _wait_gone,
)

ARGS = ["--env", "MovingDot-v0", "--synthetic_prefs", *SMALL, "--n_initial_prefs", 20, "--prefs_save_interval", 5]
LONG = ["--million_timesteps", 5]  # never reached: the run is stopped


def _start_and_wait_for_training(tmp_path, run_dir, *extra):
    """run.py in its own session, once the policy trains on the predictor's reward (the predictor has
    pretrained, saved and published: all three processes are in their main loops)."""
    proc = _popen(tmp_path, *ARGS, *LONG, "--run_dir", run_dir, *extra)
    _wait_for(lambda: (run_dir / "pids.json").exists() and (run_dir / "progress.csv").exists(), 120, proc,
              "pids.json and progress.csv")
    return proc


@pytest.mark.slow
def test_children_of_a_killed_parent_save_and_exit_within_10_s(tmp_path):
    run_dir = tmp_path / "run"
    proc = _start_and_wait_for_training(tmp_path, run_dir)
    try:
        children = _child_processes(run_dir)
        assert all(p is not None for p in children.values()), children
        os.kill(proc.pid, signal.SIGKILL)  # the parent only: its children are left without it
        killed_at, killed_wall = time.monotonic(), time.time()
        proc.wait(timeout=10)
        alive = _wait_gone(children, 10.0 - (time.monotonic() - killed_at))
        assert not alive, f"still running 10 s after the parent was killed: {alive}"
        # they stopped in order (the first to notice says so in the run's log, where its output goes once
        # the parent's output tee is gone, and stops the others), not by the os._exit backstop
        log = (run_dir / "stderr.log").read_text()
        assert "is gone: stopping" in log and "exiting now" not in log, log[-3000:]
        # ... and saved on the way out
        prefs, predictor = run_dir / "prefs" / "prefs.npz", run_dir / "reward_predictor" / "reward_predictor.npz"
        assert prefs.stat().st_mtime >= killed_wall and predictor.stat().st_mtime >= killed_wall
        assert len(_load_prefs(prefs)) >= 20
        # nobody is left to say the run ended but the children: they did, and the archive shows it
        status = _json(run_dir / "status.json")
        assert status["status"] == "parent gone: saved", status
        assert status["roles"] == {role: "saved" for role in children}, status
        listing = subprocess.run([sys.executable, "-m", "floyd", "list", "--runs_dir", tmp_path], cwd=REPO,
                                 capture_output=True, text=True, timeout=120)
        row = next((line for line in listing.stdout.splitlines() if line.startswith("run ")), "")
        assert "parent gone: saved" in row, listing.stdout + listing.stderr
    finally:
        _kill_session(proc)


@pytest.mark.slow
def test_sigterm_to_the_group_is_a_stop_and_the_run_resumes(cli, tmp_path):
    from drlhp.policy.checkpoint import load_policy_checkpoint

    run_dir = tmp_path / "run"
    proc = _start_and_wait_for_training(tmp_path, run_dir)
    try:
        children = _child_processes(run_dir)
        os.killpg(proc.pid, signal.SIGTERM)  # every process of the run at once
        stopped_wall = time.time()
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("run.py still running 60 s after SIGTERM\n"
                                 + _output(tmp_path)[1][-3000:]) from None
        err = _output(tmp_path)[1]
        assert code == 130, err[-3000:]
        assert "interrupted" in _our_lines(err)[-1] and "Traceback" not in err, err[-3000:]
        assert _json(run_dir / "status.json")["status"] == "interrupted"
        assert not _wait_gone(children, 10)
    finally:
        _kill_session(proc)
    n_prefs = len(_load_prefs(run_dir / "prefs" / "prefs.npz"))
    assert n_prefs >= 20
    assert (run_dir / "reward_predictor" / "reward_predictor.npz").stat().st_mtime >= stopped_wall  # at the stop
    _, meta = load_policy_checkpoint(run_dir / "checkpoints")

    # the same command and --run_dir, with a budget of 600 steps more than were trained: it resumes (a
    # changed budget is a changed setting: --resume_with_changes says so)
    budget = meta["timesteps"] + 600
    done = cli(*ARGS, "--million_timesteps", budget / 1e6, "--run_dir", run_dir, "--resume_with_changes",
               timeout=180, check=True)
    assert "resumed from" in done.stdout and "pretraining on" not in done.stdout
    assert _json(run_dir / "status.json")["status"] == "finished"
    assert _json(run_dir / "summary.json")["timesteps"] == budget
    assert len(_load_prefs(run_dir / "prefs" / "prefs.npz")) >= n_prefs

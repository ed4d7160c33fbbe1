"""run.py's preference modes end to end, as a user runs them: tiny budgets on MovingDot-v0, the real
three processes (policy, preference interface, reward predictor), real files.

The end-to-end tests of the three roles run on both backends (``backend``: local processes, and Ray
actors where Ray is installed), through the one child wrapper (drlhp.processes.child): a run to its end,
a killed role, Ctrl-C.

Each spawned process starts TensorFlow (several seconds on 2 cores), so a run costs ~15-30 s even
with a budget of 2,000 agent steps (Ray: ~45-60 s); the tests that make more than one run are marked slow.
"""
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from conftest import REPO, default_sigint

ROLES = ("reward_predictor", "pref_interface", "policy")
BUDGET = 2000  # agent steps (--million_timesteps 0.002)
# --preset none: drlhp's bare defaults under these flags, not MovingDot's own preset (drlhp/config/presets.py).
# One predictor where a test only needs the three processes running (killed roles, signals, test_ray's and
# test_shutdown's runs, test_quiet's): an ensemble of 2 cost about 10% more CPU per run (its tracing and
# pretraining). The runs to their end (the default mode, the staged path) keep the ensemble of 2 (SMALL_ENSEMBLE).
_TINY = ["--preset", "none", "--n_envs", 4, "--segment_length", 5, "--n_initial_epochs", 1, "--n_labels", 20,
         "--million_timesteps", BUDGET / 1e6, "--log_interval", 1, "--reward_batch_size", 4]
SMALL = [*_TINY, "--n_predictors", 1]
SMALL_ENSEMBLE = [*_TINY, "--n_predictors", 2]
# TensorFlow's start-up banner (absl / oneDNN), printed on stderr when TF is imported; not ours.
TF_NOISE = ("I0000", "WARNING: All log messages", "To enable the following")
NO_RAY = "Ray is not installed (pip install ray; pinned in requirements.txt)"
# the Ray runs share test_ray.py's xdist_group: one Ray on the machine at a time (a second ray.init joins the first)
BACKENDS = ["local", pytest.param("ray", marks=[pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                                                   reason=NO_RAY), pytest.mark.xdist_group("ray")])]
START_S = {"local": 120, "ray": 180}  # until all three roles are in their main loops (Ray starts first)
RUN_S = {"local": 180, "ray": 300}  # a tiny run to its end


def _our_lines(stderr: str) -> list[str]:
    return [line for line in stderr.strip().splitlines()
            if line.strip() and not line.startswith(TF_NOISE) and "cpu_feature_guard" not in line]


def _json(path):
    return json.loads(path.read_text())


def _load_prefs(path):
    from drlhp.reward.pref_db import PrefDB

    return PrefDB.load(path)


def _popen(tmp_path, *args):
    """run.py in its own session (so the whole tree can be killed), output to files (no pipe to fill)."""
    out, err = open(tmp_path / "stdout.txt", "w"), open(tmp_path / "stderr.txt", "w")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), *map(str, args)], cwd=REPO, stdout=out,
                            stderr=err, env=env, start_new_session=True, preexec_fn=default_sigint)
    out.close(), err.close()
    return proc


def _output(tmp_path) -> tuple[str, str]:
    return (tmp_path / "stdout.txt").read_text(), (tmp_path / "stderr.txt").read_text()


def _kill_session(proc) -> None:
    """SIGKILL everything in the run's session (the parent, its spawned children, the resource tracker)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _wait_for(condition, timeout: float, proc=None, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"run.py exited {proc.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.NoSuchProcess:
        return None


def _child_processes(run_dir) -> dict[str, psutil.Process | None]:
    """The children named in pids.json, as psutil handles (safe against pid reuse)."""
    return {role: _process(pid) for role, pid in _json(run_dir / "pids.json").items() if role != "parent"}


def _alive(p) -> bool:
    try:
        return p is not None and p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_gone(procs, timeout: float = 10.0) -> list[str]:
    """Roles whose process is still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [r for r, p in procs.items() if _alive(p)]
        if not alive:
            return []
        time.sleep(0.2)
    return [r for r, p in procs.items() if _alive(p)]


@pytest.mark.slow
def test_staged_path_gather_pretrain_train_with_loaded_predictor(cli, tmp_path):
    a, b, c, d = (tmp_path / x for x in "ABCD")

    # (a) gather the initial preferences with a random policy
    cli("gather_initial_prefs", "--env", "MovingDot-v0", "--synthetic_prefs", *SMALL_ENSEMBLE, "--n_initial_prefs", 30,
        "--run_dir", a, timeout=180, check=True)
    db = _load_prefs(a / "prefs" / "prefs.npz")
    assert len(db) >= 30 and db.n_train > 0
    summary = _json(a / "summary.json")
    assert summary["mode"] == "gather_initial_prefs" and summary["n_preferences"] >= 30
    assert _json(a / "status.json")["status"] == "finished"

    # (b) pretrain the predictor on them, in this process
    proc = cli("pretrain_reward_predictor", "--env", "MovingDot-v0", *SMALL_ENSEMBLE, "--load_prefs_dir", a,
               "--n_initial_epochs", 2, "--run_dir", b, timeout=120, check=True)
    assert "pretrain step" in proc.stdout
    assert (b / "reward_predictor" / "reward_predictor.npz").is_file()
    summary = _json(b / "summary.json")
    assert "predictor_val_accuracy" in summary
    assert summary["predictor_val_accuracy"] is None or 0.0 <= summary["predictor_val_accuracy"] <= 1.0
    assert summary["n_preferences"] == len(db)
    assert not (b / "pids.json").exists()  # no processes were started
    header = (b / "progress_reward.csv").read_text().splitlines()[0].split(",")
    assert {"step", "reward/val_accuracy", "reward/train_accuracy"} <= set(header)
    assert (b / "curves.png").is_file()

    # (c) the three processes, starting from that database and predictor: no gathering, no pretraining
    proc = cli("train_policy_with_preferences", "--env", "MovingDot-v0", "--synthetic_prefs", *SMALL_ENSEMBLE,
               "--load_prefs_dir", a, "--load_reward_predictor_ckpt_dir", b, "--run_dir", c,
               timeout=180, check=True)
    assert "loaded predictor" in proc.stdout and "pretraining on" not in proc.stdout
    summary = _json(c / "summary.json")
    assert summary["timesteps"] == BUDGET
    assert summary["n_preferences"] >= 30
    assert {"pred_true_corr", "predictor_val_accuracy"} <= set(summary)
    assert "random_steps" not in summary  # the loaded predictor's reward from the first step
    assert _json(c / "status.json")["status"] == "finished"
    header = (c / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"policy/predictor_version", "system/segments_dropped"} <= set(header)
    assert (c / "progress_reward.csv").is_file() and (c / "progress_prefs.csv").is_file()
    assert len(_load_prefs(c / "prefs" / "prefs.npz")) == summary["n_preferences"]
    assert list((c / "checkpoints").glob("policy-*.npz"))

    # (d) --no_labelling: the policy alone on the saved predictor
    proc = cli("train_policy_with_preferences", "--env", "MovingDot-v0", "--no_labelling", *SMALL_ENSEMBLE,
               "--load_reward_predictor_ckpt_dir", b, "--run_dir", d, timeout=120, check=True)
    summary = _json(d / "summary.json")
    assert summary["timesteps"] == BUDGET and summary["no_labelling"] is True
    assert summary["segments_sent"] == 0
    assert not (d / "prefs").exists()  # no labeller ran
    assert not (d / "pids.json").exists()
    assert _json(d / "status.json")["status"] == "finished"


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_default_mode_runs_three_processes_end_to_end(cli, tmp_path, backend):
    run_dir = tmp_path / "run"
    proc = cli("--env", "MovingDot-v0", "--synthetic_prefs", *SMALL_ENSEMBLE, "--n_initial_prefs", 20,
               "--reward_updates_per_step", 0.05, "--run_dir", run_dir, "--profile", "--backend", backend,
               timeout=RUN_S[backend], check=True)
    assert "pretraining on" in proc.stdout and "[policy]" in proc.stdout
    # the predictor process says which kernel library it runs (--reward_onednn auto: by this CPU's flags)
    from drlhp.processes.cpu import choose_kernels

    library = {True: "oneDNN ", False: "Eigen "}.get(choose_kernels("auto").onednn, "")  # "": another CPU
    assert f"[reward] TensorFlow kernels: {library}(auto: " in proc.stdout
    summary = _json(run_dir / "summary.json")
    assert summary["predictor_kernels"].startswith(library) and summary["predictor_pretrain_steps"] >= 1
    assert summary["mode"] == "train_policy_with_preferences" and summary["timesteps"] == BUDGET
    assert summary["n_preferences"] > 0 and summary["labels_given"] > 0 and summary["predictor_version"] >= 1
    assert _json(run_dir / "status.json")["status"] == "finished"
    # every role's records, on either backend
    assert (run_dir / "prefs" / "prefs.npz").is_file() and list((run_dir / "checkpoints").glob("policy-*.npz"))
    assert (run_dir / "reward_predictor" / "reward_predictor.npz").is_file()
    assert list((run_dir / "tb").rglob("events.out.tfevents.*"))
    # --reward_updates_per_step: the policy waited for the predictor's pair-updates, so the loop was fed
    assert summary["pair_updates_per_agent_step"] >= 0.05, summary
    assert summary["pair_updates_per_s"] > 0, summary  # the predictor's pace, in the summary and the progress line
    assert summary["predictor_online_pair_updates"] >= 0.05 * (BUDGET - 2 * 16 * 5), summary
    assert 0 <= summary["labels_per_agent_step"] < 1
    # the predictor's agreement with each label that came while it trained beside the policy, before it trained on it
    assert summary["fresh_labels_scored"] > 0 and 0 <= summary["fresh_label_accuracy"] <= 1, summary
    assert "fresh_label_accuracy=" in proc.stdout  # in the finished line
    import csv

    with open(run_dir / "progress_reward.csv") as f:
        assert any(row.get("reward/fresh_label_accuracy") for row in csv.DictReader(f))
    # the children's output (they inherit the parent's stdout) lands in the run's stdout.log too
    log = (run_dir / "stdout.log").read_text()
    assert "[policy]" in log and "[reward] pretraining on" in log and "[run] finished" in log
    assert "pair-updates/s |" in log
    assert (run_dir / "curves.png").is_file()
    pids = _json(run_dir / "pids.json")
    assert set(pids) == {"parent", *ROLES}
    assert len({pids[r] for r in ROLES} | {pids["parent"]}) == 4
    alive = [r for r in ROLES if psutil.pid_exists(pids[r]) and _alive(_process(pids[r]))]
    assert not alive, f"still running after run.py exited: {alive}"
    # --profile: each process's own profile, its loop at the top of the cumulative table
    import pstats

    loops = {"policy": "run_policy", "reward_predictor": "run_reward_predictor",
             "pref_interface": "run_pref_interface", "parent": "run_processes"}
    for role, loop in loops.items():
        text = (run_dir / "profile" / f"{role}.txt").read_text()
        assert text.startswith(f"{role}: ") and f"pid {pids[role]}" in text, text[:200]
        cumulative = text.split("most cumulative time:")[1].splitlines()[2:8]
        assert any(loop in line for line in cumulative), (role, cumulative)
        stats = pstats.Stats(str(run_dir / "profile" / f"{role}.prof"))
        assert any(name == loop for (_file, _line, name) in stats.stats)


# every role killed on the local backend; on Ray one role: any actor's death reaches the parent by one path (ray.wait
# on the roles' tasks, RayActorError: drlhp.processes.ray_backend), and each Ray case costs about a minute
KILLED = [*(pytest.param(role, "local", id=f"{role}-local") for role in ROLES),
          pytest.param("policy", "ray", marks=BACKENDS[1].marks, id="policy-ray")]


@pytest.mark.slow
@pytest.mark.parametrize("role, backend", KILLED)
def test_a_killed_child_ends_the_run_within_seconds(tmp_path, role, backend):
    run_dir = tmp_path / "run"
    proc = _popen(tmp_path, "--env", "MovingDot-v0", "--synthetic_prefs", *SMALL, "--million_timesteps", 5,
                  "--n_initial_prefs", 20, "--run_dir", run_dir, "--backend", backend)
    try:
        # until the policy trains on the predictor's reward: all three roles are in their main loops
        _wait_for(lambda: (run_dir / "pids.json").exists() and (run_dir / "progress.csv").exists(),
                  START_S[backend], proc, "pids.json and progress.csv")
        children = _child_processes(run_dir)
        assert all(_alive(p) for p in children.values())
        if backend == "ray":  # the role's Ray worker, named after it: ray::RewardPredictorActor.run
            actor = "".join(word.title() for word in role.split("_")) + "Actor"
            assert actor in " ".join(children[role].cmdline()), children[role].cmdline()
        children[role].kill()
        t0 = time.monotonic()
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"run.py still running 30 s after the {role} process was killed\n"
                                 + _output(tmp_path)[1][-3000:]) from None
        took = time.monotonic() - t0
        out, err = _output(tmp_path)
        assert code != 0, out[-2000:]
        last = _our_lines(err)[-1]
        assert "error" in last and role in last, err[-3000:]
        assert "Traceback" not in last
        status = _json(run_dir / "status.json")
        assert status["status"] == "crashed" and role in status["error"]
        assert not _wait_gone(children, 10), f"children alive after exit (took {took:.1f} s)"
    finally:
        _kill_session(proc)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_interrupt_saves_prefs_and_exits_130(tmp_path, backend):
    run_dir = tmp_path / "run"
    prefs = run_dir / "prefs" / "prefs.npz"
    proc = _popen(tmp_path, "--env", "MovingDot-v0", "--synthetic_prefs", *SMALL, "--million_timesteps", 5,
                  "--n_initial_prefs", 20, "--prefs_save_interval", 5, "--run_dir", run_dir, "--backend", backend)
    try:
        _wait_for(lambda: prefs.exists() or (run_dir / "progress.csv").exists(), START_S[backend], proc,
                  "prefs/prefs.npz or progress.csv")
        time.sleep(1.0)
        training = (run_dir / "progress.csv").exists()
        children = _child_processes(run_dir)
        proc.send_signal(signal.SIGINT)  # the parent only, as Ctrl-C would not be (children ignore it)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("run.py still running 60 s after SIGINT\n" + _output(tmp_path)[1][-3000:]) from None
        out, err = _output(tmp_path)
        assert code == 130, err[-3000:]
        assert "interrupted" in _our_lines(err)[-1] and "Traceback" not in err
        assert _json(run_dir / "status.json")["status"] == "interrupted"
        db = _load_prefs(prefs)
        assert len(db) > 0
        if training:
            assert list((run_dir / "checkpoints").glob("policy-*.npz")), "no policy checkpoint saved"
        assert not _wait_gone(children, 10)
    finally:
        _kill_session(proc)


def _one_line_exit_2(proc) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = _our_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("run.py: error: ")
    return lines[0]


def test_bad_inputs_are_one_line_exit_2(cli, tmp_path):
    bad = tmp_path / "prefs.npz"
    bad.write_bytes(os.urandom(4096))
    run_dir = tmp_path / "run"
    common = ["--env", "MovingDot-v0", "--run_dir", run_dir]

    line = _one_line_exit_2(cli(*common, "--synthetic_prefs", "--load_prefs_dir", bad, timeout=60))
    assert "preference database" in line and str(bad) in line
    headless = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    t0 = time.monotonic()
    line = _one_line_exit_2(cli(*common, timeout=60, env=headless))  # default mode: a person labels, no display
    assert time.monotonic() - t0 < 5.0  # measured: 0.4-0.6 s; 5 s of slack for a loaded CI machine
    assert "DISPLAY" in line and "--synthetic_prefs" in line
    line = _one_line_exit_2(cli(*common, "--no_labelling", timeout=60))
    assert "--load_reward_predictor_ckpt_dir" in line
    line = _one_line_exit_2(cli("pretrain_reward_predictor", *common, timeout=60))
    assert "--load_prefs_dir" in line
    line = _one_line_exit_2(cli(*common, "--synthetic_prefs", "--reward_tf_threads", 0, timeout=60))
    assert "--reward_tf_threads" in line
    assert not run_dir.exists()  # nothing was started, so no run directory either

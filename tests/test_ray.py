"""--backend ray (issue 14): the three roles as Ray actors, with the local backend's records and failure
behaviour. Each test starts Ray (about 5-10 s here) and three actors that each start TensorFlow, so each
costs ~45-60 s on 2 cores; all are slow. Skipped where Ray is not installed. The end-to-end tests both
backends pass (a run to its end, a killed role's worker, Ctrl-C to run.py) are test_pipeline.py's, run
with --backend local and --backend ray; these are Ray's own edges.

    Ctrl-C (SIGINT to run.py's process group, Ray's processes included), and SIGTERM to the group, save
    the database, predictor and policy checkpoint and exit 130
    an unreachable --ray_address is one line and exit 2 within 30 s, before anything starts
    python -m floyd seeds --backend ray --n 2 leaves 2 run directories and the table; a seed's run
    directory written on another node comes back
    a two-node cluster (ray.cluster_utils.Cluster, on this machine) with the predictor pinned to the node
    holding a custom resource runs end to end, on a Ray the test started (the driver attaches to it)
    the run's own Ray (SIGTERM blocked in its daemons) is shut down without ray.shutdown's 1 s wait per daemon

A tiny pipeline on Ray to its end, with the local backend's records, is test_pipeline.py's default-mode test
(its [ray] case); the one here that ran it a second time, beside a local run for its summary's keys, went in
session 16 (about 140 s of the suite's one Ray worker).
"""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO
from test_pipeline import SMALL, _json, _kill_session, _load_prefs, _our_lines, _output, _popen, _wait_for

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray; pinned in requirements.txt)")

# one Ray at a time (make test runs two workers): ray.init without an address joins the newest Ray on the machine
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]
ARGS = ["--env", "MovingDot-v0", "--synthetic_prefs", *SMALL, "--n_initial_prefs", 20]


def _run_in_process(*argv) -> int:
    """run.py's argument parsing and pipeline.run in this process, on the Ray this test started."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import with_preset
    from drlhp.run.pipeline import run

    expanded, _, _ = with_preset([str(a) for a in argv])
    return run(config_from_args(build_parser().parse_args(expanded)), ["run.py", *map(str, argv)])


@pytest.fixture
def no_ray_left():
    yield
    if ray.is_initialized():
        ray.shutdown()


def test_two_node_cluster_with_the_predictor_pinned_by_a_custom_resource(tmp_path, no_ray_left):
    from ray.cluster_utils import Cluster

    from drlhp.processes.ray_backend import init_kwargs

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    try:
        worker_node = cluster.add_node(num_cpus=1, resources={"predictor_box": 1}).node_id
        kwargs = init_kwargs(cluster.address)
        ray.init(**kwargs)
        run_dir = tmp_path / "run"
        assert _run_in_process(*ARGS, "--backend", "ray", "--predictor_resources", '{"predictor_box": 1}',
                               "--run_dir", run_dir) == 0
        assert _json(run_dir / "status.json")["status"] == "finished"
        assert _json(run_dir / "summary.json")["timesteps"] == 2000
        # the predictor's actor ran on the node with the resource (the driver may be on either: one machine)
        nodes = _json(run_dir / "ray_nodes.json")
        assert nodes["reward_predictor"] == worker_node, nodes
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        os.environ.pop("RAY_ADDRESS", None)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_saves_and_exits_130(tmp_path, sig):
    """Ctrl-C in a terminal, and SIGTERM to the group (`timeout`, `kill -TERM -PGID`): Ray's own processes
    get it too, and must neither die under the roles nor take it for a failure."""
    run_dir = tmp_path / "run"
    proc = _popen(tmp_path, *ARGS, "--million_timesteps", 5, "--prefs_save_interval", 5, "--backend", "ray",
                  "--run_dir", run_dir)
    try:
        _wait_for(lambda: (run_dir / "pids.json").exists() and (run_dir / "progress.csv").exists(), 180, proc,
                  "pids.json and progress.csv")
        os.killpg(proc.pid, sig)  # the whole group: Ray's processes too
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"run.py still running 60 s after {sig.name}\n"
                                 + _output(tmp_path)[1][-3000:]) from None
        err = _output(tmp_path)[1]
        assert code == 130, err[-3000:]
        assert "interrupted" in _our_lines(err)[-1] and "crashed" not in err, err[-3000:]
        assert _json(run_dir / "status.json")["status"] == "interrupted"
        assert len(_load_prefs(run_dir / "prefs" / "prefs.npz")) > 0
        assert list((run_dir / "checkpoints").glob("policy-*.npz")), "no policy checkpoint saved"
        assert (run_dir / "reward_predictor" / "reward_predictor.npz").is_file()
    finally:
        _kill_session(proc)


def test_an_unreachable_ray_address_is_one_line_and_exit_2_within_30_s(cli, tmp_path):
    run_dir = tmp_path / "run"
    t0 = time.monotonic()
    proc = cli(*ARGS, "--backend", "ray", "--ray_address", "127.0.0.1:1", "--run_dir", run_dir, timeout=60)
    took = time.monotonic() - t0
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.py: error: --ray_address 127.0.0.1:1: no Ray cluster "
                                                   "answers there (Connection refused"), lines
    assert took < 30, f"{took:.1f} s"
    assert not run_dir.exists()  # found before anything started
    # ... and an address that is not HOST:PORT
    proc = cli(*ARGS, "--backend", "ray", "--ray_address", "headnode", "--run_dir", run_dir, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-3000:]
    assert "give HOST:PORT" in proc.stderr


def test_floyd_seeds_on_ray_leaves_the_run_directories_and_the_table(tmp_path):
    runs = tmp_path / "runs"
    proc = subprocess.run([sys.executable, "-m", "floyd", "--runs_dir", str(runs), "seeds", "--backend", "ray",
                           "--n", "2", "--name", "g", "--", "train_policy_with_original_rewards", "--env",
                           "MovingDot-v0", "--million_timesteps", "0.005"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    header = [line for line in proc.stdout.splitlines() if line.startswith("seed ")]
    assert header and "true return" in header[0], proc.stdout[-3000:]
    for seed in (0, 1):
        run_dir = runs / "g" / f"seed{seed}"
        assert _json(run_dir / "status.json")["status"] == "finished"
        assert _json(run_dir / "summary.json")["timesteps"] >= 5000  # whole updates of n_envs x n_steps
        assert (runs / "g" / f"seed{seed}.log").read_text().strip()
    assert len(_json(runs / "g" / "seeds.json")["rows"]) == 2


def test_a_seed_run_on_another_node_comes_back_to_the_driver(tmp_path, no_ray_left):
    """floyd seeds --backend ray's way back for a run directory written on another node (here: a task told that
    the driver's node is another one), without a real second machine."""
    from drlhp.processes.ray_backend import init_kwargs
    from floyd.seeds import _collect, _run_one

    ray.init(num_cpus=1, **init_kwargs())
    run_dir = tmp_path / "g" / "seed3"
    write = (f"import json, os; os.makedirs({str(run_dir)!r}); print('hello'); "
             f"json.dump({{'status': 'finished'}}, open(os.path.join({str(run_dir)!r}, 'status.json'), 'w'))")
    ref = ray.remote(_run_one).remote([sys.executable, "-c", write], str(tmp_path), str(run_dir), "another node")
    ray.wait([ref])
    row = _collect(ref, 3, time.monotonic(), tmp_path / "g")
    assert row["exit_code"] == 0 and row["status"] == "finished"
    assert _json(run_dir / "status.json") == {"status": "finished"}  # removed on "that node", unpacked here
    assert (tmp_path / "g" / "seed3.log").read_text().strip() == "hello"


def test_the_runs_own_ray_is_shut_down_without_the_graceful_waits(monkeypatch):
    """The daemons of the Ray run.py starts have SIGTERM blocked, so ray.shutdown's SIGTERM and 1 s wait per daemon
    always ended in its SIGKILL: shutdown_masked_ray runs Ray's own shutdown with its node told not to wait, and
    leaves the node as it was. On a stand-in node (no Ray started); the pinned Ray's node takes allow_graceful."""
    import inspect

    import ray._private.node
    import ray._private.worker

    from drlhp.processes.ray_backend import shutdown_masked_ray

    assert "allow_graceful" in inspect.signature(ray._private.node.Node.kill_all_processes).parameters

    class Node:
        calls = []

        def kill_all_processes(self, check_alive=True, allow_graceful=False, wait=False):
            self.calls.append((check_alive, allow_graceful, wait))

    node = Node()
    monkeypatch.setattr(ray._private.worker, "_global_node", node)
    monkeypatch.setattr(ray, "shutdown", lambda: ray._private.worker._global_node.kill_all_processes(
        check_alive=False, allow_graceful=True))  # as ray.shutdown calls it
    shutdown_masked_ray()
    assert Node.calls == [(False, False, False)]
    assert "kill_all_processes" not in vars(node)  # the class's method again

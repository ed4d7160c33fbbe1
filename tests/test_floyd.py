"""The run archive (floyd/) as a user runs it: `python -m floyd ...` on real run directories made by
run.py with tiny budgets (MovingDot, 2,000 agent steps, ~12 s each, mostly TensorFlow's start-up),
and on folders made broken on purpose.
"""
import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import REPO, run_cli

# A row of metrics per update (--log_interval 0), so two runs' rows fall at the same steps.
TINY = ["train_policy_with_original_rewards", "--env", "MovingDot-v0", "--million_timesteps", "0.002",
        "--n_envs", "4", "--log_interval", "0"]
TF_NOISE = ("I0000", "WARNING: All log messages", "To enable the following")


def floyd(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "floyd", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})


def _json(path):
    return json.loads(path.read_text())


def _one_line_error(proc, *fragments) -> str:
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("python -m floyd: error: ")
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


def _curve(run_dir) -> list[dict]:
    """progress.csv less the system/ and time/ columns (wall time, throughput, memory: never the same twice)."""
    with open(run_dir / "progress.csv", newline="") as f:
        return [{k: v for k, v in row.items() if not k.startswith(("system/", "time/"))}
                for row in csv.DictReader(f)]


def _list_rows(stdout: str) -> dict[str, str]:
    """`floyd list`'s table lines by run name."""
    return {line.split()[0]: line for line in stdout.splitlines()[1:] if line and not line.startswith("skipped ")}


def _assert_png(path):
    import matplotlib.image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0.01  # something is drawn


@pytest.fixture(scope="module")
def twice_and_rerun(tmp_path_factory):
    """Runs a and b: the same command (seed 0) into two run directories; then `floyd rerun a`."""
    runs = tmp_path_factory.mktemp("det") / "runs"
    for name in ("a", "b"):
        run_cli(*TINY, "--seed", 0, "--run_dir", runs / name, timeout=180, check=True)
    proc = floyd("--runs_dir", runs, "rerun", "a", "--fresh_checkout", "--run_dir", runs / "a-again")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return runs, proc


@pytest.mark.slow
def test_same_seed_and_code_give_the_same_curve(twice_and_rerun):
    runs, _ = twice_and_rerun
    a, b = _curve(runs / "a"), _curve(runs / "b")
    assert len(a) == 100  # a row per update: 2,000 steps / (4 envs x 5 steps)
    assert len({row["policy/entropy"] for row in a}) > 50  # the curve moves: equality below means something
    assert a == b
    ckpt_a, ckpt_b = (np.load(runs / r / "checkpoints" / "policy-100.npz") for r in "ab")
    assert ckpt_a.files == ckpt_b.files
    for key in ckpt_a.files:
        if key != "meta":
            np.testing.assert_array_equal(ckpt_a[key], ckpt_b[key])
    # every run draws its curves at the end
    _assert_png(runs / "a" / "curves.png")


@pytest.mark.slow
def test_a_run_records_its_output_and_run_json(twice_and_rerun):
    runs, _ = twice_and_rerun
    run = runs / "a"
    out = (run / "stdout.log").read_text()
    assert "[policy]" in out and "[run] finished" in out
    assert (run / "stderr.log").exists()
    meta = _json(run / "run.json")
    assert meta["format_version"] == 1 and meta["cwd"] == str(REPO) and len(meta["sittings"]) == 1
    version = _json(run / "code_version.json")
    assert len(version["git_commit"]) == 40 and "diff" in version and "untracked" in version


@pytest.mark.slow
def test_rerun_reproduces_the_command_and_code_version(twice_and_rerun):
    from floyd.rerun import run_args, without_run_dir

    runs, proc = twice_and_rerun
    original, again = runs / "a", runs / "a-again"
    assert "command the same" in proc.stdout and "code version the same" in proc.stdout, proc.stdout[-2000:]
    cmd_a, cmd_b = ((d / "command.txt").read_text() for d in (original, again))
    assert without_run_dir(run_args(cmd_a)) == without_run_dir(run_args(cmd_b))
    assert f"--run_dir {again}" in cmd_b
    va, vb = _json(original / "code_version.json"), _json(again / "code_version.json")
    for key in ("git_commit", "dirty", "diff", "untracked_archived"):
        assert va[key] == vb[key], key
    rerun = _json(again / "rerun.json")
    assert rerun["rerun_of"] == str(original) and rerun["git_commit"] == va["git_commit"]
    assert "fresh checkout" in rerun["code"]
    assert _json(again / "status.json")["status"] == "finished"
    assert _curve(again) == _curve(original)  # and, this mode being deterministic, the same curve
    listing = floyd("--runs_dir", runs, "list")
    assert "rerun of a" in _list_rows(listing.stdout)["a-again"]


def test_a_crashed_run_is_listed_as_crashed_with_its_error(tmp_path):
    from drlhp.policy.checkpoint import save_policy_checkpoint

    runs = tmp_path / "runs"
    # a readable checkpoint that does not fit the network: found only once the run has started (an
    # unreadable one is refused before, with no run directory)
    bad = tmp_path / "bad_ckpt"
    save_policy_checkpoint(bad, 5, {"weight_0": np.zeros(3, np.float32)}, {"timesteps": 0})
    proc = run_cli(*TINY, "--load_policy_ckpt_dir", bad, "--run_dir", runs / "broken", timeout=180)
    assert proc.returncode == 2
    status = _json(runs / "broken" / "status.json")
    assert status["status"] == "crashed" and "does not fit" in status["error"]
    assert "does not fit" in (runs / "broken" / "stderr.log").read_text()
    listing = floyd("--runs_dir", runs, "list")
    assert listing.returncode == 0, listing.stderr
    row = _list_rows(listing.stdout)["broken"]
    assert " crashed " in row and "does not fit" in row
    shown = floyd("--runs_dir", runs, "show", "broken")
    assert shown.returncode == 0 and "status    crashed" in shown.stdout
    assert "does not fit" in shown.stdout and "--load_policy_ckpt_dir" in shown.stdout


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_bad_folders_are_listed_as_such_and_bad_names_are_one_line_errors(tmp_path):
    runs = tmp_path / "runs"
    config = json.dumps({"mode": "train_policy_with_original_rewards", "env": "MovingDot-v0", "seed": 4})
    # half-written: the start was cut short while writing config.json
    _write(runs / "half" / "config.json", config[:25])
    _write(runs / "half" / "run.json", json.dumps({"format_version": 1, "started": "2024-01-01T10:00:00"}))
    # from an older version: no run.json
    _write(runs / "old" / "config.json", config)
    _write(runs / "old" / "status.json", json.dumps({"status": "finished", "time": "2024-01-01T11:00:00"}))
    _write(runs / "old" / "command.txt", "python run.py train_policy_with_original_rewards --env MovingDot-v0\n")
    _write(runs / "old" / "summary.json", json.dumps({"true_return_last100": 12.5}))
    # a newer format, and a run whose process died without a word
    _write(runs / "newer" / "config.json", config)
    _write(runs / "newer" / "run.json", json.dumps({"format_version": 99, "started": "2024-01-02T10:00:00"}))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    import socket

    _write(runs / "died" / "config.json", config)
    _write(runs / "died" / "run.json", json.dumps({"format_version": 1, "started": "2024-01-03T10:00:00",
                                                   "pid": gone.pid, "host": socket.gethostname()}))
    _write(runs / "died" / "status.json", json.dumps({"status": "running", "time": "2024-01-03T10:00:00"}))
    # not runs at all
    _write(runs / "notes" / "readme.txt", "not a run\n")
    (runs / "empty").mkdir()
    _write(runs / "stray.txt", "a file\n")
    _write(runs / "garbage" / "config.json", "\x00\x01 not json")
    _write(runs / "garbage" / "status.json", "[1, 2]")

    proc = floyd("--runs_dir", runs, "list")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    rows = _list_rows(proc.stdout)
    assert set(rows) == {"half", "old", "newer", "died", "garbage"}
    assert " incomplete " in rows["half"] and "config.json not valid JSON" in rows["half"]
    assert "older format" in rows["old"] and " finished " in rows["old"] and "12.50" in rows["old"]
    assert "newer format" in rows["newer"]
    assert " died " in rows["died"] and "process" in rows["died"]
    assert " incomplete " in rows["garbage"]
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("skipped ")]
    assert sorted(line.split()[1].rstrip(":") for line in skipped) == ["empty", "notes"]
    assert all("not a run" in line for line in skipped)

    _one_line_error(floyd("--runs_dir", runs, "show", "nosuchrun"), "no run 'nosuchrun'")
    _one_line_error(floyd("--runs_dir", runs, "rerun", "nosuchrun"), "no run 'nosuchrun'")
    _one_line_error(floyd("--runs_dir", runs, "show", "notes"), "not a run directory")
    _one_line_error(floyd("--runs_dir", runs, "rerun", "half"), "cannot rerun half")
    _one_line_error(floyd("--runs_dir", runs, "rerun", "old"), "cannot rerun old")  # older: no code version
    _one_line_error(floyd("--runs_dir", runs, "compare", "old", "half"), "nothing to compare")
    _one_line_error(floyd("--runs_dir", tmp_path / "nowhere", "list"), "no runs folder")
    shown = floyd("--runs_dir", runs, "show", "half")
    assert shown.returncode == 0 and "incomplete" in shown.stdout and "Traceback" not in shown.stderr


def test_runs_whose_parent_died_are_listed_by_what_their_children_wrote(tmp_path):
    """After kill -9 of the parent the children write status.json (drlhp.records.run_record.record_parent_gone;
    the real kill: tests/test_shutdown.py): list shows it, with its duration (the run has ended), the roles
    that did not save, and a run left "saving" with none of its processes alive as "not all saved"."""
    import socket

    runs = tmp_path / "runs"
    config = json.dumps({"mode": "train_policy_with_preferences", "env": "MovingDot-v0", "seed": 0})
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    roles = {"policy": "saved", "pref_interface": "saved", "reward_predictor": "saved"}
    statuses = {"saved": ("parent gone: saved", roles),
                "cut": ("parent gone: not all saved", {**roles, "policy": "cut short 8 s after the parent died"}),
                "stuck": ("parent gone: saving", {**roles, "reward_predictor": "stopping"})}
    for name, (status, outcomes) in statuses.items():
        _write(runs / name / "config.json", config)
        _write(runs / name / "run.json", json.dumps({"format_version": 1, "started": "2024-01-03T10:00:00",
                                                     "pid": gone.pid, "host": socket.gethostname()}))
        _write(runs / name / "status.json", json.dumps({"status": status, "time": "2024-01-03T10:05:00",
                                                        "roles": outcomes}))
        _write(runs / name / "pids.json", json.dumps({"parent": gone.pid, **{r: gone.pid for r in outcomes}}))
    proc = floyd("--runs_dir", runs, "list")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    rows = _list_rows(proc.stdout)
    assert " parent gone: saved " in rows["saved"] and " 5m00s " in rows["saved"], rows["saved"]
    assert " parent gone: not all saved " in rows["cut"] and "policy: cut short" in rows["cut"], rows["cut"]
    assert " parent gone: not all saved " in rows["stuck"] and "reward_predictor: stopping" in rows["stuck"]
    assert "processes are gone" in rows["stuck"], rows["stuck"]


def test_listing_loads_no_tensorflow(tmp_path):
    _write(tmp_path / "runs" / "old" / "config.json", json.dumps({"mode": "watch", "env": "MovingDot-v0"}))
    code = ("import sys, floyd.__main__ as m; "
            f"assert m.main(['--runs_dir', {str(tmp_path / 'runs')!r}, 'list']) == 0; "
            f"assert m.main(['--runs_dir', {str(tmp_path / 'runs')!r}, 'show', 'old']) == 0; "
            "assert 'tensorflow' not in sys.modules, 'tensorflow imported'")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def seeds_group(tmp_path_factory):
    runs = tmp_path_factory.mktemp("seeds") / "runs"
    proc = floyd("--runs_dir", runs, "seeds", "--n", "2", "--parallel", "2", "--name", "dot",
                 "--metric", "true_return_last100", "--threshold", "0", "--", *TINY[:-1], "1")  # --log_interval 1
    return runs, proc


@pytest.mark.slow
def test_seeds_runs_them_in_parallel_and_reports(seeds_group):
    runs, proc = seeds_group
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    started = [i for i, line in enumerate(lines) if "] started ->" in line]
    ended = [i for i, line in enumerate(lines) if line.startswith("[seed") and "] exit " in line]
    assert len(started) == 2 and len(ended) == 2 and max(started) < min(ended)  # both at once
    returns = {}
    for seed in (0, 1):
        run = runs / "dot" / f"seed{seed}"
        assert _json(run / "config.json")["seed"] == seed
        assert _json(run / "status.json")["status"] == "finished"
        returns[seed] = _json(run / "summary.json")["true_return_last100"]
    header = next(i for i, line in enumerate(lines) if line.startswith("seed "))
    table = {line.split()[0]: line for line in lines[header + 1:header + 3]}
    for seed in (0, 1):
        assert f"{returns[seed]:.2f}" in table[str(seed)] and table[str(seed)].split()[1] == "0"
    reached = sum(r >= 0 for r in returns.values())
    assert f"{reached} of 2 seeds reached true_return_last100 >= 0" in proc.stdout
    saved = _json(runs / "dot" / "seeds.json")
    assert [r["seed"] for r in saved["rows"]] == [0, 1] and saved["threshold"] == 0


def test_seeds_time_to_the_threshold_counts_the_set_up(tmp_path):
    """A seed's row: steps and wall time to the first log row at the threshold (the seed's wall time less
    the policy's training time is its set-up), labels and correlation from summary.json, in the table."""
    from floyd.seeds import add_reached, seed_row, table

    run = tmp_path / "g" / "seed0"
    _write(run / "status.json", json.dumps({"status": "finished"}))
    _write(run / "summary.json", json.dumps({"timesteps": 3000, "success_rate_last100": 0.9, "labels_given": 40,
                                             "pred_true_corr": 0.75}))
    _write(run / "progress.csv", "step,system/wall_s,policy/success_rate_last100\n1000,10,0.2\n2000,20,0.85\n"
                                 "3000,30,0.9\n")
    row = seed_row(0, 0, 100.0, run)  # 100 s in all, 30 s of them the policy's training: 70 s of set-up
    add_reached([row], "success_rate_last100", 0.8)
    assert row["reached"] and (row["steps_to_threshold"], row["time_to_threshold_s"]) == (2000, 90.0)
    never = dict(row)
    add_reached([never], "success_rate_last100", 0.95)
    assert not never["reached"] and never["steps_to_threshold"] is None
    text = table([row], "success_rate_last100", 0.8)
    assert "steps to it" in text and "labels" in text and "pred/true corr" in text
    assert "2,000" in text and "0.750" in text and " 40 " in text


def test_seeds_refuses_its_own_flags_in_one_line(tmp_path):
    _one_line_error(floyd("--runs_dir", tmp_path, "seeds", "--n", "2", "--", *TINY, "--seed", "3"), "--seed")
    _one_line_error(floyd("--runs_dir", tmp_path, "seeds", "--", "--env", "Nope-v0", "--bogus"), "not valid")
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_compare_writes_one_png_of_seeds_and_runs(seeds_group, twice_and_rerun, tmp_path):
    from floyd.index import read_run
    from floyd.plots import group_runs

    runs, _ = seeds_group
    det_runs, _ = twice_and_rerun
    out = tmp_path / "compare.png"
    proc = floyd("--runs_dir", runs, "compare", "dot", det_runs / "a", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    _assert_png(out)
    # the two seeds of "dot" are one configuration (drawn as mean and spread); run a (--log_interval 0) is another
    groups = group_runs([read_run(runs / "dot" / "seed0"), read_run(runs / "dot" / "seed1"), read_run(det_runs / "a")])
    assert [len(g) for g in groups] == [2, 1]


def test_without_git_the_source_is_archived_and_rerun_unpacks_it(tmp_path):
    import shutil
    import tarfile

    from drlhp.records.run_record import record_code_version, source_files
    from floyd.index import read_run
    from floyd.rerun import prepare_code

    src = tmp_path / "src"  # the project's source without .git, as from a downloaded archive
    for name in source_files(REPO):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, src / name)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    version = record_code_version(run_dir, repo=src)
    assert version["git_commit"] is None and version["source_archive"] == "source.tar.gz"
    with tarfile.open(run_dir / "source.tar.gz") as tar:
        names = set(tar.getnames())
    assert {"run.py", "requirements.txt", "Makefile", "drlhp/run/pipeline.py", "floyd/rerun.py"} <= names
    assert not any(n.startswith((".venv", "runs/")) or "__pycache__" in n for n in names)
    (tmp_path / "work").mkdir()
    code_dir, how = prepare_code(read_run(run_dir), tmp_path / "work", fresh_checkout=False)
    assert how == "source archive source.tar.gz"
    pipeline = ("drlhp", "run", "pipeline.py")
    assert code_dir.joinpath(*pipeline).read_bytes() == REPO.joinpath(*pipeline).read_bytes()


def test_show_lists_each_sitting_and_what_it_changed(tmp_path):
    """A run resumed with another flag: run.json keeps both sittings' commands and the change, and
    `floyd show` prints them (RunRecord as run.py uses it; no training needed)."""
    from drlhp.records.run_record import RunRecord

    run_dir = tmp_path / "runs" / "resumed"
    config = {"mode": "train_policy_with_preferences", "env": "PongNoFrameskip-v4", "seed": 0,
              "reward": {"tf_threads": 1, "lr": 2e-4}}
    RunRecord(run_dir).start(config, argv=["run.py", "--env", "PongNoFrameskip-v4"])
    RunRecord(run_dir).start({**config, "reward": {"tf_threads": 2, "lr": 2e-4}},
                             argv=["run.py", "--env", "PongNoFrameskip-v4", "--reward_tf_threads", "2"])
    assert _json(run_dir / "status.json")["status"] == "running"
    first, second = _json(run_dir / "run.json")["sittings"]
    assert first["command"].endswith("run.py --env PongNoFrameskip-v4") and "config_changes" not in first
    assert second["command"].endswith("--reward_tf_threads 2")
    assert second["config_changes"] == {"reward.tf_threads": [1, 2]}
    from drlhp.records.run_record import ABSENT, config_changes

    # an argument on one side only (another version) shows as absent; a None value is not absent
    assert config_changes({"a": 1, "r": {"x": None}}, {"a": 1, "r": {"x": None, "y": None}}) == {"r.y": [ABSENT, None]}
    assert config_changes({"l": None}, {"l": "run/checkpoints"}, ignore=("l",)) == {}
    # a dict setting flattens to names under it: ignoring it ignores them, and nothing that only shares a prefix
    assert config_changes({"r": None, "rx": 1}, {"r": {"GPU": 1}, "rx": 2}, ignore=("r",)) == {"rx": [1, 2]}
    shown = floyd("--runs_dir", tmp_path / "runs", "show", "resumed")
    assert shown.returncode == 0, shown.stderr
    assert "2 sitting(s)" in shown.stdout
    assert "reward.tf_threads 1 -> 2" in shown.stdout


def test_durations_and_numbers_are_written_one_way():
    """drlhp.records.formatting: the policy's progress line, floyd's tables and the benchmarks share it."""
    from drlhp.records.formatting import format_duration, format_number

    assert [format_duration(s) for s in (0, 59.6, 303.4, 3599.4, 3725, 90061)] == \
        ["0m00s", "1m00s", "5m03s", "59m59s", "1h02m", "25h01m"]
    assert [format_duration(s) for s in (None, float("nan"), float("inf"))] == ["-", "-", "-"]
    assert [format_number(v) for v in (None, True, False, 1234, 0.123456, "x")] == \
        ["-", "yes", "no", "1234", "0.123", "x"]
    assert format_number(1234567, ",") == "1,234,567" and format_number(2.0 / 3, ".2f") == "0.67"


def test_a_reader_that_stops_early_ends_floyd_quietly(tmp_path):
    """run.py and python -m floyd share drlhp.processes.interrupts.broken_pipe_exit: exit 1, no traceback,
    and no second error from the interpreter's flush at exit."""
    _write(tmp_path / "runs" / "r" / "status.json", json.dumps({"status": "finished"}))
    proc = subprocess.Popen([sys.executable, "-m", "floyd", "list", "--runs_dir", str(tmp_path / "runs")], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader is gone before floyd writes its first line (it is still importing)
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1 and err == "", (proc.returncode, err)

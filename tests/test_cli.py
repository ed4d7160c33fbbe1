"""run.py as a user runs it: tiny budgets, real processes, real files."""
import json

import numpy as np
import pytest

SUMMARY_KEYS = {"mode", "env", "seed", "timesteps", "wall_s", "agent_steps_per_s", "episodes",
                "true_return_last100"}


def test_unknown_env_is_one_line_exit_2(cli):
    proc = cli("train_policy_with_original_rewards", "--env", "Pongg-v9")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert "unknown env 'Pongg-v9'" in lines[0] and "--list_envs" in lines[0]


def test_list_envs(cli):
    proc = cli("--list_envs", check=True)
    ids = proc.stdout.split()
    assert "MovingDot-v0" in ids and "PongNoFrameskip-v4" in ids and "EnduroNoFrameskip-v4" in ids


def test_missing_checkpoint_is_one_line_exit_2(cli, tmp_path):
    proc = cli("watch", "--env", "MovingDot-v0", "--load_policy_ckpt_dir", tmp_path / "nothing")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "no policy checkpoint" in proc.stderr


def _train(cli, run_dir, steps_m, *extra):
    return cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", 3,
               "--million_timesteps", steps_m, "--n_envs", 8, "--run_dir", run_dir, "--log_interval", 1,
               "--policy_ckpt_interval", 10, *extra, check=True)


def test_train_writes_run_record_then_resumes_and_watches(cli, tmp_path):
    run_dir = tmp_path / "run"
    proc = _train(cli, run_dir, 0.004)  # 100 updates of 8 envs x 5 steps
    assert "[policy]" in proc.stdout and "steps/s" in proc.stdout
    summary = json.loads((run_dir / "summary.json").read_text())
    assert SUMMARY_KEYS | {"success_rate_last100"} <= set(summary)
    assert summary["timesteps"] == 4000 and summary["env"] == "MovingDot-v0" and summary["seed"] == 3
    config = json.loads((run_dir / "config.json").read_text())
    assert config["a2c"]["n_envs"] == 8 and config["seed"] == 3
    assert "git_commit" in json.loads((run_dir / "code_version.json").read_text())
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"
    assert "--million_timesteps" in (run_dir / "command.txt").read_text()
    assert list((run_dir / "tb").glob("events*"))
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"step", "policy/entropy", "policy/value_loss", "policy/true_return_last100",
            "system/agent_steps_per_s", "system/memory_mb_policy"} <= set(header)
    assert (run_dir / "checkpoints" / "policy-100.npz").exists()

    # A bigger budget on the same run directory resumes from the checkpoint, not from zero.
    proc = _train(cli, run_dir, 0.006)
    assert "resumed from" in proc.stdout and "at 4,000 steps" in proc.stdout
    summary2 = json.loads((run_dir / "summary.json").read_text())
    assert summary2["timesteps"] == 6000 and summary2["updates"] == 150
    assert summary2["wall_s"] >= summary["wall_s"]
    steps = [int(line.split(",")[0]) for line in (run_dir / "progress.csv").read_text().splitlines()[1:]]
    assert steps == sorted(steps) and steps[-1] == 6000
    # each sitting keeps its own command and what changed; command.txt is the latest sitting's
    first, second = json.loads((run_dir / "run.json").read_text())["sittings"]
    assert "--million_timesteps 0.004" in first["command"] and "--million_timesteps 0.006" in second["command"]
    # only what the user changed: the checkpoint directory the resume filled in is not a change
    assert "config_changes" not in first and second["config_changes"] == {"million_timesteps": [0.004, 0.006]}
    assert second["git_commit"] == json.loads((run_dir / "code_version.json").read_text())["git_commit"]
    assert "--million_timesteps 0.006" in (run_dir / "command.txt").read_text()

    # watch plays the saved policy and writes a video; it is a recorded run of its own
    video = tmp_path / "episode.gif"
    watch_dir = tmp_path / "watch"
    proc = cli("watch", "--env", "MovingDot-v0", "--load_policy_ckpt_dir", run_dir, "--video", video,
               "--run_dir", watch_dir, check=True)
    assert "1 episode(s)" in proc.stdout
    assert json.loads((watch_dir / "status.json").read_text())["status"] == "finished"
    watched = json.loads((watch_dir / "summary.json").read_text())
    assert watched["mode"] == "watch" and len(watched["true_returns"]) == 1 and watched["video"] == str(video)
    assert "1 episode(s)" in (watch_dir / "stdout.log").read_text()
    # watch never writes into an existing run's directory
    proc = cli("watch", "--env", "MovingDot-v0", "--load_policy_ckpt_dir", run_dir, "--run_dir", run_dir)
    assert proc.returncode == 2 and "already holds a run" in proc.stderr and "Traceback" not in proc.stderr
    import imageio.v2 as imageio

    frames = imageio.mimread(video)
    assert len(frames) > 1 and frames[0].shape[:2] == (336, 336)
    assert any(np.asarray(f).max() == 255 for f in frames), "the dot is visible"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupt_saves_a_checkpoint_and_the_run_resumes(tmp_path, sig):
    import signal
    import subprocess
    import sys
    import time

    from conftest import REPO, default_sigint

    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(REPO / "run.py"), "train_policy_with_original_rewards",
                             "--env", "MovingDot-v0", "--million_timesteps", "1", "--n_envs", "4",
                             "--run_dir", str(run_dir), "--log_interval", "0.5", "--policy_ckpt_interval", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    deadline = time.time() + 120
    while not (run_dir / "progress.csv").exists() and time.time() < deadline:
        time.sleep(0.2)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted; checkpoint saved" in err and "Traceback" not in err
    assert json.loads((run_dir / "status.json").read_text())["status"] == "interrupted"
    ckpts = list((run_dir / "checkpoints").glob("policy-*.npz"))
    assert len(ckpts) == 1  # no periodic checkpoints (interval 0): this one is the interrupt's
    assert json.loads((run_dir / "summary.json").read_text())["timesteps"] > 0

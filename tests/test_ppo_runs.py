"""PPO wired into run.py (issue 29): train_policy_with_original_rewards on a Box-action env, with the run
directory, metrics, checkpoints, resume and summary of an A2C run; the refusals, one line and exit 2 each."""
import csv
import json
import os
from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest

TINY = ("--ppo_n_envs", "2", "--ppo_n_steps", "64", "--ppo_n_minibatches", "4", "--ppo_n_epochs", "1",
        "--log_interval", "0")


def _summary(run_dir):
    return json.loads((run_dir / "summary.json").read_text())


def test_inverted_pendulum_trains_saves_and_resumes(cli, tmp_path):
    """Two updates of 128 agent steps in two sittings: the second resumes the first's checkpoint."""
    run = tmp_path / "run"
    args = ("train_policy_with_original_rewards", "--env", "InvertedPendulum-v5", "--million_timesteps", "0.000256",
            *TINY, "--run_dir", run)
    first = cli(*args, "--stop_at_million_timesteps", "0.000128", check=True)
    assert "preset mujoco" in first.stdout and "with PPO" in first.stdout
    assert "fixed-length episodes of 1,000 steps; a fall costs 100 reward" in first.stdout
    assert _summary(run)["timesteps"] == 128 and (run / "checkpoints" / "policy-1.npz").is_file()
    config = json.loads((run / "config.json").read_text())
    assert config["algo"] == "ppo" and config["ppo"]["fall_penalty"] == 100.0 and config["ppo"]["ent_coef"] == 0
    second = cli(*args, check=True)
    assert "resumed from" in second.stdout and "at 128 steps" in second.stdout
    summary = _summary(run)
    assert summary["algo"] == "ppo" and summary["timesteps"] == 256 and summary["updates"] == 2
    assert (run / "checkpoints" / "policy-2.npz").is_file()
    with open(run / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {"policy/approx_kl", "policy/true_return_last100", "system/agent_steps_per_s"} <= set(rows[0])
    assert int(rows[-1]["step"]) == 256


def test_a_box_env_without_a_preset_runs_with_the_defaults(cli, tmp_path):
    """Pendulum-v1: no preset, PPOConfig's defaults (8 x 256 steps), one update; it never ends early, so
    its episodes are left as gymnasium ends them, and the run says so."""
    run = tmp_path / "run"
    proc = cli("train_policy_with_original_rewards", "--env", "Pendulum-v1", "--million_timesteps", "0.002048",
               "--run_dir", run, check=True)
    assert "episodes end as gymnasium ends them" in proc.stdout
    summary = _summary(run)
    assert summary["timesteps"] == 2048 and summary["episodes"] == 8 and summary["algo"] == "ppo"
    assert np.isfinite(summary["true_return_last100"]) and summary["episode_length_last100"] == 200


def test_without_the_control_cost_ppo_is_paid_the_task_reward_and_logs_both_returns(cli, tmp_path):
    """--no-ppo_control_cost (the paper's tasks, A.1): Reacher's policy is paid info["reward_task"]; both returns are
    in the progress line, progress.csv and the summary. Reacher's random play pays about 0.2 a step of distance and
    about 1 of control cost, so the reward paid (per step, one rollout) sits near the task return's rate, far from
    the env return's."""
    run = tmp_path / "run"
    proc = cli("train_policy_with_original_rewards", "--env", "Reacher-v5", "--million_timesteps", "0.000128",
               "--no-ppo_control_cost", *TINY, "--run_dir", run, check=True)
    assert "paid: the env's reward without its control cost" in proc.stdout and "(without control cost -" in proc.stdout
    summary = _summary(run)
    task, env = summary["task_return_last100"] / 50, summary["true_return_last100"] / 50
    assert task > env + 0.3
    with open(run / "progress.csv") as f:
        row = list(csv.DictReader(f))[-1]
    paid = float(row["policy/training_reward_mean"])
    assert abs(paid - task) < abs(paid - env) and float(row["policy/task_return_last100"]) == pytest.approx(task * 50)
    # gymnasium's own return over the same episodes: Reacher has no falls, so it is the env's return
    assert summary["standard_return_last100"] == pytest.approx(summary["true_return_last100"])
    assert float(row["policy/standard_return_last100"]) == pytest.approx(summary["standard_return_last100"])


@pytest.mark.parametrize("args, line", [
    (("gather_initial_prefs", "--env", "Pendulum-v1", "--labeller", "web"),  # a person sees MuJoCo clips only
     "Pendulum-v1 has continuous actions and is not a MuJoCo env: --labeller web shows a person only MuJoCo clips "
     "(drawn from the simulator's states); --synthetic_prefs labels it (the synthetic oracle)"),
    (("train_policy_with_original_rewards", "--env", "Hopper-v5", "--algo", "a2c"),
     "--algo a2c picks discrete actions; Hopper-v5 has continuous (Box) actions: use --algo ppo or auto"),
    (("train_policy_with_original_rewards", "--env", "Hopper-v5", "--ppo_n_minibatches", "7"),
     "--ppo_n_envs x --ppo_n_steps (2048) must divide into --ppo_n_minibatches (7)"),
])
def test_what_ppo_does_not_run_is_one_line_exit_2(cli, tmp_path, args, line):
    proc = cli(*args, "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [f"run.py: error: {line}"]
    assert not (tmp_path / "run").exists()


class _OddActions(gym.Env):
    """Neither Discrete nor Box actions."""

    action_space = gym.spaces.MultiDiscrete([2, 3])
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_an_action_space_neither_discrete_nor_box_is_one_line_exit_2(tmp_path, capsys):
    from drlhp.run.cli import main

    if "OddActions-v0" not in gym.registry:
        gym.register("OddActions-v0", entry_point=_OddActions, max_episode_steps=10)
    code = main(["train_policy_with_original_rewards", "--env", "OddActions-v0", "--run_dir", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["run.py: error: OddActions-v0: MultiDiscrete actions are not supported: drlhp's "
                                 "policies take a Discrete action space (A2C) or a Box one (PPO)"]
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_watch_plays_a_ppo_checkpoint_into_a_video(cli, tmp_path):
    """watch on Box actions: the checkpoint's mean in numpy, one rendered fixed-length episode (1,000 frames)."""
    run = tmp_path / "run"
    cli("train_policy_with_original_rewards", "--env", "InvertedPendulum-v5", "--million_timesteps", "0.000128",
        *TINY, "--run_dir", run, check=True)
    proc = cli("watch", "--env", "InvertedPendulum-v5", "--load_policy_ckpt_dir", run, "--run_dir", tmp_path / "w",
               check=True)
    summary = _summary(tmp_path / "w")
    assert summary["algo"] == "ppo" and len(summary["true_returns"]) == 1 and "1001 frames" in proc.stdout
    assert (tmp_path / "w" / "episode.mp4").stat().st_size > 0


def _no_display_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}


def test_a_person_labelling_mujoco_clips_in_a_window_with_no_display_is_one_line_exit_2(cli, tmp_path):
    """Hopper's clips can be drawn for a person (issue 30); the window (the default labeller) needs a display."""
    proc = cli("train_policy_with_preferences", "--env", "Hopper-v5", "--run_dir", tmp_path / "run",
               env=_no_display_env())
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("run.py: error: no display for the labelling window: DISPLAY is not set")
    assert not (tmp_path / "run").exists()


def test_a_machine_that_cannot_draw_mujoco_clips_refuses_a_person_in_one_line(monkeypatch):
    """The render worker is tried before a person's run starts: with an OpenGL backend that does not load here (OSMesa,
    where libosmesa6 is not installed) the run is refused in one line naming what to install."""
    import mujoco  # noqa: F401 -- here, as it was (this process draws nothing): only the worker gets OSMesa

    from drlhp.config import RunConfig
    from drlhp.run.checks import UsageError, check_inputs

    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.setenv("PYOPENGL_PLATFORM", "osmesa")
    cfg = RunConfig(mode="gather_initial_prefs", env="InvertedPendulum-v5")
    cfg = replace(cfg, prefs=replace(cfg.prefs, labeller="web", web_port=0))
    try:
        check_inputs(cfg)
    except UsageError as e:
        line = str(e)
    else:
        pytest.skip("OSMesa draws here: no backend to fail with")
    assert "\n" not in line and line.startswith("--labeller web: this machine cannot draw MuJoCo clips offscreen")
    assert "install libegl1 libegl-mesa0 libgl1-mesa-dri" in line and line.endswith("labels instead of a person)")


def test_watch_on_a_machine_that_cannot_draw_mujoco_is_one_line_exit_2(cli, tmp_path):
    """watch draws a MuJoCo policy's video offscreen (following the robot): with rendering unusable (MUJOCO_GL=disable:
    mujoco imports and steps, but makes no OpenGL context), the run's render check refuses it in one line, before
    the checkpoint is read or a run directory made."""
    proc = cli("watch", "--env", "Hopper-v5", "--load_policy_ckpt_dir", tmp_path / "none", "--run_dir", tmp_path / "w",
               env={**os.environ, "MUJOCO_GL": "disable"}, timeout=300)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("run.py: error: watch draws its video offscreen, following the robot: this machine "
                               "cannot draw MuJoCo clips offscreen (")
    assert "install libegl1 libegl-mesa0 libgl1-mesa-dri" in lines[0]
    assert not (tmp_path / "w").exists()

"""--oracle_goal wired into a run (issue 30): refused in one line where it cannot work, a short real run on Hopper-v5
whose database holds exactly the goal's answers, the shipped goal's preset, and watch's measure of an episode."""
from __future__ import annotations

import json
import math
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("mujoco")

BACKFLIP = "pref_interface.goals:hopper_backflip"


def _refused(proc, *fragments) -> str:
    """run.py refused its input as it should: exit 2, exactly one line on stderr, nothing on stdout."""
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.py: error: "), proc.stderr
    assert proc.stdout == ""  # no "[run] ..." line: nothing started
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def raising_goal(tmp_path, monkeypatch):
    """A module ``goalwire_goals`` on the children's path whose goal raises on any clip."""
    (tmp_path / "goalwire_goals.py").write_text(textwrap.dedent("""
        def raises(obs, actions, info):
            raise RuntimeError("no clip pleases me")
    """))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    yield
    sys.modules.pop("goalwire_goals", None)


@pytest.mark.parametrize("args, fragments", [
    (["--env", "Hopper-v5", "--labeller", "web"], ["--oracle_goal is what the scripted labeller wants",
                                                  "--labeller web"]),
    (["--env", "MountainCar-v0", "--synthetic_prefs"], ["Box-action", "MountainCar-v0 has discrete actions"]),
    (["--env", "Hopper-v5", "--synthetic_prefs", "--oracle_goal", "no_such_goals:flip"],
     ["--oracle_goal no_such_goals:flip: module no_such_goals does not import (ModuleNotFoundError"]),
    (["--env", "Hopper-v5", "--synthetic_prefs", "--oracle_goal", "goalwire_goals:raises"],
     ["--oracle_goal goalwire_goals:raises raised on a clip of 25 steps: RuntimeError: no clip pleases me"]),
    (["--env", "Hopper-v5", "--synthetic_prefs", "--oracle_goal", "pref_interface.goals:cheetah_standing"],
     ["is for HalfCheetah-v5, not Hopper-v5"]),
    (["train_policy_with_original_rewards", "--env", "Hopper-v5", "--synthetic_prefs"],
     ["train_policy_with_original_rewards has no labeller"]),
])
def test_a_goal_that_cannot_work_is_one_line_exit_2_before_any_run_directory(cli, tmp_path, raising_goal, args,
                                                                             fragments):
    import os

    run_dir = tmp_path / "run"
    args = args if "--oracle_goal" in args else [*args, "--oracle_goal", BACKFLIP]
    proc = cli(*args, "--run_dir", run_dir, timeout=120, env=dict(os.environ))
    _refused(proc, *fragments)
    assert not run_dir.exists()


def test_the_backflip_goal_brings_its_preset_budget():
    from drlhp.config.presets import with_preset

    argv, name, line = with_preset(["--env", "Hopper-v5", "--labeller", "oracle", "--oracle_goal", BACKFLIP])
    assert name == "mujoco" and f"(for the goal {BACKFLIP}: --million_timesteps 2 --n_initial_prefs 250 " \
                                  f"--n_labels 750 --ppo_ent_coef 0.01)" in line
    from drlhp.config.cli import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args(argv))
    assert (cfg.million_timesteps, cfg.prefs.n_initial_prefs, cfg.prefs.n_labels) == (2.0, 250, 750)
    assert cfg.prefs.n_initial_prefs + cfg.prefs.n_labels <= 1000  # the must-show: at most 1,000 labels
    cheetah, _, _ = with_preset(["--env", "HalfCheetah-v5", "--labeller", "oracle", "--oracle_goal",
                                 "pref_interface.goals:cheetah_standing"])
    # the goal keeps the paper's bonus where the task's preset from preferences has 0 (its control cost)
    cheetah_cfg = config_from_args(build_parser().parse_args(cheetah))
    assert cheetah_cfg.ppo.ent_coef == 0.01
    assert cheetah_cfg.ppo.init_log_std == 0.0  # the goal stood at 0, where the task's preset starts at -1 (H55)
    assert cfg.ppo.init_log_std == 0.0  # the backflip's Hopper: the preset's own 0
    assert (cfg.prefs.segment_length, cfg.ppo.ent_coef, cfg.prefs.oracle_goal) == (188, 0.01, BACKFLIP)
    mine, _, _ = with_preset(["--env", "Hopper-v5", "--synthetic_prefs", "--oracle_goal", BACKFLIP,
                              "--n_labels", "100"])
    assert config_from_args(build_parser().parse_args(mine)).prefs.n_labels == 100  # the user's flag wins
    _, _, plain = with_preset(["--env", "Hopper-v5", "--synthetic_prefs"])
    assert "for the goal" not in plain and "--n_labels 1050" in plain
    _, _, unknown = with_preset(["--env", "Hopper-v5", "--synthetic_prefs", "--oracle_goal", "my.goals:flip"])
    assert "for the goal" not in unknown  # a goal not shipped: no budget of its own


@pytest.mark.slow
def test_a_short_backflip_run_labels_by_the_goal_and_records_it(cli, tmp_path):
    """A real three-process run on Hopper-v5 with the backflip goal: it finishes, says and records the goal, its
    policy's envs never end early (the goal's terminate_when_unhealthy=False), and every label in its database is
    the goal's answer on the two stored segments (recomputed here from their observations)."""
    from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT
    from drlhp.reward.pref_db import PrefDB
    from pref_interface.goals import hopper_backflip

    run_dir = tmp_path / "run"
    proc = cli("--env", "Hopper-v5", "--labeller", "oracle", "--oracle_goal", BACKFLIP, "--run_dir", run_dir,
               "--million_timesteps", "0.002", "--ppo_n_envs", "2", "--ppo_n_steps", "256", "--ppo_n_minibatches", "4",
               "--ppo_n_epochs", "2", "--n_initial_prefs", "10", "--n_labels", "10", "--n_initial_epochs", "1",
               "--segment_length", "50", "--n_predictors", "1", timeout=540, check=True)
    assert f"[run] oracle goal {BACKFLIP}" in proc.stdout and "{'terminate_when_unhealthy': False}" in proc.stdout
    assert f"[prefs] the oracle labels by goal {BACKFLIP} (observations split at 11)" in proc.stdout
    assert "terminate_when_unhealthy=False: the task never ends early" in proc.stdout
    assert json.loads((run_dir / "config.json").read_text())["prefs"]["oracle_goal"] == BACKFLIP
    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    entries = db.entries("train") + db.entries("val")
    assert len(entries) >= 10
    scores = []
    for e in entries:
        s1, s2 = (hopper_backflip(db.segment_obs(i)[:, :11], db.segment_obs(i)[:, 11:], {}) for i in (e.id1, e.id2))
        assert db.segment_obs(e.id1).shape == (50, 11 + 3)
        assert tuple(e.mu) == (MU_LEFT if s1 > s2 else MU_RIGHT if s2 > s1 else MU_EQUAL), (e.mu, s1, s2)
        scores += [s1, s2]
    assert np.ptp(scores) > 0.1  # the clips differ in rotation: the labels are not all ties


class _Spinner:
    """A policy stand-in for play_box_episodes: the same action whatever it sees."""

    def __init__(self, action):
        self.action = np.asarray(action, np.float32)

    def act_deterministic(self, obs):
        return self.action[None]


def test_watch_counts_backflips_of_each_episode_in_the_goals_env(tmp_path):
    """play_box_episodes keeps every observation of each episode; the backflip goal's measure counts the full
    backward turns in them (made-up pitch series with 2 and 0 turns), and watch finds the goal a run recorded."""
    import gymnasium as gym

    from drlhp.config import RunConfig
    from drlhp.policy.watch import play_box_episodes
    from drlhp.run.modes import _goal_figures, _watched_goal
    from pref_interface.goals import hopper_backflip

    env = gym.make("Hopper-v5", max_episode_steps=30, **hopper_backflip.env_kwargs)
    try:
        frames, returns, observations = play_box_episodes(env, _Spinner([1.0, -1.0, 0.5]), 2, seed=0)
    finally:
        env.close()
    assert frames == [] and len(returns) == 2 and [o.shape for o in observations] == [(31, 11), (31, 11)]

    flips = np.zeros((200, 11))
    flips[:, 1] = np.linspace(0.0, -2 * 2 * math.pi - 0.5, 200)  # two backward turns and a bit, 0.13 rad a step
    rocking = np.zeros((200, 11))
    rocking[:, 1] = np.sin(np.linspace(0, 20, 200)) * 3.0  # back and forth by less than a turn
    figures = _goal_figures(BACKFLIP, hopper_backflip, hopper_backflip.env_kwargs, [flips, rocking])
    assert figures["goal_measure"] == "backflips" and figures["goal_measures"] == [2, 0]
    assert figures["goal_measure_mean"] == 1.0 and figures["oracle_goal"] == BACKFLIP

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"prefs": {"oracle_goal": BACKFLIP}}))
    cfg = RunConfig(mode="watch", env="Hopper-v5")
    spec, goal, kwargs = _watched_goal(cfg, str(run / "checkpoints" / "policy-1.npz"))
    assert (spec, goal, kwargs) == (BACKFLIP, hopper_backflip, {"terminate_when_unhealthy": False})
    (run / "config.json").write_text(json.dumps({"prefs": {"labeller": "oracle"}}))
    assert _watched_goal(cfg, str(run / "checkpoints" / "policy-1.npz")) == ("", None, {})


def test_the_policy_reads_a_goals_env_kwargs_below_the_roles():
    """envs.goal_kwargs gives the policy a checked goal's gym.make kwargs without importing pref_interface."""
    from envs.goal_kwargs import goal_env_kwargs

    assert goal_env_kwargs(BACKFLIP) == {"terminate_when_unhealthy": False}
    assert goal_env_kwargs(None) == {} and goal_env_kwargs("") == {}

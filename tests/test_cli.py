"""run.py as a user runs it: tiny budgets, real processes, real files."""
import dataclasses
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


def test_missing_predictor_folder_names_the_path_given(cli, tmp_path):
    missing = tmp_path / "no_such_run"
    proc = cli("train_policy_with_preferences", "--env", "MovingDot-v0", "--synthetic_prefs",
               "--load_reward_predictor_ckpt_dir", missing, "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"run.py: error: --load_reward_predictor_ckpt_dir {missing}: no such file or directory"], lines
    assert not (tmp_path / "run").exists()
    # a folder that exists without a checkpoint: the file looked for, once (it was written twice over)
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("train_policy_with_preferences", "--env", "MovingDot-v0", "--synthetic_prefs",
               "--load_reward_predictor_ckpt_dir", empty, "--run_dir", tmp_path / "run")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"{empty}/reward_predictor/reward_predictor.npz: No such file" in proc.stderr
    assert proc.stderr.count("reward_predictor.npz") == 1, proc.stderr


def _train(cli, run_dir, steps_m, *extra):
    return cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", 3,
               "--million_timesteps", steps_m, "--n_envs", 8, "--run_dir", run_dir, "--log_interval", 1,
               "--policy_ckpt_interval", 10, *extra, check=True)


@pytest.mark.slow
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
    # the kernel library the policy runs, on which CPU, said at start and kept with the sitting
    machine = json.loads((run_dir / "run.json").read_text())["sittings"][0]["machine"]
    assert machine["policy_kernels"]["library"] in ("oneDNN", "Eigen", "TensorFlow's default")
    assert "predictor_kernels" not in machine and f"[run] TensorFlow kernels on {machine['cpu']}" in proc.stdout
    assert list((run_dir / "tb").glob("events*"))
    header = (run_dir / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"step", "policy/entropy", "policy/value_loss", "policy/true_return_last100",
            "system/agent_steps_per_s", "system/memory_mb_policy"} <= set(header)
    assert (run_dir / "checkpoints" / "policy-100.npz").exists()

    # A bigger budget on the same run directory: refused in one line (the settings differ) ...
    proc = cli("train_policy_with_original_rewards", "--env", "MovingDot-v0", "--seed", 3, "--million_timesteps",
               0.006, "--n_envs", 8, "--run_dir", run_dir, "--log_interval", 1, "--policy_ckpt_interval", 10)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "million_timesteps 0.004 -> 0.006" in proc.stderr and "--resume_with_changes" in proc.stderr
    # ... and with --resume_with_changes it resumes from the checkpoint, not from zero.
    proc = _train(cli, run_dir, 0.006, "--resume_with_changes")
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
    assert "config_changes" not in first
    assert second["config_changes"] == {"million_timesteps": [0.004, 0.006], "resume_with_changes": [False, True]}
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


# --- bad inputs: one line, exit 2, before anything starts ---------------------------------------------

def _refused(proc, *fragments) -> str:
    """run.py refused its input as it should: exit 2, exactly one line on stderr, nothing on stdout."""
    assert proc.returncode == 2, (proc.stdout[-2000:], proc.stderr[-2000:])
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("run.py: error: "), proc.stderr
    assert proc.stdout == ""  # not even the "[run] ..." line: no run was started
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("mode, bad, fragment", [
    ("train_policy_with_original_rewards", ["--million_timesteps", "-1"], "--million_timesteps"),
    ("train_policy_with_preferences", ["--million_timesteps", "0"], "--million_timesteps"),
    ("train_policy_with_original_rewards", ["--n_envs", "0"], "--n_envs"),
    ("train_policy_with_preferences", ["--segment_length", "0"], "--segment_length"),
    ("train_policy_with_preferences", ["--n_envs", "lots"], "--n_envs"),  # argparse's own error
    ("train_policy_with_original_rewards", ["--stop_at_true_return", "high"], "--stop_at_true_return"),
    ("train_policy_with_preferences", ["--env", "Nope"], "unknown env 'Nope'"),
])
def test_bad_numbers_and_env_are_one_line_exit_2_before_any_run_directory(cli, tmp_path, mode, bad, fragment):
    import time

    run_dir = tmp_path / "run"
    t0 = time.monotonic()
    proc = cli(mode, "--env", "MovingDot-v0", "--synthetic_prefs", "--run_dir", run_dir, *bad, timeout=60)
    _refused(proc, fragment)
    assert time.monotonic() - t0 < 10.0  # measured: about 0.5 s (no TensorFlow, no process)
    assert not run_dir.exists()


@pytest.mark.parametrize("flag", ["--load_policy_ckpt_dir", "--load_reward_predictor_ckpt_dir"])
def test_a_text_file_as_checkpoint_is_named_in_one_line(cli, tmp_path, flag):
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint\n")
    run_dir = tmp_path / "run"
    line = _refused(cli("--env", "MovingDot-v0", "--synthetic_prefs", "--run_dir", run_dir, flag, text, timeout=60),
                    str(text), "not an .npz archive")
    assert "pickle" not in line  # numpy's hint to load it with allow_pickle is no help here
    assert not run_dir.exists()


def test_floyd_seeds_checks_the_arguments_once_before_starting_any_seed(tmp_path):
    import subprocess
    import sys

    from conftest import REPO

    runs = tmp_path / "runs"
    runs.mkdir()
    proc = subprocess.run([sys.executable, "-m", "floyd", "--runs_dir", str(runs), "seeds", "--n", "2", "--",
                           "--env", "Nope", "--synthetic_prefs"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m floyd: error: "), proc.stderr
    # run.py's own line, as each seed would have printed it
    assert "unknown env 'Nope'; list valid ids with: python run.py --list_envs" in lines[0]
    assert "[seed" not in proc.stdout and not any(runs.iterdir())  # no seed started, no group folder


def _check(*argv):
    """run.py's checks on ``argv`` (MovingDot, synthetic labels), in this process; UsageError if refused."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.run.checks import check_inputs

    check_inputs(config_from_args(build_parser().parse_args(["--env", "MovingDot-v0", "--synthetic_prefs", *argv])))


@pytest.mark.parametrize("flag, value", [
    ("--seed", -1), ("--million_timesteps", -0.5), ("--million_timesteps", "nan"), ("--million_timesteps", "inf"),
    ("--log_interval", -1), ("--policy_ckpt_interval", -1), ("--n_envs", 0), ("--n_steps", 0), ("--lr", 0),
    ("--ent_coef", -0.01), ("--gamma", 1.5), ("--n_env_threads", -1), ("--tf_intra_threads", -1),
    ("--tf_inter_threads", -1), ("--episodes", 0), ("--max_prefs", 0), ("--n_initial_prefs", -1),
    ("--n_labels", -1), ("--segment_length", 0), ("--segments_per_cut", 0), ("--prefs_save_interval", 0),
    ("--n_predictors", 0), ("--n_initial_epochs", -1), ("--reward_batch_size", 0), ("--reward_lr", -1e-3),
    ("--reward_publish_interval", 0), ("--reward_norm_momentum", -0.1), ("--reward_norm_momentum", 1.5),
    ("--reward_train_fraction", 0), ("--reward_tf_threads", 0), ("--reward_dropout", 1),
    ("--reward_l2_init", -1e-4), ("--stop_at_true_return", "nan"), ("--stop_at_true_return", "inf"),
    ("--stop_at_success_rate", 1.5), ("--stop_at_success_rate", -0.1),
])
def test_every_count_budget_and_fraction_is_checked(flag, value):
    from drlhp.run.checks import UsageError

    with pytest.raises(UsageError) as caught:
        _check(flag, str(value))
    message = str(caught.value)
    assert message.startswith(f"{flag} must be ") and "\n" not in message, message


def test_checks_that_span_flags():
    from drlhp.run.checks import UsageError

    with pytest.raises(UsageError, match="less than one update"):  # 0.00001M = 10 steps < 16 envs x 5 steps
        _check("--million_timesteps", "0.00001")
    with pytest.raises(UsageError, match="--n_initial_prefs 5000 is more than --max_prefs 3000"):
        _check("--n_initial_prefs", "5000")
    with pytest.raises(UsageError, match="gather_initial_prefs needs --n_initial_prefs"):
        _check("gather_initial_prefs", "--n_initial_prefs", "0")
    with pytest.raises(UsageError, match="a .mp4 or a .gif"):
        _check("watch", "--load_policy_ckpt_dir", "somewhere", "--video", "out.avi")


def test_the_flags_we_ship_pass_the_checks():
    from drlhp.config.presets import PRESETS, preset_flags

    for name in PRESETS:
        _check(*preset_flags(name))
    _check("train_policy_with_original_rewards", "--million_timesteps", "0.002", "--n_envs", "4",
           "--log_interval", "0", "--policy_ckpt_interval", "0", "--n_env_threads", "0")
    _check("--n_initial_prefs", "0", "--n_labels", "0", "--n_initial_epochs", "0", "--reward_dropout", "0",
           "--reward_train_fraction", "1", "--reward_norm_momentum", "1", "--gamma", "1", "--ent_coef", "0")


def test_the_console_scripts_work_from_any_directory(tmp_path):
    """make installs the project editable (pyproject.toml): `drlhp` is run.py and `drlhp-runs` is
    `python -m floyd`, outside the checkout too."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    bin_dir = Path(sys.executable).parent
    drlhp, drlhp_runs = bin_dir / "drlhp", bin_dir / "drlhp-runs"
    if not (drlhp.exists() and drlhp_runs.exists()):
        pytest.skip("the project is not installed in this environment (make does it: pip install --no-deps -e .)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args):
        return subprocess.run([*map(str, args)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    proc = run(drlhp, "--list_envs")
    assert proc.returncode == 0 and "MovingDot-v0" in proc.stdout.split(), proc.stderr
    proc = run(drlhp, "--env", "Pongg-v9")
    assert proc.returncode == 2 and proc.stderr.strip().startswith("run.py: error: unknown env"), proc.stderr
    (tmp_path / "runs").mkdir()
    proc = run(drlhp_runs, "list", "--runs_dir", tmp_path / "runs")
    assert proc.returncode == 0 and proc.stdout.startswith("no runs in"), proc.stderr


def test_presets_put_their_flags_first_and_the_command_line_wins():
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import PRESETS, default_preset, with_preset

    assert default_preset("MovingDot-v0") == "moving-dot" and default_preset("PongNoFrameskip-v4") == "atari"
    assert default_preset("BreakoutNoFrameskip-v4") == "atari" and default_preset("Breakout-v5") == "none"
    assert default_preset("CartPole-v1") == "cartpole" and default_preset("Acrobot-v1") == "none"
    argv, name, line = with_preset(["--env", "MovingDot-v0", "--synthetic_prefs", "--n_labels", "7"])
    cfg = config_from_args(build_parser().parse_args(argv))
    assert name == "moving-dot" and cfg.preset == "moving-dot" and line.startswith("[run] preset moving-dot")
    assert cfg.prefs.segment_length == 5 and cfg.reward.n_members == 1 and not cfg.reward.batchnorm
    assert cfg.prefs.n_labels == 7  # the command line's own flag wins over the preset's 6000
    argv, name, line = with_preset(["--env", "MovingDot-v0", "--preset", "none"])
    cfg = config_from_args(build_parser().parse_args(argv))
    assert line is None and cfg.preset == "none" and cfg.prefs.segment_length == 25  # drlhp's defaults
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        with_preset(["--env", "MovingDot-v0", "--preset", "nope"])
    assert set(PRESETS) >= {"none", "paper", "moving-dot", "cartpole", "pong", "atari"}
    assert PRESETS["pong"] == PRESETS["atari"]  # the older name, the same flags


def test_the_pong_preset_is_the_campaigns_recipe_and_slows_its_labels_for_a_person():
    import re
    import shlex
    from pathlib import Path

    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import preset_flags, with_preset

    def cfg_of(argv):
        expanded, name, line = with_preset(argv)
        return config_from_args(build_parser().parse_args(expanded)), name, line

    synthetic, name, line = cfg_of(["--env", "PongNoFrameskip-v4", "--synthetic_prefs"])
    assert name == "atari" and line.startswith("[run] preset atari (the default for PongNoFrameskip-v4")
    assert cfg_of(["--env", "PongNoFrameskip-v4", "--synthetic_prefs", "--preset", "pong"])[0] == dataclasses.replace(
        synthetic, preset="pong")  # the older name gives the same run
    # issue 59's step 2: the paper's 5,500 labels (seeds 0 and 1 at +19, the 10,000 before: 2 of 3)
    assert (synthetic.prefs.n_initial_prefs, synthetic.prefs.n_labels) == (275, 5225)
    assert synthetic.prefs.label_schedule == "paper"
    assert synthetic.lr_horizon_million_timesteps == 80 and not synthetic.reward.batchnorm
    assert synthetic.reward.center_steps == 2000  # session 11's centring, from the start
    # the bonus as campaign-5 had it: 0.01, halved at 6.3M (0.005 from the start lost every ball: session 12)
    assert (synthetic.a2c.ent_coef, synthetic.a2c.ent_coef_switch_million_timesteps,
            synthetic.a2c.ent_coef_after_switch) == (0.01, 6.3, 0.005)
    assert synthetic.reward.bfloat16 == "off" and synthetic.reward.tf_threads == 2
    for argv in (["--env", "PongNoFrameskip-v4"], ["--env", "PongNoFrameskip-v4", "--labeller", "web"]):
        person, name, line = cfg_of(argv)
        # a person's hour: the paper's Enduro run (about 1,300 queries over 4M frames), not the oracle's 10M steps
        assert name == "atari" and (person.prefs.n_initial_prefs, person.prefs.n_labels) == (325, 975)
        assert person.million_timesteps == 1
        assert line.endswith("(a person labels, so --million_timesteps 1 --n_initial_prefs 325 --n_labels 975)")
    goal = "pref_interface.goals:enduro_with_cars"  # the scripted stand-in for that person: the same budget
    enduro = cfg_of(["--env", "EnduroNoFrameskip-v4", "--synthetic_prefs", "--oracle_goal", goal])[0]
    assert (enduro.million_timesteps, enduro.prefs.n_initial_prefs, enduro.prefs.n_labels) == (1, 325, 975)
    assert cfg_of(["--env", "EnduroNoFrameskip-v4", "--synthetic_prefs"])[0].prefs.n_labels == 5225
    assert cfg_of(["--env", "PongNoFrameskip-v4", "--labeller", "oracle"])[0].prefs.n_labels == 5225
    assert cfg_of(["--env", "PongNoFrameskip-v4", "--n_labels", "40"])[0].prefs.n_labels == 40  # the user's wins
    # the campaign's script (the run the preset's figures come from) passes exactly the preset's flags
    script = (Path(__file__).resolve().parent.parent / "experiments" / "pong_campaign.sh").read_text()
    command = re.search(r"run\.py train_policy_with_preferences(.*?)\|\|", script, re.S).group(1)
    words = shlex.split(command.replace("\\\n", " "))
    pairs = {w: (words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None)
             for i, w in enumerate(words) if w.startswith("--")}
    preset = preset_flags("pong")
    preset_pairs = {w: (preset[i + 1] if i + 1 < len(preset) and not preset[i + 1].startswith("--") else None)
                    for i, w in enumerate(preset) if w.startswith("--")}
    own = {"--env", "--synthetic_prefs", "--seed", "--run_dir", "--log_interval", "--stop_after_hours"}
    # one setting moved since: the predictor's floor, 0.05 -> the paper's 0.1 pair-updates per agent step (the
    # campaign's predictor ran flat out at 0.10-0.12 beside a float32 policy; docs/results/speed.md, issue 58)
    assert preset_pairs.pop("--reward_updates_per_step") == "0.1"
    assert pairs.pop("--reward_updates_per_step") == "0.05"
    # and the predictor's threads, 1 -> 2 (the same arithmetic, on the core the waiting policy leaves: speed.md,
    # session 34); the campaign's script leaves it at the default, 1
    assert preset_pairs.pop("--reward_tf_threads") == "2" and "--reward_tf_threads" not in pairs
    # and the label budget, 10,000 -> the paper's 5,500 (issue 59's step 2: docs/results/pong.md, session 36)
    assert (pairs.pop("--n_initial_prefs"), pairs.pop("--n_labels")) == ("500", "9500")
    assert (preset_pairs.pop("--n_initial_prefs"), preset_pairs.pop("--n_labels")) == ("275", "5225")
    assert {k: v for k, v in pairs.items() if k not in own} == preset_pairs


def test_the_cartpole_preset_learns_from_preferences_with_ppo_and_the_penalty_rule():
    """H40 (issue 39, docs/results/cartpole.md session 24): from preferences the `cartpole` preset picks PPO with
    CleanRL's CartPole settings and --fall_rule penalty; on the true reward it stays A2C under gymnasium's own
    episodes; the user's --algo a2c and --fall_rule win."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import with_preset

    def cfg_of(argv):
        expanded, name, line = with_preset(argv)
        return config_from_args(build_parser().parse_args(expanded)), name, line

    prefs, name, line = cfg_of(["--env", "CartPole-v1", "--synthetic_prefs"])
    assert name == "cartpole" and prefs.algo == "ppo" and prefs.ppo.fall_rule == "penalty"
    assert (prefs.ppo.n_envs, prefs.ppo.n_steps, prefs.ppo.n_epochs, prefs.ppo.n_minibatches) == (8, 128, 4, 4)
    assert (prefs.ppo.lr, prefs.ppo.clip_coef, prefs.ppo.ent_coef, prefs.ppo.gamma) == (2.5e-4, 0.2, 0.01, 0.99)
    assert prefs.ppo.anneal_lr and prefs.ppo.norm_adv and prefs.total_timesteps == 500_000
    assert "picks --algo ppo" in line and "--fall_rule penalty" in line
    true_reward, _, line = cfg_of(["train_policy_with_original_rewards", "--env", "CartPole-v1"])
    from drlhp.run.checks import resolve_algo

    assert resolve_algo(true_reward).algo == "a2c" and true_reward.a2c.lr == 1.4e-3 and "penalty" not in line
    assert true_reward.ppo.fall_rule == "reset"
    a2c, _, _ = cfg_of(["--env", "CartPole-v1", "--synthetic_prefs", "--algo", "a2c", "--fall_rule", "reset"])
    assert a2c.algo == "a2c" and a2c.ppo.fall_rule == "reset"


def test_unknown_preset_is_one_line_exit_2(cli):
    proc = cli("--env", "MovingDot-v0", "--preset", "nope")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "unknown preset 'nope'" in proc.stderr and proc.stdout == ""
    proc = cli("--list_presets", check=True)
    assert "moving-dot: --million_timesteps 0.1" in proc.stdout


def test_stop_at_ends_a_sitting_that_resumes_on_the_same_schedule(cli, tmp_path):
    run_dir = tmp_path / "run"
    proc = _train(cli, run_dir, 0.004, "--stop_at_million_timesteps", 0.002)
    assert "stopped at --stop_at_million_timesteps 0.002" in proc.stdout
    assert json.loads((run_dir / "status.json").read_text())["status"] == "stopped"
    assert json.loads((run_dir / "summary.json").read_text())["timesteps"] == 2000
    # the learning rate still decays over the whole budget: half of it is left at the stop
    import csv

    with open(run_dir / "progress.csv", newline="") as f:
        last = list(csv.DictReader(f))[-1]
    assert int(float(last["step"])) == 2000 and abs(float(last["policy/learning_rate"]) - 3.5e-4) < 1e-6
    # the same command without the stop goes on (a setting that only ends a sitting may change freely)
    _train(cli, run_dir, 0.004)
    assert json.loads((run_dir / "status.json").read_text())["status"] == "finished"
    assert json.loads((run_dir / "summary.json").read_text())["timesteps"] == 4000


def test_scaled_env_reward_has_the_predictor_scale():
    from drlhp.policy.reward_source import ScaledEnvReward

    rng = np.random.default_rng(0)
    source = ScaledEnvReward(norm_std=0.05)
    true = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0, 2.0], size=(400, 16)).astype(np.float32)
    out = np.concatenate([source.rewards(None, true[i:i + 5]) for i in range(0, 400, 5)])
    late = out[200:]  # once the running statistics have settled
    assert abs(late.mean()) < 0.01 and abs(late.std() - 0.05) < 0.005
    # the order of steps is kept: a +1 (and the 2, clipped to +1) above a 0 above a -1
    assert (out[200:][true[200:] > 0] > out[200:][true[200:] == 0].max()).all()


def test_every_config_field_is_one_flag_with_help_and_docs_flags_md_is_current():
    """One source per flag: each field of the four configs is a flag (mode, preset and the nested configs
    aside), with its docstring entry as help; docs/flags.md is what drlhp.config writes from them."""
    import dataclasses
    from pathlib import Path

    from drlhp import config
    from drlhp.config import cli
    from drlhp.config.a2c import A2CConfig
    from drlhp.config.ppo import PPOConfig
    from drlhp.config.reward import RewardConfig

    flags = cli.flags()
    names = [f.name for f in flags]
    assert len(names) == len(set(names)), "two fields share a flag name"
    n_fields = sum(len(dataclasses.fields(c)) for c in (A2CConfig, PPOConfig, RewardConfig, config.PrefConfig))
    n_fields += len(dataclasses.fields(config.RunConfig)) - 6  # mode (positional), preset, a2c, ppo, reward, prefs
    assert len(flags) == n_fields
    assert [f.name for f in flags if len(f.help) < 10] == []  # every field has its docstring entry
    assert {"n_predictors", "reward_tf_threads", "reward_batch_size", "lr", "reward_lr", "ppo_lr", "algo"} <= set(names)
    doc = Path(__file__).resolve().parents[1] / "docs" / "flags.md"
    assert doc.read_text() == cli.flags_markdown(), "docs/flags.md is stale: python -m drlhp.config > docs/flags.md"


def test_every_mode_has_one_run_and_its_shape_is_the_configs_to_say():
    """drlhp.run.pipeline.RUNS runs each of the five modes (no fallback), and RunConfig's properties say what
    each does: (gathers, labels, trains the policy, trains the predictor, uses processes, watches)."""
    from drlhp.config import MODES, RunConfig
    from drlhp.run.pipeline import RUNS

    assert tuple(RUNS) == MODES
    expected = {("train_policy_with_preferences", False): (False, True, True, True, True, False),
                ("train_policy_with_preferences", True): (False, False, True, False, False, False),
                ("gather_initial_prefs", False): (True, True, False, False, True, False),
                ("pretrain_reward_predictor", False): (False, False, False, True, False, False),
                ("train_policy_with_original_rewards", False): (False, False, True, False, False, False),
                ("watch", False): (False, False, False, False, False, True)}
    for (mode, no_labelling), shape in expected.items():
        cfg = RunConfig(mode=mode, env="MovingDot-v0", no_labelling=no_labelling)
        assert (cfg.gathers, cfg.labels, cfg.trains_policy, cfg.trains_predictor, cfg.uses_processes,
                cfg.watches) == shape, (mode, no_labelling)
        assert cfg.runs_policy == (cfg.trains_policy or cfg.watches)
        assert cfg.trains_predictor_alone == (cfg.trains_predictor and not cfg.labels)


def test_every_flag_reaches_its_field_and_its_default_is_the_fields():
    from drlhp import config
    from drlhp.config import cli

    parser = cli.build_parser()
    defaults = cli.config_from_args(parser.parse_args(["--env", "MovingDot-v0"]))
    assert defaults == config.RunConfig(env="MovingDot-v0")  # the parser's defaults are the fields'
    for flag in cli.flags():
        f, meta = flag.field, flag.field.metadata
        if flag.type is bool:
            value = not f.default
            argv = [f"--no-{flag.name}" if f.default else f"--{flag.name}"]
        elif meta["parse"]:  # a JSON object (the --*_resources flags)
            value = {"CPU": 1}
            argv = [f"--{flag.name}", '{"CPU": 1}']
        elif meta["choices"]:
            value = next(c for c in meta["choices"] if c != f.default)
            argv = [f"--{flag.name}", value]
        elif flag.type is int:
            value = f.default + 1
            argv = [f"--{flag.name}", str(value)]
        elif flag.type is float:
            value = f.default / 2 if f.default else 0.5
            argv = [f"--{flag.name}", repr(value)]
        else:
            value = "somewhere" if flag.name != "env" else "CartPole-v1"
            argv = [f"--{flag.name}", value]
        cfg = cli.config_from_args(parser.parse_args(["--env", "MovingDot-v0", *argv]))
        got = cfg
        for attr in flag.place.split("."):
            got = getattr(got, attr)
        assert got == value, (flag.name, got, value)
        changed = {k for k in config.RunConfig.__dataclass_fields__ if getattr(cfg, k) != getattr(defaults, k)}
        assert len(changed) == 1, (flag.name, changed)  # nothing else moved


def test_config_checks_name_the_flag():
    from dataclasses import replace

    from drlhp.config import RunConfig
    from drlhp.config.cli import config_problem
    from drlhp.config.reward import RewardConfig

    cfg = RunConfig(env="MovingDot-v0")
    assert config_problem(cfg) is None
    assert config_problem(replace(cfg, reward=RewardConfig(tf_threads=0))) == \
        "--reward_tf_threads must be a whole number of at least 1, got 0"
    assert config_problem(replace(cfg, mode="nope")).startswith("mode must be one of train_policy_with_preferences")


def test_every_checked_flag_refuses_a_bad_value_in_one_line_naming_it():
    from drlhp.config import cli
    from drlhp.run.checks import UsageError

    checked = [f for f in cli.flags() if f.field.metadata["check"] and not f.field.metadata["choices"]]
    assert len(checked) >= 40
    for flag in checked:
        _, ok = flag.field.metadata["check"]
        bad = next(v for v in (-1, 0, 1, 1.5, float("nan")) if not ok(flag.type(v)))  # nan: any finite number
        with pytest.raises(UsageError) as caught:
            _check(f"--{flag.name}", str(flag.type(bad)))
        assert str(caught.value).startswith(f"--{flag.name} must be "), (flag.name, str(caught.value))


def test_a_reader_that_stops_early_gets_no_broken_pipe_traceback():
    import subprocess
    import sys
    from pathlib import Path

    run_py = Path(__file__).resolve().parents[1] / "run.py"
    proc = subprocess.run(f"'{sys.executable}' '{run_py}' --list_envs | true", shell=True, capture_output=True,
                          text=True, timeout=120)
    assert "BrokenPipeError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_resume_sees_a_relative_and_an_absolute_path_to_the_same_place_as_the_same(tmp_path, monkeypatch):
    import dataclasses
    from types import SimpleNamespace

    from drlhp.config import RunConfig
    from drlhp.run.checks import UsageError, check_resume

    monkeypatch.chdir(tmp_path)
    (tmp_path / "prefs").mkdir()
    recorded = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path / "run"), load_prefs_dir=str(tmp_path / "prefs"))
    record = SimpleNamespace(dir=tmp_path / "run", read_json=lambda name: recorded.to_dict())
    check_resume(dataclasses.replace(recorded, run_dir="run", load_prefs_dir="prefs"), record, ())  # the same
    with pytest.raises(UsageError, match="load_prefs_dir"):  # another place is still a change
        check_resume(dataclasses.replace(recorded, run_dir="run", load_prefs_dir="elsewhere"), record, ())


def test_a_resumed_run_goes_on_from_its_own_predictor_not_the_one_it_was_first_given(tmp_path):
    from drlhp.config import RunConfig
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.checkpoint import predictor_to_load

    cfg = RunConfig(env="MovingDot-v0", load_reward_predictor_ckpt_dir=str(tmp_path / "given"))
    run = tmp_path / "run"
    assert str(predictor_to_load(cfg, run)) == str(tmp_path / "given")  # a new run: the given one
    RunPaths(run).predictor.parent.mkdir(parents=True)
    RunPaths(run).predictor.write_bytes(b"")
    assert predictor_to_load(cfg, run) == RunPaths(run).predictor  # resumed: its own, trained further
    assert predictor_to_load(RunConfig(env="MovingDot-v0"), tmp_path / "new") is None


def test_resume_lets_where_the_roles_run_change_but_not_what_they_learn(tmp_path):
    import dataclasses
    from types import SimpleNamespace

    from drlhp.config import RunConfig
    from drlhp.run.checks import UsageError, check_resume

    recorded = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path / "run"))
    record = SimpleNamespace(dir=tmp_path / "run", read_json=lambda name: recorded.to_dict())
    check_resume(dataclasses.replace(recorded, backend="ray", policy_resources={"GPU": 1}), record, ())
    with pytest.raises(UsageError, match="seed"):
        check_resume(dataclasses.replace(recorded, policy_resources={"GPU": 1}, seed=3), record, ())


def test_a_resumed_run_goes_on_from_its_own_preference_database(tmp_path):
    from drlhp.config import RunConfig
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.checkpoint import prefs_to_load

    given = tmp_path / "given.npz"
    given.write_bytes(b"")
    cfg = RunConfig(env="MovingDot-v0", load_prefs_dir=str(given))
    run = tmp_path / "run"
    assert prefs_to_load(cfg, run) == given  # a new run: the given one
    RunPaths(run).prefs.parent.mkdir(parents=True)
    RunPaths(run).prefs.write_bytes(b"")
    assert prefs_to_load(cfg, run) == RunPaths(run).prefs  # resumed: its own, with every label since
    assert prefs_to_load(RunConfig(env="MovingDot-v0"), tmp_path / "new") is None


def test_the_labeller_flag_its_alias_and_the_table():
    """--labeller takes the table's names; --synthetic_prefs is --labeller oracle; the default is the window;
    each labeller's loop imports (Qt and the web server only in their own modules)."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.labeller_names import LABELLER_NAMES
    from pref_interface.labellers import LABELLERS

    parse = lambda *argv: config_from_args(build_parser().parse_args(["--env", "MovingDot-v0", *argv]))  # noqa: E731
    assert parse().prefs.labeller == "window"
    assert parse("--synthetic_prefs").prefs.labeller == "oracle"
    assert parse("--labeller", "web").prefs.labeller == "web"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--env", "MovingDot-v0", "--labeller", "telepathy"])
    assert set(LABELLERS) == {"oracle", "window", "web"}
    assert tuple(LABELLERS) == LABELLER_NAMES  # the config's choices: the table's names, in its order
    assert [n for n, lab in LABELLERS.items() if lab.needs_display] == ["window"]
    assert callable(LABELLERS["oracle"].loop())


def test_a_run_recorded_with_synthetic_prefs_resumes_as_the_oracle(tmp_path):
    """A run directory written before --labeller (prefs.synthetic_prefs: true) goes on with --synthetic_prefs
    (the same setting today) without --resume_with_changes, and refuses the window (another labeller)."""
    from drlhp.config import RunConfig
    from drlhp.records.run_record import RunRecord
    from drlhp.run.checks import UsageError, check_resume

    record = RunRecord(tmp_path)
    old = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path)).to_dict()
    old["prefs"] = {**{k: v for k, v in old["prefs"].items() if k not in ("labeller", "web_host", "web_port")},
                    "synthetic_prefs": True}
    (tmp_path / "config.json").write_text(json.dumps(old))
    oracle = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path))
    oracle = dataclasses.replace(oracle, prefs=dataclasses.replace(oracle.prefs, labeller="oracle"))
    check_resume(oracle, record, ())
    with pytest.raises(UsageError, match="prefs.labeller 'oracle' -> 'window'"):
        check_resume(RunConfig(env="MovingDot-v0", run_dir=str(tmp_path)), record, ())


def test_a_recorded_config_is_read_in_todays_names(monkeypatch):
    """Every reader of a config.json (resume, the run record, the predictor's saved config, floyd) reads
    it through config_in_todays_names: a renamed setting under its new name (where the config does not
    hold that already), the config given left as it was."""
    from drlhp.records import run_record

    monkeypatch.setattr(run_record, "RENAMED_SETTINGS", {"reward.old": "reward.new", "top": "a2c.moved"})
    old = {"mode": "m", "top": 1, "a2c": {"lr": 2}, "reward": {"old": 3, "kept": 4},
           "prefs": {"synthetic_prefs": False}}
    frozen = json.loads(json.dumps(old))
    assert run_record.config_in_todays_names(old) == {"mode": "m", "a2c": {"lr": 2, "moved": 1},
                                                       "reward": {"new": 3, "kept": 4},
                                                       "prefs": {"labeller": "window"}}
    assert old == frozen
    both = {"reward": {"old": 3, "new": 5, "bfloat16": True}}
    # the newer name wins and the old one stays in view; a recorded switch reads as on/off
    assert run_record.config_in_todays_names(both) == {"reward": {"old": 3, "new": 5, "bfloat16": "on"}}
    # a setting recorded before it existed reads as the code then had it, where that is not today's default
    assert run_record.with_values_before({"reward": {}}) == {"reward": {"bfloat16": "off"}, "policy_bfloat16": "off"}
    assert run_record.with_values_before({"policy_bfloat16": "on"})["policy_bfloat16"] == "on"  # recorded: kept
    assert run_record.config_in_todays_names(None) is None and run_record.config_in_todays_names([1]) == [1]


def test_a_run_recorded_before_a_setting_was_renamed_resumes_and_its_predictor_config_loads(tmp_path):
    """config.json of an older version holds reward.n_predictors (today reward.n_members, the flag still
    --n_predictors): the run goes on without --resume_with_changes, a change of it is still one, and the
    predictor's saved config reads it."""
    from drlhp.config import RunConfig
    from drlhp.records.run_record import RENAMED_SETTINGS, RunRecord
    from drlhp.reward.checkpoint import saved_reward_config
    from drlhp.run.checks import UsageError, check_resume

    record = RunRecord(tmp_path)
    cfg = RunConfig(env="MovingDot-v0", run_dir=str(tmp_path))
    cfg = dataclasses.replace(cfg, reward=dataclasses.replace(cfg.reward, n_members=1))
    old = cfg.to_dict()
    for name, new in RENAMED_SETTINGS.items():
        (section, _, old_name), new_name = name.rpartition("."), new.rpartition(".")[2]
        old[section][old_name] = old[section].pop(new_name)
    assert old["reward"]["n_predictors"] == 1 and "n_members" not in old["reward"]
    (tmp_path / "config.json").write_text(json.dumps(old))
    check_resume(cfg, record, ())
    with pytest.raises(UsageError, match="reward.n_members 1 -> 3"):
        check_resume(RunConfig(env="MovingDot-v0", run_dir=str(tmp_path)), record, ())
    assert saved_reward_config(tmp_path).n_members == 1


def test_a_run_recorded_with_a_removed_setting_resumes_where_it_was_off_and_not_where_it_was_on(tmp_path):
    """--ppo_diag_fall_cost (H32's diagnostic arm) is gone (issue 60): a MuJoCo preference run recorded with it at
    0, its off value, goes on as today's code; one recorded with a charge is a run today's code cannot continue."""
    from drlhp.config import RunConfig
    from drlhp.records.run_record import REMOVED_SETTINGS, RunRecord, config_in_todays_names
    from drlhp.run.checks import UsageError, check_resume

    assert REMOVED_SETTINGS == {"ppo.diag_fall_cost": 0.0}
    record = RunRecord(tmp_path)
    cfg = RunConfig(env="Hopper-v5", run_dir=str(tmp_path), algo="ppo")
    old = cfg.to_dict()
    assert "diag_fall_cost" not in old["ppo"]
    old["ppo"]["diag_fall_cost"] = 0.0
    (tmp_path / "config.json").write_text(json.dumps(old))
    check_resume(cfg, record, ())
    assert "diag_fall_cost" not in config_in_todays_names(old)["ppo"] and old["ppo"]["diag_fall_cost"] == 0.0
    old["ppo"]["diag_fall_cost"] = 6.0
    (tmp_path / "config.json").write_text(json.dumps(old))
    with pytest.raises(UsageError, match="ppo.diag_fall_cost 6.0 -> '\\(absent\\)'"):
        check_resume(cfg, record, ())


PAPER_ATARI_GAMES = ("BeamRider", "Breakout", "Enduro", "Pong", "Qbert", "Seaquest", "SpaceInvaders")


@pytest.mark.parametrize("game", PAPER_ATARI_GAMES)
def test_every_game_of_the_papers_table_starts_from_the_atari_preset(game):
    """``run.py --env <Game>NoFrameskip-v4 --synthetic_prefs`` prints `preset atari` and plans PPO with Pong's
    predictor and labels (issue 59); nothing is run."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import with_preset

    argv, name, line = with_preset(["--env", f"{game}NoFrameskip-v4", "--synthetic_prefs", "--seed", "5"])
    cfg = config_from_args(build_parser().parse_args(argv))
    assert name == "atari" and line.startswith(f"[run] preset atari (the default for {game}NoFrameskip-v4")
    assert cfg.algo == "ppo" and (cfg.ppo.n_envs, cfg.ppo.n_steps, cfg.ppo.clip_coef) == (8, 128, 0.1)
    assert (cfg.reward.n_members, cfg.reward.batchnorm, cfg.reward.n_initial_epochs) == (1, False, 30)
    assert (cfg.prefs.n_initial_prefs, cfg.prefs.label_schedule, cfg.million_timesteps) == (275, "paper", 10)
    # on the game's score (the table's PPO arm gives --algo ppo): the same PPO settings
    argv, _, _ = with_preset(["train_policy_with_original_rewards", "--env", f"{game}NoFrameskip-v4", "--algo", "ppo"])
    assert config_from_args(build_parser().parse_args(argv)).ppo == cfg.ppo

"""drlhp.LearnedReward on a MuJoCo predictor (issue 39): a Box-action env's predictor scores x_t = (o_t, clip(a_t)),
float32, as PPO's rollouts fed it; through gymnasium, and for our PPO with no predictor process (--no_labelling).

    wrapper   Hopper-v5 steps of random actions (some outside the bounds) through the wrapper are paid what the
              trained predictor pays the same (observation, clipped action) rows; the env's own reward in info;
              the vector wrapper pays each worker what one wrapper does; a Hopper predictor on another env, and a
              step before reset, are clear errors
    PPO       (slow) train_policy_with_preferences --no_labelling on the saved predictor: PPO on its reward, in this
              process, logging the task's true return for the ratio to the baseline
    script    experiments/learned_reward_ppo.py: its PPO settings (the predictor's run's), its refusals, and
              (slow) its run: PPO paid through LearnedRewardVector exactly the predictor's reward, the table's
              measure (task_return_last100) over the fixed-length episodes, the ratio to the baseline, the run record
    models    a run exported by ``floyd export`` (float16 policy with its observation normalization) replays in watch
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("mujoco")

from drlhp.learned_reward import (  # noqa: E402
    TRUE_REWARD_KEY,
    LearnedReward,
    LearnedRewardError,
    LearnedRewardVector,
    SavedPredictor,
)
from drlhp.processes.tf_setup import configure_tensorflow  # noqa: E402

configure_tensorflow(1, 1)

HOPPER = "Hopper-v5"
D, A, T = 11, 3, 20  # Hopper's observation and action lengths; clip length


def _config(run_dir: Path, *args) -> None:
    """config.json as a run records it."""
    from drlhp.config.cli import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args([str(a) for a in args]))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(cfg.to_dict()))


def _hopper_clips(n: int, seed: int):
    """``n`` clips of T steps of random actions in Hopper: x_t = (o_t, clipped a_t) float32 (n, T, D + A), and the
    env's reward (n, T)."""
    env = gym.make(HOPPER)
    rng = np.random.default_rng(seed)
    xs, rs = np.zeros((n, T, D + A), np.float32), np.zeros((n, T), np.float32)
    obs, _ = env.reset(seed=seed)
    for i in range(n):
        for t in range(T):
            action = rng.uniform(-1, 1, A)
            xs[i, t, :D], xs[i, t, D:] = obs, action
            obs, rs[i, t], terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                obs, _ = env.reset()
    env.close()
    return xs, rs


@pytest.fixture(scope="module")
def hopper_run(tmp_path_factory):
    """A tiny Hopper run directory: a predictor of 2 members (the paper's MLP, no batch norm) trained for a few steps
    on oracle-labelled clips of random play and saved with the project's own code, and the run's config.json; and
    the trained ensemble, to score rows with."""
    from drlhp.config.reward import RewardConfig
    from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    run_dir = tmp_path_factory.mktemp("hopper") / "run"
    xs, rs = _hopper_clips(12, seed=0)
    db = PrefDB(max_prefs=1000, seed=0)
    segments = [Segment(x, np.zeros((T, 0, 0), np.uint8), r, HOPPER, 0, i * T).check()
                for i, (x, r) in enumerate(zip(xs, rs))]
    for i in range(len(segments)):
        for j in range(i + 1, len(segments)):
            a, b = segments[i], segments[j]
            db.add(Preference(a, b, MU_LEFT if a.true_return > b.true_return else MU_RIGHT).check())
    _config(run_dir, "--env", HOPPER, "--synthetic_prefs", "--n_predictors", 2, "--no-reward_batchnorm",
            "--reward_dropout", 0, "--reward_batch_size", 8)
    cfg = RewardConfig(n_members=2, batchnorm=False, dropout=0.0, batch_size=8, bfloat16="off")
    trainer = RewardTrainer((D + A,), cfg, db, threading.Lock(), seed=0, obs_dtype=np.float32)
    for _ in range(20):
        trainer.train_step()
    trainer.publish()
    trainer.save(RunPaths(run_dir).predictor)
    return run_dir, trainer.ensemble


def _rows(obs, action, low=-1.0, high=1.0):
    return np.concatenate([np.asarray(obs, np.float32), np.clip(np.asarray(action, np.float32), low, high)])


def test_hopper_steps_are_paid_what_the_predictor_pays_their_observation_and_clipped_action(hopper_run):
    run_dir, ensemble = hopper_run
    env, mirror = LearnedReward(gym.make(HOPPER), run_dir), gym.make(HOPPER)
    assert env.predictor.takes_actions and env.predictor.env_id == HOPPER
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=3)
    mirror.reset(seed=3)
    rows, unclipped, paid = [], [], []
    for _ in range(150):  # random play falls within tens of steps: several episodes, each reset
        action = rng.uniform(-1.5, 1.5, A)  # a third outside the bounds: the env clips, and so did the rollouts
        rows.append(_rows(obs, action))
        unclipped.append(np.concatenate([obs, action]).astype(np.float32))
        obs, reward, terminated, truncated, info = env.step(action)
        _, true_reward, *_ = mirror.step(action)
        assert info[TRUE_REWARD_KEY] == true_reward and reward != true_reward  # the env's own, kept in info
        paid.append(reward)
        if terminated or truncated:
            obs, _ = env.reset()
            mirror.reset()
    expected = ensemble.reward(np.stack(rows))
    np.testing.assert_allclose(paid, expected, rtol=1e-5, atol=1e-6)
    assert np.std(expected) > 1e-3  # the steps are told apart
    assert not np.allclose(ensemble.reward(np.stack(unclipped)), expected, atol=1e-4)  # the clip matters
    assert SavedPredictor(run_dir).rewards(np.stack(rows)).dtype == np.float32


def test_the_vector_wrapper_pays_each_hopper_worker_what_one_wrapper_pays(hopper_run):
    from gymnasium.vector import SyncVectorEnv

    run_dir, _ = hopper_run
    predictor = SavedPredictor(run_dir)
    vec = LearnedRewardVector(SyncVectorEnv([lambda: gym.make(HOPPER)] * 2), predictor)  # NEXT_STEP autoreset
    singles = [LearnedReward(gym.make(HOPPER), predictor) for _ in range(2)]
    vec.reset(seed=0)
    for i, env in enumerate(singles):
        env.reset(seed=i)
    rng = np.random.default_rng(1)
    resetting, resets = np.zeros(2, bool), 0
    for _ in range(80):
        actions = rng.uniform(-1, 1, (2, A))
        _, rewards, terminated, truncated, info = vec.step(actions)
        for i, env in enumerate(singles):
            if resetting[i]:  # this step was the reset: paid 0
                env.reset()
                assert rewards[i] == 0.0
                resets += 1
                continue
            _, reward, term, trunc, single_info = env.step(actions[i])
            assert (term, trunc) == (terminated[i], truncated[i])
            assert info[TRUE_REWARD_KEY][i] == single_info[TRUE_REWARD_KEY]
            np.testing.assert_allclose(rewards[i], reward, rtol=1e-5, atol=1e-6)
        resetting = terminated | truncated
    assert resets >= 2  # random play falls: episodes end and start again within the 80 steps


def test_a_hopper_predictor_elsewhere_or_stepped_before_reset_is_a_clear_error(hopper_run):
    run_dir, _ = hopper_run
    with pytest.raises(LearnedRewardError, match=r"scores 14 values a step .*; this env has 17 \+ 6"):
        LearnedReward(gym.make("Walker2d-v5"), run_dir)
    with pytest.raises(LearnedRewardError, match="scores \\(observation, action\\) vectors of a Box-action env"):
        LearnedReward(gym.make("CartPole-v1"), run_dir)
    with pytest.raises(gym.error.ResetNeeded):
        LearnedReward(gym.make(HOPPER), run_dir).step(np.zeros(A))


def test_a_next_obs_predictor_is_paid_on_the_observation_each_step_led_to_as_the_rollouts_made_it(hopper_run,
                                                                                                    tmp_path):
    """A run with --reward_next_obs (issue 38, H54) scored x_t = (o_{t+1}, clip(a_t)), the fallen state at a fall:
    the wrappers pay that row, in the fixed-length episodes (a fall puts the robot back, the fallen state in info),
    one env or a vector of them (SAME_STEP, as the rollouts': envs.fixed_length.led_to)."""
    import shutil

    from envs.fixed_length import fixed_length_env, fixed_length_vector_env, led_to

    run_dir, ensemble = hopper_run
    next_run = tmp_path / "next"
    shutil.copytree(run_dir, next_run)
    _config(next_run, "--env", HOPPER, "--synthetic_prefs", "--n_predictors", 2, "--no-reward_batchnorm",
            "--reward_dropout", 0, "--reward_batch_size", 8, "--reward_next_obs")
    predictor = SavedPredictor(next_run)
    assert predictor.next_obs and not SavedPredictor(run_dir).next_obs
    env = LearnedReward(fixed_length_env(HOPPER), predictor)
    rng = np.random.default_rng(4)
    env.reset(seed=2)
    rows, paid, falls = [], [], 0
    for _ in range(120):
        action = rng.uniform(-1.5, 1.5, A)
        obs, reward, terminated, truncated, info = env.step(action)
        falls += "fall_observation" in info
        rows.append(_rows(info.get("fall_observation", obs), action))
        paid.append(reward)
    assert falls >= 2  # random play falls, and the fallen state is what was paid
    np.testing.assert_allclose(paid, ensemble.reward(np.stack(rows)), rtol=1e-5, atol=1e-6)

    vec = LearnedRewardVector(fixed_length_vector_env(HOPPER, 2), predictor)
    vec.reset(seed=0)
    for _ in range(60):
        actions = rng.uniform(-1, 1, (2, A))
        obs, rewards, terminated, truncated, info = vec.step(actions)
        x = np.concatenate([led_to(obs, info, terminated | truncated), np.clip(actions, -1, 1)], axis=1)
        np.testing.assert_allclose(rewards, ensemble.reward(x.astype(np.float32)), rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_our_ppo_trains_on_the_saved_predictor_with_no_predictor_process(cli, hopper_run, tmp_path):
    """train_policy_with_preferences --no_labelling: PPO on the saved predictor's reward in this process (no
    labeller, no predictor training), its true and task returns logged for the ratio to PPO's baseline."""
    run_dir, _ = hopper_run
    out = tmp_path / "ppo"
    proc = cli("--env", HOPPER, "--no_labelling", "--load_reward_predictor_ckpt_dir", run_dir, "--run_dir", out,
               "--million_timesteps", "0.004096", "--ppo_n_envs", 2, "--ppo_n_steps", 1024, "--seed", 0, timeout=540,
               check=True)
    assert "--no_labelling" in proc.stdout and "PPO on the predictor's reward" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["algo"] == "ppo" and summary["no_labelling"] and summary["timesteps"] >= 4096, summary
    assert summary["predictor_version"] >= 1, summary
    header = (out / "progress.csv").read_text().splitlines()[0].split(",")
    assert any("task_return_last100" in h for h in header), header


def _learned_reward_ppo():
    """experiments/learned_reward_ppo.py as a module (it puts the checkout and experiments on sys.path)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "experiments" / "learned_reward_ppo.py"
    spec = importlib.util.spec_from_file_location("learned_reward_ppo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_learned_reward_ppo_takes_the_predictor_run_s_ppo_settings_and_refuses_what_would_pay_the_task(hopper_run,
                                                                                                      tmp_path, capsys):
    """The script's PPO settings are the mujoco preset's true-reward flags overridden by the predictor's run's own PPO
    section (here its entropy bonus 0.01 where the preset's true reward has 0), control cost on (the setting under
    which PPOTrainer pays the env's reward as stepped: the wrapper's); a predictor of another env and
    --no-ppo_control_cost (which would pay info["reward_task"], the oracle's reward) are refused, exit 2."""
    from drlhp.config.ppo import PPOConfig
    from drlhp.learned_reward import find_predictor

    script = _learned_reward_ppo()
    run_dir, _ = hopper_run
    _, _, recorded = find_predictor(run_dir)
    cfg, source = script.run_config(HOPPER, 3, tmp_path / "run", 0.5, 10, recorded, ["--ppo_n_epochs", "2"])
    assert cfg.mode == "train_policy_with_original_rewards" and cfg.preset == "mujoco" and cfg.algo == "ppo"
    assert cfg.seed == 3 and cfg.total_timesteps == 500_000 and cfg.policy_ckpt_interval == 50  # the preset's
    assert cfg.ppo == PPOConfig(**{**recorded["ppo"], "n_epochs": 2, "control_cost": True})
    assert cfg.ppo.ent_coef == 0.01 and "config.json's ppo section" in source and "--ppo_n_epochs 2" in source
    for env_id, extra, said in (("Walker2d-v5", [], "a predictor of Hopper-v5, not of Walker2d-v5"),
                                (HOPPER, ["--no-ppo_control_cost"], "would pay the agent info['reward_task']")):
        code, _ = script.train(run_dir, env_id, 0, tmp_path / "refused", 0.001, extra=extra, argv=[])
        assert code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()  # refused before any run directory


@pytest.mark.slow
def test_learned_reward_ppo_pays_ppo_the_predictor_s_reward_and_measures_the_task_s_return(hopper_run, tmp_path,
                                                                                         capsys):
    """experiments/learned_reward_ppo.py's run (issue 39's must-show, the tool that measures it), 4,096 agent steps
    of drlhp's PPO on Hopper-v5 through LearnedRewardVector on the saved predictor: every step is paid exactly what the
    predictor pays its (observation, clipped action), not the task's reward; summary.json's task_return_last100 is the
    mean of info["reward_task"] summed over each fixed-length episode; the ratio is to the baseline arm's finished
    rows; the run directory is a drlhp run's. Not a learning test: the script's full runs measure that."""
    from drlhp.policy.loop import RolloutObserver

    script = _learned_reward_ppo()  # it puts experiments on sys.path: mujoco_runs_csv imports after it
    from mujoco_runs_csv import upsert

    run_dir, _ = hopper_run
    csv_path = tmp_path / "runs.csv"
    upsert([{"task": HOPPER, "arm": "baseline", "seed": s, "labels": 0, "timesteps": t, "status": status,
             "return": r, "return_standard": "", "wall_s": 1.0, "cpu": "test"}
            for s, r, t, status in ((0, 3000.0, 1_000_000, "finished"), (1, 2000.0, 1_000_000, "finished"),
                                    (2, 9000.0, 1_000_000, "crashed"), (3, 9000.0, 500_000, "finished"))], csv_path)

    class Paid(RolloutObserver):
        def __init__(self):
            self.rewards, self.x, self.task = [], [], []

        def on_rollout(self, paid, state):  # the collector reuses its buffers: copies
            self.rewards.append(np.array(paid.rewards))
            self.x.append(np.array(paid.next_obs))
            self.task.append(np.array(paid.true_rewards))

    seen, out = Paid(), tmp_path / "ppo"
    code, summary = script.train(run_dir, HOPPER, 0, out, million_timesteps=0.004096, log_interval=0,
                                 baseline_csv=csv_path, argv=["learned_reward_ppo.py"], observers=[seen],
                                 extra=["--ppo_n_envs", "2", "--ppo_n_steps", "512", "--ppo_n_minibatches", "4",
                                        "--ppo_n_epochs", "1"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 0 and summary["timesteps"] == 4096 and len(seen.rewards) == 4, summary
    paid, x, task = np.concatenate(seen.rewards), np.concatenate(seen.x), np.concatenate(seen.task)  # (2048, 2)
    assert x.shape == (2048, 2, D + A)
    expected = SavedPredictor(run_dir).rewards(x.reshape(-1, D + A)).reshape(paid.shape)  # (o_t, clipped a_t)
    np.testing.assert_allclose(paid, expected, rtol=1e-5, atol=1e-6)
    assert np.all(np.abs(x[..., D:]) <= 1.0) and np.std(paid) > 1e-3
    assert not np.allclose(paid, task, atol=1e-2)  # the task's reward was never what it was paid
    # episodes of 1,000 steps from step 0 in each of the 2 envs: steps 0-999 and 1000-1999 (48 steps left over)
    episodes = [(task[k * 1000:(k + 1) * 1000, i].sum(), paid[k * 1000:(k + 1) * 1000, i].sum())
                for k in (0, 1) for i in (0, 1)]
    assert summary["episodes"] == 4 and summary["episode_length_last100"] == 1000
    assert summary["task_return_last100"] == pytest.approx(np.mean([t for t, _ in episodes]), rel=1e-4)
    assert summary["predictor_return_last100"] == pytest.approx(np.mean([p for _, p in episodes]), rel=1e-4, abs=1e-3)
    assert "true_return_last100" not in summary  # the paid return is named for what it is
    ratio = summary["task_return_last100"] / 2500.0  # seeds 0 and 1: the crashed and the short rows left out
    assert summary["ratio_to_baseline"] == pytest.approx(ratio) and summary["baseline_arm"] == "baseline"
    assert last.startswith(f"[learned_reward_ppo] {HOPPER} seed 0: task return (last 4 episodes, task_return_last100) "
                           f"{summary['task_return_last100']:.2f} at 4,096 agent steps"), last
    assert f"ratio {ratio:.2f} to the 'baseline' arm's mean return 2500.00 (seeds 0, 1;" in last, last
    assert "not the table's ratio" in last
    written = json.loads((out / "summary.json").read_text())
    assert written["task_return_last100"] == summary["task_return_last100"] and written["predictor"].endswith(".npz")
    assert json.loads((out / "status.json").read_text())["status"] == "finished"
    config = json.loads((out / "config.json").read_text())
    assert config["env"] == HOPPER and config["ppo"]["ent_coef"] == 0.01 and config["ppo"]["control_cost"]
    header = (out / "progress.csv").read_text().splitlines()[0].split(",")
    assert "policy/task_return_last100" in header, header
    assert (out / "command.txt").is_file() and list((out / "checkpoints").glob("policy-*.npz"))
    from drlhp.processes.cpu import cpu_model

    sitting = json.loads((out / "run.json").read_text())["sittings"][-1]
    assert sitting["machine"]["cpu"] == cpu_model()  # the CPU the table's row names (mujoco_record.py reads it)

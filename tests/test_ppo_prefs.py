"""The policy side of learning from preferences on a Box-action env (issue 29): float segments of
x_t = (raw o_t, clipped a_t) cut by SegmentCutter, and PPO's policy process (drlhp.policy.ppo.box_actions) with a
stand-in reward source: the initial policy plays without learning before the first weights, segments carry the task's
reward, and PPO trains on the source's rewards after."""
import queue
import threading
from dataclasses import replace

import numpy as np
import pytest

from drlhp.policy.segments import SegmentCutter

HOPPER_CTRL_COST_WEIGHT = 1e-3  # gymnasium's Hopper-v5 default: reward_ctrl = -1e-3 * sum(a^2)


def _empty_frames(obs):
    return np.zeros((len(obs), 0, 0), np.uint8)


def test_a_float32_cutter_cuts_vector_segments_with_empty_frames_and_refuses_other_dtypes():
    cutter = SegmentCutter("Hopper-v5", 2, (5,), segment_length=3, segments_per_cut=2, frames_to_watch=_empty_frames,
                           obs_dtype=np.float32)
    obs = np.arange(3 * 2 * 5, dtype=np.float32).reshape(3, 2, 5) / 7.0  # not bytes: a cast would change them
    true = np.arange(6, dtype=np.float32).reshape(3, 2)
    segments, cut_returns = cutter.add(obs, true, None, step=30)
    assert [s.worker for s in segments] == [0, 1]
    for s in segments:
        assert s.obs.dtype == np.float32 and s.obs.shape == (3, 5) and s.frames.shape == (3, 0, 0)
        assert np.array_equal(s.obs, obs[:, s.worker]) and np.array_equal(s.true_rewards, true[:, s.worker])
    assert np.array_equal(cut_returns[0][1], true.sum(axis=0))
    for wrong in (obs.astype(np.uint8), obs.astype(np.float64)):  # never cast silently
        with pytest.raises(ValueError, match="float32"):
            cutter.add(wrong, true, None, step=60)
    with pytest.raises(ValueError, match="uint8"):  # and a bytes cutter takes no floats
        SegmentCutter("MovingDot-v0", 2, (5,), 3, 2, _empty_frames).add(obs, true, None, step=0)


@pytest.mark.parametrize("mode", ["train_policy_with_preferences", "gather_initial_prefs"])
def test_the_synthetic_oracle_may_label_any_box_action_env_and_a_person_only_a_mujoco_one(mode, monkeypatch):
    from drlhp.config import RunConfig
    from drlhp.run.checks import UsageError, check_inputs

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # the window's display is not what this test is about
    for env in ("InvertedPendulum-v5", "Pendulum-v1"):
        cfg = RunConfig(mode=mode, env=env)
        check_inputs(replace(cfg, prefs=replace(cfg.prefs, labeller="oracle")))  # nothing to say
    cfg = RunConfig(mode=mode, env="InvertedPendulum-v5")
    for person in ("window", "web"):
        check_inputs(replace(cfg, prefs=replace(cfg.prefs, labeller=person)))  # MuJoCo: drawn for a person
        pendulum = RunConfig(mode=mode, env="Pendulum-v1")
        with pytest.raises(UsageError, match=f"Pendulum-v1 has continuous actions and is not a MuJoCo env: --labeller "
                                             f"{person} shows a person only MuJoCo clips"):
            check_inputs(replace(pendulum, prefs=replace(pendulum.prefs, labeller=person)))


class _Flow:
    """segment_flow's calls: it wants ``n`` segments; the policy's step comes back; no step limit (the oracle's)."""

    def __init__(self, n):
        self.n, self.steps = n, []

    def wanted(self):
        return self.n

    def report_step(self, step):
        self.steps.append(step)

    def step_limit(self):
        return None


class _SpyReward:
    """PredictedReward's place: not ready for ``not_ready`` asks, then 1.0 per step; keeps what it was given."""

    name = "predicted"
    version = 0
    not_ready, made = 0, []  # set by each test

    def __init__(self, obs_shape, cfg, seed, weights_to_policy=None, weights=None, obs_dtype=np.uint8):
        self.obs_shape, self.obs_dtype, self.not_ready = obs_shape, np.dtype(obs_dtype), _SpyReward.not_ready
        self.seen = []  # (x (T, N, D + A), the env's reward (T, N)) per trained rollout
        _SpyReward.made.append(self)

    def ready(self):
        self.not_ready -= 1
        return self.not_ready < 0

    def rewards(self, obs, true_rewards):
        assert obs.dtype == np.float32 and obs.shape[2:] == self.obs_shape
        self.seen.append((obs.copy(), true_rewards.copy()))
        return np.ones(true_rewards.shape, np.float32)

    def state(self):
        return {}

    def restore(self, state):
        pass


def _cfg(million_timesteps=0.000512):
    from drlhp.config import RunConfig

    cfg = RunConfig(mode="train_policy_with_preferences", env="Hopper-v5", algo="ppo", seed=3,
                    million_timesteps=million_timesteps, log_interval=1e9, policy_ckpt_interval=0)
    return replace(cfg, ppo=replace(cfg.ppo, n_envs=2, n_steps=64, n_minibatches=4, n_epochs=2),
                   prefs=replace(cfg.prefs, segment_length=16, segments_per_cut=2))


class _Queue(queue.Queue):
    """segment_queue in one process: multiprocessing's put_nowait, and its cancel_join_thread (nothing here)."""

    def cancel_join_thread(self):
        pass


def _ports(wanted, **more):
    from drlhp.processes.ports import PolicyPorts

    return PolicyPorts(segment_queue=_Queue(), segment_flow=_Flow(wanted), **more)


def _segments(ports):
    out = []
    while not ports.segment_queue.empty():
        out.append(ports.segment_queue.get_nowait())
    return out


def test_ppo_policy_process_cuts_float_segments_of_the_task_reward_and_learns_on_the_sources_rewards(
        tmp_path, monkeypatch):
    """run_policy on Hopper (--algo ppo) with a stand-in for PredictedReward, ready from its third ask: random play
    (the initial policy) first, then 4 PPO updates on its rewards; every segment is x_t float32 (16, 11 + 3), the
    raw observation (Hopper's height, > 0.7 in every state it acts in: not normalized) and the action clipped to
    [-1, 1], its true_rewards the env's reward without the control cost (reward_task)."""
    from drlhp.policy.process import run_policy

    monkeypatch.setattr("drlhp.policy.reward_source.PredictedReward", _SpyReward)
    _SpyReward.not_ready, _SpyReward.made = 2, []
    ports = _ports(10_000)
    summary = run_policy(_cfg(), ports, str(tmp_path), log=lambda *a, **k: None)
    reward = _SpyReward.made[0]
    assert reward.obs_shape == (14,) and reward.obs_dtype == np.float32
    assert summary["updates"] == 4 and summary["timesteps"] == 512 and summary["random_steps"] == 2 * 128
    assert summary["agent_steps_per_s"] > 0 and summary["segments_sent"] > 0
    segments = _segments(ports)
    assert len(segments) == summary["segments_sent"] == 6 * 4 * 2  # 6 rollouts of 64 steps: 4 cuts of 2 each
    # the rows the reward source saw (trained rollouts), each with the env's reward: find each segment's steps
    rows = {}
    for x, env_reward in reward.seen:
        for t in range(x.shape[0]):
            for n in range(x.shape[1]):
                rows[x[t, n].tobytes()] = env_reward[t, n]
    checked = 0
    for s in segments:
        assert s.obs.dtype == np.float32 and s.obs.shape == (16, 14) and s.frames.shape == (16, 0, 0)
        assert (s.obs[:, 0] > 0.7).all() and (np.abs(s.obs[:, 11:]) <= 1.0).all()
        found = [rows.get(x.tobytes()) for x in s.obs]
        if None in found:  # a segment of random play: no env reward recorded
            continue
        ctrl = HOPPER_CTRL_COST_WEIGHT * np.square(s.obs[:, 11:]).sum(axis=1)
        np.testing.assert_allclose(s.true_rewards, np.array(found) + ctrl, rtol=1e-5, atol=1e-5)
        checked += 1
    assert checked == 4 * 4 * 2  # the 4 trained rollouts' segments
    assert ports.segment_flow.steps == [0, 0, 0, 128, 256, 384]  # the label schedule's clock: trained steps


def test_ppo_plays_without_learning_before_the_first_weights_and_only_while_segments_are_wanted(tmp_path):
    """A reward source never ready: the initial policy plays until the 6 segments wanted are sent, then waits
    (the third wait stops the test); no update, no agent step counted, the weights untouched."""
    from drlhp.policy.feeds import SegmentFeed
    from drlhp.policy.loop import Agent, Outputs, RolloutObserver
    from drlhp.policy.ppo.box_actions import BoxSegments
    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.trainer import PPOTrainer
    from drlhp.records.run_record import RunRecord
    from envs.fixed_length import any_vector_env

    cfg, stop = _cfg(), threading.Event()
    ports = _ports(6, stop_event=stop)

    class StopWhenHeld(RolloutObserver):
        def __init__(self):
            self.rollouts = 0

        def on_rollout(self, rollout, state):
            self.rollouts += 1
            assert rollout.rewards is None  # not paid: not trained on

    envs = any_vector_env(cfg.env, cfg.ppo.n_envs, cfg.ppo.fall_penalty)
    try:
        policy = build_ppo(cfg, envs)
        before = [w.copy() for w in policy._weights()]
        _SpyReward.not_ready, _SpyReward.made = 10**9, []
        reward = _SpyReward((14,), cfg.reward, cfg.seed, obs_dtype=np.float32)
        feed, count = SegmentFeed(cfg, BoxSegments(2, (14,)), reward, ports), StopWhenHeld()
        trainer = PPOTrainer(cfg, Agent(envs, policy, reward), Outputs(RunRecord(tmp_path), _Logger(),
                                                                        log=lambda *a, **k: None),
                             ports, [feed, count])
        trainer.write_hparams = lambda summary=None: None
        waits = []
        trainer.wait_for_reward = lambda: (waits.append(1), stop.set() if len(waits) > 2 else None,
                                           PPOTrainer.wait_for_reward(trainer))[-1]
        summary = trainer.train()
    finally:
        envs.close()
    assert len(_segments(ports)) == 6 and feed.holds_random_play()
    assert summary["updates"] == 0 and summary["timesteps"] == 0 and summary["random_steps"] == count.rollouts * 128
    assert count.rollouts == 1  # 64 steps x 2 envs, a cut of 2 every 16 steps: the 6 wanted in its first 3 cuts
    assert all(np.array_equal(a, b) for a, b in zip(before, policy._weights()))


class _Logger:
    def log(self, step, metrics):
        pass

    def close(self):
        pass


def test_mujoco_clips_are_one_and_a_half_seconds_of_each_tasks_own_time_step():
    """round(1.5 s / dt) with gymnasium's own dt; Reacher, whose episodes are 50 steps (1 s), gets one episode."""
    import gymnasium as gym

    from drlhp.config.presets import CLIP_SECONDS, MUJOCO_CLIP_STEPS, MUJOCO_ENV_IDS

    assert set(MUJOCO_CLIP_STEPS) == set(MUJOCO_ENV_IDS)
    for env_id, steps in MUJOCO_CLIP_STEPS.items():
        env = gym.make(env_id)
        dt, length = env.unwrapped.dt, env.spec.max_episode_steps
        env.close()
        assert steps == min(round(CLIP_SECONDS / dt), length), env_id
    assert MUJOCO_CLIP_STEPS["Reacher-v5"] == 50 and MUJOCO_CLIP_STEPS["Hopper-v5"] == 188


def _preset_cfg(*argv):
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import with_preset

    expanded, name, line = with_preset(list(argv))
    return config_from_args(build_parser().parse_args(expanded)), name, line


def test_the_mujoco_preset_adds_the_papers_settings_from_preferences_and_leaves_the_true_rewards_alone():
    from drlhp.config.presets import MUJOCO_ENV_IDS, PRESETS
    from drlhp.run.checks import check_inputs

    cfg, name, line = _preset_cfg("--env", "Hopper-v5", "--synthetic_prefs")
    assert name == "mujoco" and "learning from preferences, so" in line and "--segment_length 188" in line
    assert (cfg.prefs.segment_length, cfg.ppo.ent_coef, cfg.prefs.n_initial_prefs, cfg.prefs.n_labels) == (
        188, 0.01, 350, 1050)  # 1,400 labels, 25% of them from the random policy
    assert cfg.prefs.label_schedule == "paper" and cfg.reward.n_members == 3 and not cfg.reward.batchnorm
    assert cfg.prefs.query_selection == "variance" and cfg.prefs.variance_candidates == 10  # the paper's (H34)
    check_inputs(cfg)
    swimmer, _, _ = _preset_cfg("gather_initial_prefs", "--env", "Swimmer-v5", "--synthetic_prefs")
    assert swimmer.prefs.segment_length == 38
    person, _, line = _preset_cfg("--env", "Hopper-v5", "--labeller", "web")  # a person's pace: 900 labels over 2M
    assert (person.million_timesteps, person.prefs.n_initial_prefs, person.prefs.n_labels) == (2.0, 250, 650)
    assert person.prefs.segment_length == 188 and line.endswith("(a person labels, so --million_timesteps 2 "
                                                                 "--n_initial_prefs 250 --n_labels 650)")
    for task in MUJOCO_ENV_IDS:  # H27 (issue 38): one bonus for the preference arm on every task, the paper's
        task_cfg = _preset_cfg("--env", task, "--synthetic_prefs")[0]
        assert task_cfg.ppo.ent_coef == 0.01, task
        assert task_cfg.reward.norm_momentum == (0 if task == "InvertedPendulum-v5" else 0.1), task
    mine, _, _ = _preset_cfg("--env", "Hopper-v5", "--synthetic_prefs", "--ppo_ent_coef", "0.02")
    assert mine.ppo.ent_coef == 0.02  # the command line still wins
    for task in MUJOCO_ENV_IDS:  # H55, H56 (issue 38): HalfCheetah's starting log std, Swimmer's discount
        for argv in (("--synthetic_prefs",), ("--labeller", "web")):  # the oracle's labels and a person's
            task_cfg = _preset_cfg("--env", task, *argv)[0]
            assert task_cfg.ppo.init_log_std == (-1.0 if task == "HalfCheetah-v5" else 0.0), (task, argv)
            assert task_cfg.ppo.gamma == (0.9999 if task == "Swimmer-v5" else 0.995), (task, argv)
        true_cfg = _preset_cfg("train_policy_with_original_rewards", "--env", task)[0]
        assert (true_cfg.ppo.init_log_std, true_cfg.ppo.gamma) == (0.0, 0.995), task  # the baseline's own flags
    cheetah, _, _ = _preset_cfg("--env", "HalfCheetah-v5", "--synthetic_prefs", "--ppo_init_log_std", "0")
    assert cheetah.ppo.init_log_std == 0.0  # the command line wins here too
    # the true reward's runs: the preset's flags and line exactly as before (a baseline resumes unchanged)
    true, _, line = _preset_cfg("train_policy_with_original_rewards", "--env", "Hopper-v5")
    assert line.endswith(f": {PRESETS['mujoco']}") and true.ppo.ent_coef == 0.0 and true.prefs.segment_length == 25
    bare, _, line = _preset_cfg("--env", "Hopper-v5", "--synthetic_prefs", "--preset", "none")
    assert line is None and bare.prefs.segment_length == 25


@pytest.mark.slow
def test_a_continuous_env_without_a_preset_runs_from_preferences_on_the_defaults(cli, tmp_path):
    """Pendulum-v1 has no preset (`--preset none` is what it gets): a real three-process run from synthetic
    preferences on drlhp's defaults (PPOConfig's, RewardConfig's 25-step clips), cut short, runs to its end with
    float segments of (observation, action) in its database and the predictor's weights reaching the policy."""
    import json

    from drlhp.reward.pref_db import PrefDB

    run_dir = tmp_path / "run"
    proc = cli("--env", "Pendulum-v1", "--synthetic_prefs", "--run_dir", run_dir, "--million_timesteps", "0.008192",
               "--n_initial_prefs", "10", "--n_labels", "10", "--n_initial_epochs", "1", timeout=540, check=True)
    assert "[run] preset" not in proc.stdout  # no preset: the defaults
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["algo"] == "ppo" and summary["timesteps"] >= 8192 and summary["predictor_version"] >= 1, summary
    db = PrefDB.load(run_dir / "prefs" / "prefs.npz")
    seg = db.segment_obs(db.segment_ids()[0])
    assert seg.shape == (25, 3 + 1) and seg.dtype == np.float32  # 3 observations and 1 action per step


def test_the_rollout_flags_every_fall_and_the_fall_figures_measure_the_paid_reward_there():
    """A rollout on a predictor's reward keeps each step's fall flag (info["fell"]): here the steps whose oracle
    reward holds the reset rule's -100 (a random Hopper falls every 20 steps or so); FallFigures measures the
    oracle's fall against its other steps, and gives no figure for a paid reward that is 0 everywhere (no spread)."""
    from types import SimpleNamespace

    from drlhp.policy.fall_figures import FallFigures
    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.rollout import RolloutCollector
    from drlhp.policy.ppo.trainer import PPOTrainer
    from envs.fixed_length import any_vector_env

    cfg = _cfg()

    class PaysNothing:
        name = "predicted"

        def rewards(self, obs, true):
            return np.zeros(true.shape, np.float32)

    envs = any_vector_env(cfg.env, cfg.ppo.n_envs, cfg.ppo.fall_penalty)
    try:
        runner = RolloutCollector(envs, build_ppo(cfg, envs), cfg.seed, predictor_input=True)
        paid = PPOTrainer.play(SimpleNamespace(runner=runner, cfg=cfg, reward_source=PaysNothing()),
                               {"reward_s": 0.0})
    finally:
        envs.close()
    fall_steps = paid.true_rewards < -50  # the -100 of a fall, with a step's own reward (a few units) beside it
    assert fall_steps.sum() >= 2
    np.testing.assert_array_equal(paid.rewards, np.zeros(fall_steps.shape, np.float32))  # the predictor's, as paid
    assert paid.falls is None  # the clips' fall flags stay where a person labels (with the states)
    np.testing.assert_array_equal(paid.fell, fall_steps)  # every step's, for FallFigures
    figures = FallFigures()
    figures.on_rollout(paid, None)
    out = figures.metrics()
    assert out["reward/fall_steps"] == fall_steps.sum() and out["oracle/fall_sd"] < -10
    assert "reward/fall_sd" not in out  # the paid reward is 0 on every other step: no spread to measure it in


def test_the_closed_diagnostic_flag_is_gone_from_the_command_line():
    """--ppo_diag_fall_cost (issue 38's H32, closed) is no longer a flag (issue 60): one line and exit 2."""
    from drlhp.config.cli import build_parser

    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["--env", "Hopper-v5", "--ppo_diag_fall_cost", "6"])
    assert stop.value.code == 2


def test_a_fall_on_the_time_limits_last_step_ends_the_episode_with_nothing_to_bootstrap():
    """Under --fall_rule end (gymnasium's own episodes) a fall on the time limit's last step is terminated and
    truncated at once: the episode ends, its value is not bootstrapped, and the rollout goes on (it once crashed
    stacking no cut episodes' final observations: the side column's Hopper seed 1, session 27). A cut without a fall
    is bootstrapped from its last observation."""
    import gymnasium as gym

    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.rollout import RolloutCollector

    class EndsAt(gym.Env):  # a time limit of `limit` steps; with `falls`, a fall on its last step too
        observation_space = gym.spaces.Box(-1.0, 1.0, (11,), np.float32)
        action_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)

        def __init__(self, limit: int, falls: bool):
            self.limit, self.falls, self.t = limit, falls, 0

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.t = 0
            return np.zeros(11, np.float32), {}

        def step(self, action):
            self.t += 1
            last = self.t == self.limit
            return np.full(11, self.t / 10, np.float32), 1.0, last and self.falls, last, {}

    cfg = _cfg()
    envs = gym.vector.SyncVectorEnv([lambda: EndsAt(3, True), lambda: EndsAt(4, False)],
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    try:
        policy = build_ppo(cfg, envs)
        rollout = RolloutCollector(envs, policy, cfg.seed).run()
    finally:
        envs.close()
    falls, cuts = np.flatnonzero(rollout.dones[:, 0]), np.flatnonzero(rollout.dones[:, 1])
    assert list(falls[:3]) == [2, 5, 8] and list(cuts[:3]) == [3, 7, 11]  # steps where only one env ends
    assert (rollout.bootstrap_values[:, 0] == 0).all()  # the fall: no future
    assert (rollout.bootstrap_values[cuts, 1] != 0).all()  # the cut alone: its last state's value
    assert len(rollout.finished) == len(falls) + len(cuts)


def test_with_next_obs_the_predictor_sees_each_fall_as_the_fallen_state_and_without_it_never():
    """--reward_next_obs (issue 38, H54): x_t's observation is the one step t led to. A random Hopper falls every 20
    steps or so; under the reset rule the fallen robot is put back at once, so with o_t (the default) the predictor
    never sees a state out of the healthy range (z > 0.7, |angle| < 0.2), and with o_{t+1} it sees one on exactly
    the steps that fell (at a fall the fallen state, not the fresh start)."""
    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.rollout import RolloutCollector
    from envs.fixed_length import any_vector_env

    cfg = _cfg()
    D = 11

    def unhealthy(x):
        return (x[..., 0] <= 0.7) | (np.abs(x[..., 1]) >= 0.2)

    seen = {}
    for next_obs in (False, True):
        envs = any_vector_env(cfg.env, cfg.ppo.n_envs, cfg.ppo.fall_penalty)
        try:
            rollout = RolloutCollector(envs, build_ppo(cfg, envs), cfg.seed, predictor_input=True,
                                       next_obs=next_obs).run()
        finally:
            envs.close()
        x = rollout.predictor_obs
        assert rollout.fell.sum() >= 2
        seen[next_obs] = (unhealthy(x[..., :D]), rollout.fell.copy(), x[..., D:].copy())
    out_of_range, fell, actions = seen[False]
    assert not out_of_range.any()  # o_t: always a healthy robot, the fall never seen
    out_of_range, fell, next_actions = seen[True]
    np.testing.assert_array_equal(out_of_range, fell)  # o_{t+1}: the fallen state, on the fall steps only
    np.testing.assert_array_equal(actions, next_actions)  # the same seed's play: only the observation moved


def test_next_obs_is_refused_where_the_predictor_sees_the_next_observation_already(cli):
    proc = cli("--env", "MovingDot-v0", "--synthetic_prefs", "--reward_next_obs")
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "--reward_next_obs" in proc.stderr

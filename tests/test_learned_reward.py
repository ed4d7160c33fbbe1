"""drlhp.LearnedReward: a saved predictor's reward through the gymnasium interface, with no pipeline.

    Pong      clips of random play in a saved preference database, a tiny predictor trained on it for a few
              steps and saved with the project's own checkpoint code: replayed step by step through the wrapper
              (the frames as the env gave them, score not yet blanked, channels-last and channels-first), the
              wrapper pays each clip what the trained predictor pays its database clip (same sums, same ranking);
              a real gymnasium Pong env steps through it
    MovingDot the vector wrapper pays each worker what one wrapper per worker pays; A2C trained through it on the
              predictor in models/moving-dot-reward reaches success 0.8 (slow; it ends once learned: 8,960 agent
              steps, 16 s, on 2026-11-26's busy 2-core machine)
    loading   a run directory, an export folder, a predictor file; centring as the run recorded; errors
"""
from __future__ import annotations

import json
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401 -- registers MovingDot with gymnasium
from drlhp.learned_reward import TRUE_REWARD_KEY, LearnedReward, LearnedRewardError, LearnedRewardVector, SavedPredictor
from drlhp.processes.tf_setup import configure_tensorflow

configure_tensorflow(1, 1)  # drlhp.learned_reward loads no TensorFlow: its threads are still ours to set

PONG = "PongNoFrameskip-v4"
REPO = Path(__file__).resolve().parent.parent
MOVING_DOT_PREDICTOR = REPO / "models" / "moving-dot-reward"
CLIP = 25


def _config(run_dir: Path, *args) -> None:
    """config.json as a run records it."""
    from drlhp.config.cli import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args([str(a) for a in args]))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(cfg.to_dict()))


def _pong_clips(n_clips: int = 6, seed: int = 0):
    """Random play on drlhp's Pong vector env: (clips as the env gave them (n, T, 84, 84, 4), the same as the
    predictor saw them (score blanked), true rewards (n, T))."""
    from envs import make_vec_env

    env = make_vec_env(PONG, 2, n_threads=1)
    try:
        env.reset(seed)
        rng = np.random.default_rng(seed)
        steps = []
        for _ in range(n_clips // 2 * CLIP + 40):
            step = env.step(rng.integers(0, env.n_actions, 2))
            steps.append((step.outcome_obs.copy(), step.true_reward))
        steps = steps[40:]  # past the serve
        raw = np.stack([o for o, _ in steps], axis=1)  # (2, T, 84, 84, 4)
        true = np.stack([r for _, r in steps], axis=1)
        raw = raw.reshape(2 * (n_clips // 2), CLIP, *raw.shape[2:])
        true = true.reshape(2 * (n_clips // 2), CLIP)
        return raw, env.predictor_view(raw.copy(), inplace=True), true
    finally:
        env.close()


@pytest.fixture(scope="module")
def pong_run(tmp_path_factory):
    """A tiny Pong run directory: a saved preference database of random-play clips, a predictor (2 members,
    batch norm, clipped at 2 std) trained on it for a few steps and saved, the run's config.json; and the
    predictor's own reward for each database clip, computed by the trained ensemble before it was saved."""
    from drlhp.config.reward import RewardConfig
    from drlhp.processes.messages import Preference, Segment
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    run_dir = tmp_path_factory.mktemp("pong") / "run"
    raw, seen, true = _pong_clips()
    db = PrefDB(max_prefs=100, seed=0)
    segments = [Segment(obs=c, frames=c[..., -1].copy(), true_rewards=r.astype(np.float32), env_id=PONG, worker=i % 2,
                        step=i * CLIP).check() for i, (c, r) in enumerate(zip(seen, true))]
    rng = np.random.default_rng(1)
    for i in range(len(segments)):
        for j in range(i + 1, len(segments)):
            db.add(Preference(segments[i], segments[j], ((1.0, 0.0), (0.0, 1.0))[int(rng.integers(2))]).check())
    paths = RunPaths(run_dir)
    db.save(paths.prefs)
    cfg = RewardConfig(n_members=2, batch_size=4, batchnorm=True, clip=2.0, norm_segments=2, bfloat16="off")
    _config(run_dir, "--env", PONG, "--synthetic_prefs", "--n_predictors", 2, "--reward_batch_size", 4,
            "--reward_clip", 2.0, "--reward_norm_segments", 2, "--reward_bfloat16", "off")
    db = PrefDB.load(paths.prefs)  # what the run saved
    trainer = RewardTrainer((84, 84, 4), cfg, db, threading.Lock(), seed=0)
    for _ in range(5):
        trainer.train_step()
    trainer.publish()
    trainer.save(paths.predictor)
    db_clips = np.stack([db.segment_obs(i) for i in db.segment_ids()])
    scores = np.stack([trainer.ensemble.reward(c) for c in db_clips])  # (n, T): what the predictor pays
    order = [int(np.flatnonzero((seen == c).all(axis=(1, 2, 3, 4)))[0]) for c in db_clips]  # db clip -> raw clip
    return run_dir, raw[order], scores, db_clips


class Replay(gym.Env):
    """Plays back clips: step t of a clip returns its observation t (what the action led to), as the env gave it."""

    def __init__(self, clips: np.ndarray, channels_first: bool = False):
        self.clips = np.moveaxis(clips, -1, 2) if channels_first else clips  # (n, T, 4, 84, 84)
        self.observation_space = gym.spaces.Box(0, 255, self.clips.shape[2:], np.uint8)
        self.action_space = gym.spaces.Discrete(6)
        self.clip, self.t = -1, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.clip, self.t = self.clip + 1, 0
        return self.clips[self.clip][0], {}

    def step(self, action):
        obs = self.clips[self.clip][self.t]
        self.t += 1
        return obs, 1.0, False, self.t == self.clips.shape[1], {"frame": self.t}


@pytest.mark.parametrize("channels_first", [False, True], ids=["channels-last", "channels-first"])
def test_pong_the_wrapper_pays_each_saved_clip_what_the_predictor_pays_it(pong_run, channels_first):
    run_dir, raw, scores, _ = pong_run
    env = LearnedReward(Replay(raw, channels_first), run_dir)
    paid = np.zeros(scores.shape, np.float32)
    for i in range(len(raw)):
        env.reset()
        for t in range(CLIP):
            _, paid[i, t], _, truncated, info = env.step(0)
            assert info[TRUE_REWARD_KEY] == 1.0 and info["frame"] == t + 1  # the env's own, kept
        assert truncated
    np.testing.assert_allclose(paid, scores, atol=1e-6)
    assert np.std(scores.sum(axis=1)) > 1e-4  # the clips are told apart, so the ranking means something
    assert (np.argsort(paid.sum(axis=1)) == np.argsort(scores.sum(axis=1))).all()
    assert env.predictor.reward_config.clip == 2.0 and env.predictor.reward_config.batchnorm
    assert env.predictor.env_id == PONG and not env.predictor.score_visible


def test_pong_through_gymnasiums_own_atari_preprocessing(pong_run):
    """A single gymnasium Pong env as Stable-Baselines3 or CleanRL users make it (DeepMind preprocessing, 4 frames
    stacked channels-first) steps through the wrapper: a float reward per step, the true reward in info."""
    import ale_py
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    run_dir = pong_run[0]
    env = FrameStackObservation(AtariPreprocessing(gym.make(PONG), noop_max=30, frame_skip=4, screen_size=84), 4)
    env = LearnedReward(env, run_dir)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84)
    rewards = []
    for _ in range(20):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        rewards.append(reward)
        assert isinstance(reward, float) and TRUE_REWARD_KEY in info
    assert np.isfinite(rewards).all() and len(set(rewards)) > 1
    env.close()


def test_the_run_directory_a_predictor_file_and_an_export_give_the_same_reward(pong_run, tmp_path):
    from floyd.export import export_model

    run_dir, _, scores, db_clips = pong_run
    for name in ("summary.json", "run.json"):
        (run_dir / name).write_text("{}")
    files = export_model(run_dir, tmp_path / "model")  # a predictor alone: no policy
    assert [f.name for f in files] == ["reward_predictor.npz"]
    for source in (run_dir, run_dir / "reward_predictor" / "reward_predictor.npz", tmp_path / "model"):
        np.testing.assert_allclose(SavedPredictor(source).rewards(db_clips[0]), scores[0], atol=1e-6)


def test_centring_as_the_run_recorded_and_off_on_request(tmp_path):
    """--reward_center_steps N: the reward less a running mean over about N steps, from the offset the run's
    policy checkpoint recorded (drlhp.policy.reward_source.PredictedReward's own state)."""
    from drlhp.config.reward import RewardConfig
    from drlhp.policy.checkpoint import save_policy_checkpoint
    from drlhp.records.run_paths import RunPaths
    from drlhp.reward.checkpoint import save_predictor_weights
    from drlhp.reward.model import RewardEnsemble

    run_dir = tmp_path / "run"
    _config(run_dir, "--env", "MovingDot-v0", "--n_predictors", 1, "--reward_center_steps", 4)
    ensemble = RewardEnsemble((84, 84, 4), RewardConfig(n_members=1, bfloat16="off"), seed=0)
    obs = np.random.default_rng(0).integers(0, 256, (8, 84, 84, 4), np.uint8)
    ensemble.update_normalization(obs)
    save_predictor_weights(RunPaths(run_dir).predictor, ensemble.publish(), batchnorm=True)
    save_policy_checkpoint(RunPaths(run_dir).checkpoints, 10, {"weight_0": np.zeros(1)},
                           {"timesteps": 800, "reward_source": {"center_offset": 0.5, "center_rollouts": 100}})
    plain = ensemble.reward(obs)
    off = SavedPredictor(run_dir, center=0)
    np.testing.assert_allclose(off.rewards(obs), plain, atol=1e-6)
    assert off.center_offset is None
    centred = SavedPredictor(run_dir)
    got = centred.rewards(obs)  # one rollout of 8 steps: weight min(1, 8 / 4) = 1, so the offset is their mean
    np.testing.assert_allclose(got, plain - plain.mean(), atol=1e-6)
    first = SavedPredictor(run_dir).rewards(obs[:1])  # 1 step: weight 1/4 on the recorded 0.5
    np.testing.assert_allclose(first, plain[:1] - (0.75 * 0.5 + 0.25 * plain[0]), atol=1e-6)


@pytest.mark.parametrize("mode", ["same-step", "next-step"])
def test_the_vector_wrapper_pays_each_worker_what_a_single_wrapper_pays(mode):
    """One network call per step for every worker, the same rewards as one wrapper per worker; a finished
    episode's step scored on its last observation (SAME_STEP), the reset step after it paid 0 (NEXT_STEP)."""
    from gymnasium.vector import AutoresetMode, SyncVectorEnv

    predictor = SavedPredictor(MOVING_DOT_PREDICTOR)

    def make():
        return gym.make("MovingDot-v1", max_episode_steps=4)

    autoreset = {"same-step": AutoresetMode.SAME_STEP, "next-step": AutoresetMode.NEXT_STEP}[mode]
    vec = LearnedRewardVector(SyncVectorEnv([make] * 3, autoreset_mode=autoreset), predictor)
    singles = [LearnedReward(make(), predictor) for _ in range(3)]
    vec.reset(seed=0)
    for i, env in enumerate(singles):
        env.reset(seed=i)
    rng = np.random.default_rng(0)
    resetting = np.zeros(3, bool)
    for _ in range(11):
        actions = rng.integers(0, 5, 3)
        _, rewards, terminated, truncated, info = vec.step(actions)
        for i, env in enumerate(singles):
            if resetting[i]:  # NEXT_STEP: this step was the reset
                env.reset()
                assert rewards[i] == 0.0 and info[TRUE_REWARD_KEY][i] == 0.0
                continue
            _, reward, term, trunc, single_info = env.step(actions[i])
            assert (term, trunc) == (terminated[i], truncated[i])
            assert info[TRUE_REWARD_KEY][i] == single_info[TRUE_REWARD_KEY]
            np.testing.assert_allclose(rewards[i], reward, atol=1e-6)
            if (term or trunc) and mode == "same-step":
                env.reset()
        resetting = (terminated | truncated) if mode == "next-step" else resetting
    assert predictor.reward_config.center_steps == 0  # MovingDot's preset does not centre


def test_what_cannot_be_used_is_one_clear_error(pong_run, tmp_path):
    run_dir = pong_run[0]
    with pytest.raises(LearnedRewardError, match="no config.json"):
        SavedPredictor(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"env": "MovingDot-v0"}))
    with pytest.raises(LearnedRewardError, match="no reward predictor"):
        SavedPredictor(tmp_path)
    with pytest.raises(LearnedRewardError, match="does not score vectors"):
        LearnedReward(gym.make("CartPole-v1"), run_dir)
    with pytest.raises(LearnedRewardError, match=r"does not score images of shape \(84, 84, 3\)"):
        LearnedReward(Replay(np.zeros((1, 2, 84, 84, 3), np.uint8)), run_dir)


def _modules_after(code: str) -> set[str]:
    """The top-level packages among tensorflow, keras and gymnasium that ``code`` loads in a fresh interpreter."""
    import subprocess
    import sys

    probe = code + ("\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules}"
                    " & {'tensorflow', 'keras', 'gymnasium'})))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120,
                         check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_drlhp_stays_light_and_lends_the_wrapper_on_use():
    assert _modules_after("import drlhp\nassert 'LearnedReward' in dir(drlhp)") == set()
    assert _modules_after("import drlhp\ndrlhp.LearnedReward") == {"gymnasium"}  # TensorFlow: at the first step


@pytest.mark.slow
def test_a2c_through_the_wrapper_learns_moving_dot_from_a_saved_predictor(tmp_path):
    """drlhp's A2C on MovingDot, paid by the predictor in models/moving-dot-reward (the moving-dot preset's predictor
    after pretraining on 4,000 synthetic preferences of random play, validation accuracy 0.86; no label after it)
    through LearnedRewardVector, with no pipeline: no labeller, no predictor process, the env's own reward never seen.
    The policy's settings are make run's (the moving-dot preset; returns run through episode ends, as with the
    predictor's reward in a run). It stops once its last 100 episodes succeed 80% of the time (a random policy:
    1% of 300 episodes), or at 100k agent steps. Seeds 0, 1, 2 ended there at 8,960, 7,520 and 6,800 agent steps."""
    from drlhp.config.cli import build_parser, config_from_args
    from drlhp.config.presets import preset_flags
    from drlhp.policy.a2c.policy import build_policy
    from drlhp.policy.a2c.trainer import A2CTrainer
    from drlhp.policy.loop import Agent, Outputs
    from drlhp.policy.reward_source import RewardSource
    from drlhp.records.metrics import MetricsLogger
    from drlhp.records.run_record import RunRecord
    from envs.gym_vec_env import GymVecEnv

    class WrappedMovingDot(GymVecEnv):
        """drlhp's vector env of MovingDot-v0 workers, its gymnasium SyncVectorEnv inside LearnedRewardVector:
        the reward each step reports is the predictor's."""

        def __init__(self, n_envs: int):
            super().__init__("MovingDot-v0", n_envs)
            self._env = LearnedRewardVector(self._env, MOVING_DOT_PREDICTOR)

    class WrapperReward(RewardSource):
        """The env's reward as it comes (here the wrapper's), unclipped."""

        name = "wrapper"

        def rewards(self, obs, true_rewards):
            return true_rewards

    run_dir = tmp_path / "run"
    cfg = config_from_args(build_parser().parse_args([
        "train_policy_with_original_rewards", "--env", "MovingDot-v0", *preset_flags("moving-dot"), "--seed", "0",
        "--episode_ends", "off", "--stop_at_success_rate", "0.8", "--log_interval", "30", "--run_dir", str(run_dir)]))
    env = WrappedMovingDot(cfg.a2c.n_envs)
    logger = MetricsLogger(run_dir)
    try:
        trainer = A2CTrainer(cfg, Agent(env, build_policy(cfg, env), WrapperReward()),
                             Outputs(RunRecord(run_dir), logger))
        summary = trainer.train()
    finally:
        logger.close()
        env.close()
    print(f"A2C through LearnedRewardVector: {summary}")
    assert summary["success_rate_last100"] >= 0.8, summary
    assert summary["reached_target"] and summary["timesteps"] <= 100_000, summary

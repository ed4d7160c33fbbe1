import threading
from dataclasses import replace

import numpy as np
import pytest

import envs
from drlhp.policy.a2c.rollout import A2CRunner
from drlhp.policy.discrete_rollout import episode_ends_for
from drlhp.policy.training_state import env_seed


def test_env_seed_is_the_run_seed_then_new_31_bit_seeds_on_resume():
    assert env_seed(7, 0, 16) == 7
    resumed = [env_seed(7, u, 16) for u in (1, 25_000, 10**7)]
    assert len(set(resumed)) == 3 and 7 not in resumed
    assert all(0 <= s < 2**31 - 16 for s in resumed), "ale-py takes C ints; worker i adds i"
    assert env_seed(7, 25_000, 16) == env_seed(7, 25_000, 16)


class _ConstantReward:
    """Reward 1 on every step (a stand-in for a learned reward with a positive offset)."""

    name = "predicted"

    def rewards(self, obs, true_rewards):
        return np.ones(true_rewards.shape, np.float32)


class _ZeroValue:
    def value(self, obs):
        return np.zeros(len(obs), np.float32)


@pytest.mark.parametrize("episode_ends", [True, False])
def test_episode_ends_stop_the_returns_only_when_asked(episode_ends):
    """With episode_ends off (the paper, on the predictor's reward) the returns run on through a reset:
    an episode's end is not a terminal state to seek or avoid."""
    env = envs.make_vec_env("MovingDot-v0", 2)
    runner = A2CRunner(env, _ZeroValue(), _ConstantReward(), 250, 0.9, seed=0, episode_ends=episode_ends)
    rollout = runner.run(random_actions=True)  # 250 steps: every worker's 200-step episode ends
    returns = rollout.b_returns.reshape(250, 2)
    t, w = np.argwhere(rollout.dones)[0]
    assert t < 240
    if episode_ends:
        assert returns[t, w] == pytest.approx(1.0)  # nothing flows back over the end
    else:
        assert returns[t, w] == pytest.approx((1 - 0.9 ** (250 - t)) / (1 - 0.9), rel=1e-4)


def test_auto_cuts_returns_with_original_rewards_and_not_with_the_predictors():
    from drlhp.config import RunConfig
    from drlhp.policy.reward_source import ClippedEnvReward

    def decided(source, setting="auto"):
        cfg = RunConfig(mode="train_policy_with_original_rewards", env="MovingDot-v0")
        cfg = replace(cfg, a2c=replace(cfg.a2c, episode_ends=setting))
        return episode_ends_for(cfg, source)

    assert decided(ClippedEnvReward()) is True
    assert decided(_ConstantReward()) is False
    assert decided(_ConstantReward(), "on") is True and decided(ClippedEnvReward(), "off") is False


def test_reward_centering_removes_the_running_mean_and_follows_a_jump_in_the_offset():
    """--reward_center_steps: the policy's reward loses its running mean (an exponential average over about
    center_steps agent steps), so a jump in the predictor's offset at a publication reaches the value
    function as a decaying transient, while the differences between steps are kept."""
    from drlhp.config.reward import RewardConfig
    from drlhp.policy.reward_figures import RewardFigures
    from drlhp.policy.reward_source import PredictedReward

    source = PredictedReward((84, 84, 4), RewardConfig(n_members=1, batchnorm=False, center_steps=400), seed=0)
    source.ensemble.version = 1  # as if weights had arrived
    level = {"offset": 0.3}
    pattern = np.tile(np.array([0.0, 0.1], np.float32), 20)  # 40 steps: 5 steps x 8 envs
    source.ensemble.reward = lambda obs: level["offset"] + pattern
    obs, true = np.zeros((5, 8, 84, 84, 4), np.uint8), np.zeros((5, 8), np.float32)
    r = source.rewards(obs, true)
    assert r.shape == (5, 8) and r.dtype == np.float32
    assert abs(r.mean()) < 1e-6 and np.allclose(r.reshape(-1)[1] - r.reshape(-1)[0], 0.1)  # the first: its own mean
    level["offset"] = 0.5  # until the rollouts span 400 steps, the mean of them all: (0.35 + 0.55) / 2
    assert np.isclose(source.rewards(obs, true).mean(), 0.55 - 0.45, atol=1e-6)
    level["offset"] = 0.3
    for _ in range(8):  # 10 rollouts of 40 steps: the window is full
        source.rewards(obs, true)
    resumed = PredictedReward((84, 84, 4), RewardConfig(n_members=1, batchnorm=False, center_steps=400), seed=0)
    resumed.restore(source.state())  # a policy checkpoint keeps the running mean
    assert resumed.offset == source.offset and resumed.center_rollouts == source.center_rollouts == 10
    source.restore({"center_offset": 0.35, "center_rollouts": 10})
    level["offset"] = -0.2  # a publication moved the offset by -0.5
    means = [source.rewards(obs, true).mean() for _ in range(30)]
    w = 40 / 400
    assert np.isclose(means[0], -0.5 * (1 - w), atol=1e-5)  # the average moved a tenth of the way
    assert np.isclose(means[9], -0.5 * (1 - w) ** 10, atol=1e-5) and abs(means[-1]) < 0.03
    figures = RewardFigures(source)
    figures.on_rollout(type("R", (), {"rewards": source.rewards(obs, true), "true_rewards": true})(), None)
    assert np.isclose(figures.metrics()["reward/center_offset"], source.offset)
    off = PredictedReward((84, 84, 4), RewardConfig(n_members=1, batchnorm=False), seed=0)  # the default: not centred
    off.ensemble.version, off.ensemble.reward = 1, source.ensemble.reward
    assert np.isclose(off.rewards(obs, true).mean(), -0.2 + 0.05) and off.offset is None


def test_reward_centering_starts_after_the_given_agent_steps_and_a_resume_keeps_the_count():
    """--reward_center_from_million_timesteps: the reward is the predictor's as published until the policy has
    taken that many agent steps, then centred; a checkpoint keeps the count, so a resumed run starts on time."""
    from drlhp.config.reward import RewardConfig
    from drlhp.policy.reward_source import PredictedReward

    cfg = RewardConfig(n_members=1, batchnorm=False, center_steps=400, center_from_million_timesteps=0.0001)
    source = PredictedReward((84, 84, 4), cfg, seed=0)  # centring from 100 agent steps
    source.ensemble.version, source.ensemble.reward = 1, lambda obs: 0.3 + np.zeros(len(obs), np.float32)
    obs, true = np.zeros((5, 8, 84, 84, 4), np.uint8), np.zeros((5, 8), np.float32)
    assert np.isclose(source.rewards(obs, true).mean(), 0.3) and source.offset is None  # 40 steps
    assert np.isclose(source.rewards(obs, true).mean(), 0.3)  # 80 steps: not yet
    resumed = PredictedReward((84, 84, 4), cfg, seed=0)
    resumed.restore(source.state())
    resumed.ensemble.version, resumed.ensemble.reward = 1, source.ensemble.reward
    assert resumed.steps_rewarded == 80
    assert abs(resumed.rewards(obs, true).mean()) < 1e-6 and np.isclose(resumed.offset, 0.3)  # 120 steps: centred


# --- --stop_at_true_return, --stop_at_success_rate: the trainer's loop on made-up episodes (no training) ------

class _Policy:
    """A2CPolicy's surface as PolicyTrainer uses it, training nothing."""

    def train(self, obs, actions, returns, lr, ent_coef=None):
        return {"entropy": 1.0, "policy_loss": 0.0, "value_loss": 0.0}

    def get_state(self):
        return {"weight_0": np.zeros(1, np.float32)}

    def set_state(self, arrays):
        pass


class _Runner:
    """Every rollout ends ``per_rollout`` episodes, of true return ``returns(rollout index)`` and success
    ``successes(rollout index)``."""

    def __init__(self, returns, per_rollout=10, successes=lambda i: True):
        self.returns, self.per_rollout, self.successes, self.calls = returns, per_rollout, successes, 0

    def run(self, random_actions=False):
        from drlhp.policy.a2c.rollout import A2CRollout
        from envs import EpisodeStats

        ret, success = self.returns(self.calls), self.successes(self.calls)
        self.calls += 1
        empty = np.zeros((5, 2), np.float32)
        return A2CRollout(b_obs=np.zeros((10, 2)), b_actions=np.zeros(10, np.int32), rewards=empty,
                          true_rewards=empty, next_obs=np.zeros((5, 2, 2)), dones=empty,
                          finished=[EpisodeStats(worker=0, true_return=ret, length=20, success=success)]
                          * self.per_rollout, b_returns=np.zeros(10, np.float32))


class _Env:
    """What the trainer's own runner (A2CRunner) asks of an env when it is built (the test replaces it)."""

    n_envs, obs_shape, obs_dtype = 2, (2,), np.float32

    def reset(self, seed):
        return np.zeros((2, 2), np.float32)


class _Logger:
    def __init__(self):
        self.steps = []

    def log(self, step, metrics):
        self.steps.append(step)


def _trainer(tmp_path, target, returns, successes=lambda i: True, reward_source=None, ports=None, observers=(),
             **changes):
    """An A2CTrainer of 100 updates of 10 agent steps (2 envs x 5 steps) on MovingDot, whose rollouts end
    10 episodes each (``returns``: the rollout's index -> their true return)."""
    from drlhp.config import RunConfig
    from drlhp.policy.a2c.trainer import A2CTrainer
    from drlhp.policy.loop import Agent, Outputs
    from drlhp.policy.reward_source import ClippedEnvReward
    from drlhp.processes.ports import PolicyPorts
    from drlhp.records.run_record import RunRecord

    cfg = RunConfig(mode="train_policy_with_original_rewards", env="MovingDot-v0", million_timesteps=0.001,
                    stop_at_true_return=target, log_interval=1e9, policy_ckpt_interval=0, **changes)
    cfg = replace(cfg, a2c=replace(cfg.a2c, n_envs=2, n_steps=5))
    logger = _Logger()
    trainer = A2CTrainer(cfg, Agent(_Env(), _Policy(), reward_source or ClippedEnvReward()),
                         Outputs(RunRecord(tmp_path), logger, log=lambda *a, **k: None), ports or PolicyPorts(),
                         observers)
    trainer.runner = _Runner(returns, successes=successes)
    trainer.write_hparams = lambda summary=None: None  # TensorBoard's HParams: not what is tested here
    return trainer, logger


def test_the_trainer_reads_its_ports_and_asks_its_observers(tmp_path):
    """The stop event (ports.stop_event) ends training; random play pauses while ports.random_play_over is set
    or an observer holds it back; an observer that paces is asked before each update, one that does not never."""
    from drlhp.policy.loop import RolloutObserver
    from drlhp.processes.ports import PolicyPorts

    stop, over = threading.Event(), threading.Event()

    class Pace(RolloutObserver):
        paces = True

        def __init__(self):
            self.asked = []

        def before_update(self, timesteps):
            self.asked.append(timesteps)
            if len(self.asked) == 3:
                stop.set()

    class Hold(RolloutObserver):
        held = False

        def holds_random_play(self):
            return self.held

        def before_update(self, timesteps):
            raise AssertionError("not a pacer: never asked")

    class Plain:  # an observer that is no RolloutObserver (as RewardFigures): neither paces nor holds
        def on_rollout(self, rollout, state):
            pass

        def metrics(self):
            return {}

        def summary(self):
            return {}

    pace, hold = Pace(), Hold()
    trainer, logger = _trainer(tmp_path, None, lambda i: 1.0, ports=PolicyPorts(stop_event=stop, random_play_over=over),
                               observers=[pace, hold, Plain()])
    assert not trainer.wait_for_reward()
    hold.held = True
    assert trainer.wait_for_reward()
    hold.held = False
    over.set()
    assert trainer.wait_for_reward()
    summary = trainer.train()
    assert pace.asked == [0, 10, 20] and summary["updates"] == 3  # the third update runs; then the loop stops


def test_stop_at_true_return_ends_training_once_a_full_window_reaches_it(tmp_path):
    """Returns of 10 for 10 rollouts (100 episodes), then 20: the last 100 episodes' mean reaches 15 after
    the 15th update (50 of each), and training ends there, with a final checkpoint and metrics row."""
    trainer, logger = _trainer(tmp_path, 15.0, lambda i: 10.0 if i < 10 else 20.0)
    summary = trainer.train()
    assert summary["timesteps"] == 150 and summary["updates"] == 15 and trainer.runner.calls == 15
    assert summary["reached_target"] is True and summary["true_return_last100"] == 15.0
    assert logger.steps[-1] == 150  # the last row is written at the stop, as at the budget's end
    assert (tmp_path / "checkpoints" / "policy-15.npz").exists()


def test_stop_at_true_return_waits_for_a_full_window_and_runs_the_budget_when_never_reached(tmp_path):
    # every episode's return is above the target, but 100 episodes must have ended: 10 updates, not 1
    early, _ = _trainer(tmp_path / "early", 5.0, lambda i: 10.0)
    assert early.train()["timesteps"] == 100
    # never reached: the whole budget, and the summary says so
    never, logger = _trainer(tmp_path / "never", 25.0, lambda i: 10.0 if i < 10 else 20.0)
    summary = never.train()
    assert summary["timesteps"] == 1000 and summary["reached_target"] is False and logger.steps[-1] == 1000
    # no target (the default): no such figure in the summary
    plain, _ = _trainer(tmp_path / "plain", None, lambda i: 30.0)
    summary = plain.train()
    assert summary["timesteps"] == 1000 and "reached_target" not in summary


def test_stop_at_success_rate_alone_and_with_a_return_target(tmp_path):
    """Failures for 10 rollouts (100 episodes), then successes: the last 100 episodes' success rate reaches 0.9
    after the 19th update. With a return target too, both must be reached: the return's, here, later."""
    fail_first = lambda i: i >= 10  # noqa: E731
    alone, _ = _trainer(tmp_path / "alone", None, lambda i: 20.0, successes=fail_first, stop_at_success_rate=0.9)
    summary = alone.train()
    assert summary["timesteps"] == 190 and summary["reached_target"] is True
    assert summary["success_rate_last100"] == 0.9
    both, _ = _trainer(tmp_path / "both", 15.0, lambda i: 10.0 if i < 20 else 20.0, successes=fail_first,
                       stop_at_success_rate=0.9)
    assert both.train()["timesteps"] == 250  # the return's mean reaches 15 after the 25th update


def test_stop_at_success_rate_on_an_env_without_success_stops_with_one_line(tmp_path):
    trainer, _ = _trainer(tmp_path, None, lambda i: 20.0, successes=lambda i: None, stop_at_success_rate=0.9)
    with pytest.raises(ValueError, match="reports no success.*use --stop_at_true_return"):
        trainer.train()


def test_a_policy_checkpoint_keeps_the_reward_sources_state(tmp_path):
    """--reward_center_steps' running mean goes into the checkpoint and back into the source on resume."""
    from drlhp.policy.reward_source import ClippedEnvReward

    class Stateful(ClippedEnvReward):
        def __init__(self, state):
            self.kept, self.restored = state, None

        def state(self):
            return self.kept

        def restore(self, state):
            self.restored = state

    first, _ = _trainer(tmp_path, None, lambda i: 1.0, reward_source=Stateful({"center_offset": 0.25,
                                                                               "center_rollouts": 7}))
    first.train()
    again = Stateful({})
    _trainer(tmp_path, None, lambda i: 1.0, reward_source=again, load_policy_ckpt_dir=str(tmp_path / "checkpoints"))
    assert again.restored == {"center_offset": 0.25, "center_rollouts": 7}


def test_a_run_resumed_past_its_target_trains_only_when_the_flag_is_left_out(tmp_path):
    """The checkpoint keeps the last 100 returns: the same command ends at once, with no update, as a
    resumed run at its budget does; without --stop_at_true_return it trains on to the budget."""
    first, _ = _trainer(tmp_path, 15.0, lambda i: 10.0 if i < 10 else 20.0)
    first.train()
    again, _ = _trainer(tmp_path, 15.0, lambda i: 20.0, load_policy_ckpt_dir=str(tmp_path / "checkpoints"))
    summary = again.train()
    assert again.runner.calls == 0 and summary["timesteps"] == 150 and summary["reached_target"] is True
    on, _ = _trainer(tmp_path, None, lambda i: 20.0, load_policy_ckpt_dir=str(tmp_path / "checkpoints"))
    assert on.train()["timesteps"] == 1000


def test_a_run_that_reached_its_target_is_finished_and_says_so(tmp_path, capsys):
    import json

    from drlhp.config import RunConfig
    from drlhp.records.run_record import RunRecord
    from drlhp.run.outcome import finish

    # with a --stop_at_million_timesteps too: reaching the goal is what ended it, so "finished", not "stopped"
    cfg = RunConfig(mode="train_policy_with_original_rewards", env="MovingDot-v0", million_timesteps=0.1,
                    stop_at_million_timesteps=0.01, stop_at_true_return=15.0)
    record = RunRecord(tmp_path)
    summary = {"mode": cfg.mode, "timesteps": 10_000, "true_return_last100": 15.25, "reached_target": True}
    assert finish(record, summary, cfg) == 0
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "finished"
    assert json.loads((tmp_path / "summary.json").read_text())["reached_target"] is True
    out = capsys.readouterr().out
    assert ("[run] reached --stop_at_true_return 15: true return 15.25 over the last 100 episodes at 10,000 agent "
            "steps") in out and "stopped at --stop_at_million_timesteps" not in out
    # not reached by the sitting's stop: "stopped", as without the flag
    assert finish(record, {**summary, "reached_target": False}, cfg) == 0
    assert json.loads((tmp_path / "status.json").read_text())["status"] == "stopped"
    assert "reached --stop_at_true_return" not in capsys.readouterr().out
    both = replace(cfg, stop_at_success_rate=0.9)
    assert finish(record, {**summary, "success_rate_last100": 0.93}, both) == 0
    assert ("[run] reached --stop_at_true_return 15 and --stop_at_success_rate 0.9: true return 15.25, success "
            "rate 0.93 over the last 100 episodes") in capsys.readouterr().out


def test_predictor_pace_reports_pair_updates_per_second_from_the_first_update():
    """PredictorPace (ratio 0: it never waits) counts the predictor's pair-updates per second of wall time from the
    policy's first update: in the metrics, the progress line's " | predictor N pair-updates/s" and the summary."""
    import multiprocessing
    import time

    from drlhp.policy.feeds import PredictorPace
    from drlhp.processes.ports import PolicyPorts

    counter = multiprocessing.Value("q", 0)
    pace = PredictorPace(0.0, PolicyPorts(pair_updates=counter))
    assert pace.progress_text() == "" and pace.summary()["pair_updates_per_s"] is None  # no update yet
    pace.before_update(0)
    time.sleep(0.2)
    counter.value += 64
    text = pace.progress_text()
    assert text.startswith(" | predictor ") and text.endswith(" pair-updates/s"), text
    rate = float(text.split()[2].replace(",", ""))
    assert 64 / 1.0 < rate <= 64 / 0.2, rate  # 64 pair-updates in 0.2 s (and less than a second more)
    assert pace.metrics()["feed/pair_updates_per_s"] > 0
    assert 0 < pace.summary()["pair_updates_per_s"] <= 320


def test_fall_figures_give_the_fall_in_each_rewards_own_standard_deviation():
    """FallFigures (issue 38, H47): the training reward and the oracle's on fall steps, less their mean on the other
    steps, in the standard deviation of those steps; their ratio is the share of the fall's size the policy is paid.
    No figure without a fall or in random play; each interval starts afresh."""
    from drlhp.policy.fall_figures import FallFigures

    rng = np.random.default_rng(0)
    fell = np.zeros((64, 4), bool)
    fell[[10, 40], [1, 3]] = True
    oracle = rng.normal(3.0, 1.0, (64, 4))
    oracle[fell] -= 100.0
    paid = rng.normal(0.0, 0.05, (64, 4))
    paid[fell] -= 0.1  # a cheap learned fall: 2 of its standard deviations
    figures = FallFigures()
    rollout = type("R", (), {"rewards": paid, "true_rewards": oracle, "fell": fell})()
    figures.on_rollout(rollout, None)
    out = figures.metrics()
    rest = ~fell
    want = (paid[fell].mean() - paid[rest].mean()) / paid[rest].std()
    assert out["reward/fall_steps"] == 2 and np.isclose(out["reward/fall_sd"], want)
    assert -110 < out["oracle/fall_sd"] < -90 and -3.5 < out["reward/fall_sd"] < -0.5
    assert np.isclose(out["reward/fall_share"], out["reward/fall_sd"] / out["oracle/fall_sd"])
    assert figures.metrics() == {}  # a new interval
    figures.on_rollout(type("R", (), {"rewards": None, "true_rewards": oracle, "fell": fell})(), None)  # random play
    figures.on_rollout(type("R", (), {"rewards": paid, "true_rewards": oracle, "fell": rest & False})(), None)
    assert figures.metrics() == {}

"""PPO (drlhp/policy/ppo/update.py, policy.py) and its running normalization (drlhp/policy/running_norm.py): the
formulas against hand computations and numpy, acting in numpy against the Keras networks, one trace per compiled
function, the state round trip, and a learning test on the true reward."""
from __future__ import annotations

import numpy as np
import pytest

from drlhp.policy.running_norm import RewardScaler, RunningMeanStd


# --- running normalization -------------------------------------------------------------------------------------
def test_running_mean_std_matches_numpy_over_all_batches():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 5)) for n in (1, 7, 64, 3)]
    rms = RunningMeanStd((5,), epsilon=0.0 + 1e-12)
    for b in batches:
        rms.update(b)
    everything = np.concatenate(batches)
    np.testing.assert_allclose(rms.mean, everything.mean(axis=0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rms.var, everything.var(axis=0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rms.normalize(everything), (everything - everything.mean(0)) / np.sqrt(
        everything.var(0) + 1e-8), rtol=1e-5, atol=1e-5)
    assert np.abs(rms.normalize(everything * 100, clip=10.0)).max() <= 10.0


def test_running_mean_std_state_round_trip():
    rms = RunningMeanStd((3,))
    rms.update(np.arange(12.0).reshape(4, 3))
    other = RunningMeanStd((3,))
    other.restore(rms.state())
    assert other.count == rms.count
    np.testing.assert_array_equal(other.mean, rms.mean)
    np.testing.assert_array_equal(other.var, rms.var)
    with pytest.raises(ValueError, match="do not fit"):
        RunningMeanStd((4,)).restore(rms.state())


def test_reward_scaler_divides_by_the_std_of_the_discounted_return():
    rewards = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
    dones = np.array([[0, 0], [1, 0], [0, 0]], np.float32)
    gamma = 0.9
    scaler = RewardScaler(2, gamma, clip=None)
    scaler.rms = RunningMeanStd((), epsilon=1e-12)  # no prior count: the statistics are exactly those seen
    out = scaler.scale(rewards, dones)
    # by hand: the running returns, every value seen so far, the std after each step
    returns, seen, expected = np.zeros(2), [], []
    for t in range(3):
        returns = returns * gamma + rewards[t]
        seen.extend(returns)
        expected.append(rewards[t] / np.sqrt(np.var(seen) + 1e-8))
        returns[dones[t] > 0] = 0.0
    np.testing.assert_allclose(out, np.array(expected), rtol=1e-4)
    np.testing.assert_allclose(scaler.returns, [0.5, (2.0 * gamma - 1.0) * gamma + 4.0])
    restored = RewardScaler(2, gamma)
    restored.restore(scaler.state())
    np.testing.assert_array_equal(restored.returns, scaler.returns)


# --- formulas --------------------------------------------------------------------------------------------------
def test_gae_against_a_hand_computation():
    from drlhp.policy.ppo.update import gae

    rewards = np.array([[1.0], [2.0], [3.0]], np.float32)
    values = np.array([[0.5], [1.0], [1.5]], np.float32)
    dones = np.array([[0.0], [1.0], [0.0]], np.float32)  # the episode ended at step 1
    advantages, returns = gae(rewards, values, dones, np.array([2.0], np.float32), gamma=0.9, lam=0.8)
    # t=2: 3 + 0.9 * 2 - 1.5 = 3.3; t=1: the end, 2 - 1 = 1; t=0: (1 + 0.9 * 1 - 0.5) + 0.9 * 0.8 * 1 = 2.12
    np.testing.assert_allclose(advantages[:, 0], [2.12, 1.0, 3.3], rtol=1e-6)
    np.testing.assert_allclose(returns[:, 0], [2.62, 2.0, 4.8], rtol=1e-6)


def test_gae_with_lambda_one_is_the_discounted_return_minus_the_value():
    from drlhp.policy.a2c.update import discounted_returns
    from drlhp.policy.ppo.update import gae

    rng = np.random.default_rng(1)
    rewards, values = rng.normal(size=(20, 3)).astype(np.float32), rng.normal(size=(20, 3)).astype(np.float32)
    dones = (rng.random((20, 3)) < 0.15).astype(np.float32)
    last = rng.normal(size=3).astype(np.float32)
    advantages, returns = gae(rewards, values, dones, last, gamma=0.95, lam=1.0)
    np.testing.assert_allclose(returns, discounted_returns(rewards, dones, last, 0.95), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(advantages, returns - values, rtol=1e-5, atol=1e-5)


def test_the_clipped_objective_on_a_small_batch():
    import tensorflow as tf

    from drlhp.policy.ppo.update import clipped_surrogate

    ratios = np.array([0.5, 1.0, 1.5, 1.5], np.float32)
    advantages = np.array([1.0, -1.0, 1.0, -1.0], np.float32)
    old = np.array([0.3, -1.2, 0.0, 2.0], np.float32)
    loss, clip_frac = clipped_surrogate(tf.constant(old + np.log(ratios)), tf.constant(old), tf.constant(advantages),
                                        0.2)
    # min(r A, clip(r, 0.8, 1.2) A): 0.5, -1, 1.2, -1.5 -> mean -0.2, the loss its negative
    assert float(loss) == pytest.approx(0.2, abs=1e-6)
    assert float(clip_frac) == pytest.approx(0.75)


def test_gaussian_log_prob_and_entropy():
    import tensorflow as tf

    from drlhp.policy.ppo.update import gaussian_entropy, gaussian_log_prob

    a, mu, log_std = np.array([[0.3, -1.0]]), np.array([[0.1, 0.5]]), np.array([0.2, -0.7])
    std = np.exp(log_std)
    by_hand = np.sum(-((a - mu) ** 2) / (2 * std**2) - np.log(std * np.sqrt(2 * np.pi)))
    got = gaussian_log_prob(tf.constant(a, tf.float32), tf.constant(mu, tf.float32), tf.constant(log_std, tf.float32))
    assert float(got[0]) == pytest.approx(by_hand, rel=1e-5)
    entropy = float(gaussian_entropy(tf.constant(log_std, tf.float32)))
    assert entropy == pytest.approx(np.sum(0.5 * np.log(2 * np.pi * np.e * std**2)), rel=1e-5)


# --- the policy ------------------------------------------------------------------------------------------------
def small_policy(seed=0, **kw):
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy

    cfg = PPOConfig(n_envs=4, n_steps=16, n_minibatches=4, n_epochs=2, **kw)
    return PPOPolicy(5, 2, cfg, seed, action_low=-1.0, action_high=1.0)


def fake_rollout(policy, seed=0):
    """A rollout of random observations acted on by ``policy`` (T=16, N=4), and its rewards."""
    from drlhp.policy.ppo.batches import PPORollout

    cfg, rng = policy.cfg, np.random.default_rng(seed)
    T, N = cfg.n_steps, cfg.n_envs
    steps = [policy.act(rng.normal(size=(N, policy.obs_dim)).astype(np.float32)) for _ in range(T)]
    dones = np.zeros((T, N), np.float32)
    dones[7] = 1.0
    return PPORollout(
        obs_norm=np.stack([s.obs_norm for s in steps]), actions=np.stack([s.actions for s in steps]),
        log_probs=np.stack([s.log_probs for s in steps]), values=np.stack([s.values for s in steps]),
        rewards=rng.normal(size=(T, N)).astype(np.float32), task_rewards=np.zeros((T, N), np.float32), dones=dones,
        bootstrap_values=np.zeros((T, N), np.float32), last_values=np.zeros(N, np.float32))


def test_acting_in_numpy_matches_the_keras_networks():
    import tensorflow as tf

    from drlhp.policy.ppo.update import gaussian_log_prob

    policy = small_policy()
    policy.learn(fake_rollout(policy), fake_rollout(policy).rewards, lr=1e-2)  # weights away from their start
    obs = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
    acting = policy.act(obs)
    mean = policy.actor(acting.obs_norm).numpy()
    np.testing.assert_allclose(policy.critic(acting.obs_norm).numpy()[:, 0], acting.values, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(acting.log_probs, gaussian_log_prob(acting.actions, mean, policy.log_std).numpy(),
                               rtol=1e-4, atol=1e-4)
    deterministic = np.clip(policy.actor(policy.normalize(obs, False)), -1, 1)
    np.testing.assert_allclose(policy.act_deterministic(obs), deterministic, rtol=1e-4, atol=1e-5)
    assert np.abs(acting.env_actions).max() <= 1.0
    assert isinstance(policy.log_std, tf.Variable)


@pytest.mark.parametrize("fused", [True, False])
def test_each_compiled_function_is_traced_once(fused):
    policy = small_policy(fused_update=fused)
    for seed in range(3):
        rollout = fake_rollout(policy, seed)
        out = policy.learn(rollout, rollout.rewards, lr=3e-4 * (1 - seed / 3), ent_coef=0.01 * seed)
    assert dict(policy.traces) == ({"update": 1, "step": 1} if fused else {"step": 1})
    assert all(np.isfinite(v) for k, v in out.items() if k != "explained_variance")


def test_fused_and_stepwise_updates_give_the_same_weights():
    a, b = small_policy(fused_update=True), small_policy(fused_update=False)
    ra, rb = fake_rollout(a), fake_rollout(b)
    np.testing.assert_array_equal(ra.actions, rb.actions)
    a.learn(ra, ra.rewards, lr=1e-3)
    b.learn(rb, rb.rewards, lr=1e-3)
    for wa, wb in zip(a.get_state().values(), b.get_state().values()):
        np.testing.assert_allclose(wa, wb, rtol=1e-4, atol=1e-6)


def test_the_state_round_trip_gives_the_same_policy():
    policy = small_policy()
    rollout = fake_rollout(policy)
    policy.learn(rollout, rollout.rewards, lr=1e-3)
    state = policy.get_state()
    assert all(isinstance(v, np.ndarray) for v in state.values())
    other = small_policy(seed=7)
    other.set_state(state)
    obs = np.ones((4, 5), np.float32)
    a, b = policy.act(obs), other.act(obs)  # same weights, statistics and noise
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.values, b.values)
    r1, r2 = fake_rollout(policy, 5), fake_rollout(other, 5)
    policy.learn(r1, r1.rewards, lr=1e-3)
    other.learn(r2, r2.rewards, lr=1e-3)
    for k, v in policy.get_state().items():
        np.testing.assert_allclose(v, other.get_state()[k], rtol=1e-5, atol=1e-7, err_msg=k)
    weights = small_policy(seed=9)
    weights.set_state(policy.weights_only())
    np.testing.assert_allclose(weights.act_deterministic(obs), policy.act_deterministic(obs), atol=2e-3)
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy

    with pytest.raises(ValueError, match="does not fit"):
        PPOPolicy(6, 2, PPOConfig(n_envs=4, n_steps=16, n_minibatches=4), 0).set_state(state)


def test_the_batch_must_divide_into_minibatches():
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy

    cfg = PPOConfig(n_envs=3, n_steps=10, n_minibatches=4)
    assert "must divide into --ppo_n_minibatches (4)" in cfg.problem()
    with pytest.raises(ValueError, match="divide"):
        PPOPolicy(6, 2, cfg, 0)


# --- learning ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_ppo_learns_inverted_pendulum_on_the_true_reward(tmp_path):
    """The production loop (PPOTrainer.train, wired as train_policy_with_original_rewards wires it: the envs, the
    policy, the env's reward) on InvertedPendulum-v5 with fixed-length episodes (1,000 steps, a fall costs 100 and
    resets the pole): a random policy's return is about -8,000; the test's observer stops the run (the stop event,
    as the parent would) once the last 8 episodes average 500 or more (balanced most of the time). The loop it
    replaced (train_ppo, a second loop) took 32,768 and 40,960 agent steps with seed 0; the budget is 4x."""
    pytest.importorskip("mujoco")
    import threading

    from drlhp.config import RunConfig
    from drlhp.policy.loop import Agent, Outputs, RolloutObserver
    from drlhp.policy.ppo.policy import build_ppo
    from drlhp.policy.ppo.trainer import PPOTrainer
    from drlhp.policy.reward_source import EnvReward
    from drlhp.processes.ports import PolicyPorts
    from drlhp.records.run_record import RunRecord
    from envs.fixed_length import any_vector_env

    class StopOnceLearned(RolloutObserver):
        def __init__(self, stop):
            self.stop, self.returns = stop, []

        def on_rollout(self, rollout, state):
            self.returns += [episode.true_return for episode in rollout.finished]
            if len(self.returns) >= 8 and np.mean(self.returns[-8:]) >= 500:
                self.stop.set()

    cfg = RunConfig(mode="train_policy_with_original_rewards", env="InvertedPendulum-v5", algo="ppo", seed=0,
                    million_timesteps=0.16, log_interval=10, policy_ckpt_interval=0, milestone_million_timesteps=0)
    stop, lines = threading.Event(), []
    learned = StopOnceLearned(stop)
    envs = any_vector_env(cfg.env, cfg.ppo.n_envs, **cfg.ppo.falls)
    try:
        policy = build_ppo(cfg, envs)
        trainer = PPOTrainer(cfg, Agent(envs, policy, EnvReward()), Outputs(RunRecord(tmp_path), _Logger(),
                                                                             log=lambda *a, **k: lines.append(a[0])),
                             PolicyPorts(stop_event=stop), [learned])
        summary = trainer.train()
    finally:
        envs.close()
    print("\n".join(lines))
    print(f"agent steps: {summary['timesteps']:,}; wall {summary['wall_s']:.0f} s")
    assert stop.is_set(), f"mean return of the last 8 episodes {np.mean(learned.returns[-8:]):.0f} < 500"
    assert learned.returns[0] < 0 < 500 <= np.mean(learned.returns[-8:])
    assert summary["timesteps"] < 160_000 and dict(policy.traces) == {"update": 1, "step": 1}


class _Logger:
    def log(self, step, metrics):
        pass


def test_the_collector_on_hopper_reports_both_returns_and_bootstraps_the_time_limit():
    """Hopper-v5 cut to 50-step episodes: two envs each finish one at step 50 (index 49), a time limit, so the
    value of the last observation is added there; the task return (no control cost) is above the env's."""
    pytest.importorskip("mujoco")
    from drlhp.config.ppo import PPOConfig
    from drlhp.policy.ppo.policy import PPOPolicy
    from drlhp.policy.ppo.rollout import RolloutCollector
    from envs.fixed_length import fixed_length_vector_env

    envs = fixed_length_vector_env("Hopper-v5", 2, max_episode_steps=50)
    cfg = PPOConfig(n_envs=2, n_steps=64, n_minibatches=4, n_epochs=1)
    space = envs.single_action_space
    policy = PPOPolicy(11, 3, cfg, 0, space.low, space.high)
    rollout = RolloutCollector(envs, policy, seed=0).run()
    assert [episode.length for episode in rollout.finished] == [50, 50]
    assert np.flatnonzero(rollout.dones.any(axis=1)).tolist() == [49]
    assert np.all(rollout.bootstrap_values[49] != 0) and np.all(np.delete(rollout.bootstrap_values, 49, 0) == 0)
    for episode in rollout.finished:
        assert episode.task_return > episode.true_return  # the control cost removed
    np.testing.assert_allclose(rollout.task_rewards[:50].sum(0), [e.task_return for e in rollout.finished], rtol=1e-4)
    # gymnasium's own reward: the env's with the fall penalties added back (100 a fall, the default reset rule)
    for episode in rollout.finished:
        falls = (episode.standard_return - episode.true_return) / 100
        assert falls == pytest.approx(round(falls), abs=1e-4) and round(falls) >= 0
    # the task reward (what --no-ppo_control_cost pays PPO, and the oracle sums) carries the fall penalty: one step
    # 100 lower for every fall
    n_falls = round(sum(e.standard_return - e.true_return for e in rollout.finished) / 100)
    assert int((rollout.task_rewards[:50] < -50).sum()) == n_falls
    policy.learn(rollout, rollout.rewards, cfg.lr)


def _adam_pair(adam_eps: float, seed: int = 0):
    """Our policy and a copy of its variables under Keras's own Adam, after the same 25 steps of the same random
    gradients (learning rate 1e-3): (our variables, Keras's variables)."""
    import tensorflow as tf

    policy = small_policy(seed, adam_eps=adam_eps)
    theirs = [tf.Variable(v) for v in policy.variables]
    keras_adam = tf.keras.optimizers.Adam(learning_rate=1e-3, beta_1=0.9, beta_2=0.999, epsilon=adam_eps)
    rng = np.random.default_rng(seed)
    for _ in range(25):
        grads = [tf.constant(rng.normal(size=v.shape).astype(np.float32)) for v in policy.variables]
        policy._adam(grads, tf.constant(1e-3))
        keras_adam.apply_gradients(zip(grads, theirs))
    return [v.numpy() for v in policy.variables], [v.numpy() for v in theirs]


def test_the_hand_written_adam_matches_keras_adam_on_the_same_gradients():
    """PPO's Adam (PPOPolicy._adam, PyTorch's form: eps added to sqrt(v_hat)) against tf.keras.optimizers.Adam
    (eps added to sqrt(v)): the two differ only by where eps enters, so with a negligible eps every weight must agree
    to float32 rounding after 25 steps of the same gradients."""
    ours, keras = _adam_pair(adam_eps=1e-12)
    for a, b in zip(ours, keras):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_the_adam_comparison_can_fail_where_the_eps_forms_differ():
    """The same comparison with a large eps (0.5): PyTorch's eps x sqrt(1 - beta2^t) is not Keras's eps, so the
    weights must differ: the test above is sensitive to the update's form, not comparing a thing with itself."""
    ours, keras = _adam_pair(adam_eps=0.5)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(ours, keras)) > 1e-4

import numpy as np
import pytest

from drlhp.processes.tf_setup import configure_tensorflow

configure_tensorflow(1, 1)

from drlhp.config.a2c import A2CConfig  # noqa: E402
from drlhp.policy.a2c.policy import A2CPolicy  # noqa: E402
from drlhp.policy.a2c.update import discounted_returns  # noqa: E402


def test_discounted_returns_by_hand():
    gamma = 0.5
    rewards = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, -1.0]], dtype=np.float32)  # (T=3, N=2)
    dones = np.array([[0, 0], [1, 0], [0, 0]], dtype=np.float32)
    last_values = np.array([10.0, 4.0], dtype=np.float32)
    # env 0: episode ends at t=1, so t=2 bootstraps alone: R2 = 3 + .5*10 = 8; R1 = 2; R0 = 1 + .5*2 = 2
    # env 1: no end: R2 = -1 + .5*4 = 1; R1 = 1 + .5*1 = 1.5; R0 = 0 + .5*1.5 = .75
    expected = np.array([[2.0, 0.75], [2.0, 1.5], [8.0, 1.0]])
    np.testing.assert_allclose(discounted_returns(rewards, dones, last_values, gamma), expected)


def test_discounted_returns_match_a_direct_sum():
    rng = np.random.default_rng(0)
    T, gamma = 7, 0.9
    rewards = rng.normal(size=(T, 1)).astype(np.float32)
    last = np.array([2.0], dtype=np.float32)
    got = discounted_returns(rewards, np.zeros((T, 1), np.float32), last, gamma)
    for t in range(T):
        direct = sum(gamma ** (k - t) * rewards[k, 0] for k in range(t, T)) + gamma ** (T - t) * last[0]
        assert got[t, 0] == pytest.approx(direct, rel=1e-5)


@pytest.fixture(scope="module")
def policy():
    return A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=4, n_steps=2), seed=1)


def test_act_shapes_and_valid_actions(policy):
    obs = np.random.default_rng(0).integers(0, 256, (4, 84, 84, 4), dtype=np.uint8)
    actions, values = policy.act(obs)
    assert actions.shape == (4,) and values.shape == (4,)
    assert actions.dtype == np.int32 and set(actions) <= {0, 1, 2}


def test_training_raises_the_probability_of_advantaged_actions_without_retracing(policy):
    rng = np.random.default_rng(1)
    obs = rng.integers(0, 256, (8, 84, 84, 4), dtype=np.uint8)
    actions = np.full(8, 2, dtype=np.int32)
    returns = np.full(8, 5.0, dtype=np.float32)  # action 2 is far better than the value expects
    probs_before = _probs(policy, obs)[:, 2]
    for _ in range(60):
        out = policy.train(obs, actions, returns, lr=7e-4)
    probs_after = _probs(policy, obs)[:, 2]
    assert (probs_after > probs_before + 0.02).all(), (probs_before, probs_after)
    assert set(out) >= {"policy_loss", "value_loss", "entropy", "grad_norm"}
    for _ in range(3):
        policy.act(obs[:4])
    assert policy._train.experimental_get_tracing_count() == 1
    assert policy._act.experimental_get_tracing_count() == 1


def test_the_entropy_bonus_weight_is_given_per_update_and_switches_at_its_step():
    """policy.train(..., ent_coef): the same data with a heavy bonus keeps the policy more random than with
    none, without retracing; the trainer's weight is --ent_coef, then --ent_coef_after_switch from
    --ent_coef_switch_million_timesteps on (0: never)."""
    from types import SimpleNamespace

    from drlhp.config import RunConfig
    from drlhp.policy.a2c.trainer import A2CTrainer

    rng = np.random.default_rng(4)
    obs = rng.integers(0, 256, (8, 84, 84, 4), dtype=np.uint8)
    entropies = {}
    for weight in (0.0, 1.0):
        policy = A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=4, n_steps=2), seed=5)
        for _ in range(40):
            out = policy.train(obs, np.full(8, 2, np.int32), np.full(8, 5.0, np.float32), lr=7e-4, ent_coef=weight)
        entropies[weight] = out["entropy"]
        assert policy._train.experimental_get_tracing_count() == 1
    assert entropies[1.0] > entropies[0.0] + 0.05, entropies

    def weight_at(steps, **a2c):
        cfg = RunConfig(env="MovingDot-v0", a2c=A2CConfig(**a2c))
        return A2CTrainer.entropy_coef(SimpleNamespace(cfg=cfg, state=SimpleNamespace(timesteps=steps)))

    assert weight_at(10**9, ent_coef=0.01) == 0.01  # no switch by default
    switched = {"ent_coef": 0.01, "ent_coef_switch_million_timesteps": 6.3, "ent_coef_after_switch": 0.005}
    assert [weight_at(s, **switched) for s in (0, 6_299_999, 6_300_000, 9_000_000)] == [0.01, 0.01, 0.005, 0.005]


def _probs(policy, obs):
    import tensorflow as tf

    logits, _ = policy.model(obs, training=False)
    return tf.nn.softmax(logits).numpy()


def test_state_round_trip_restores_weights_optimizer_and_sampling(policy):
    obs = np.random.default_rng(2).integers(0, 256, (4, 84, 84, 4), dtype=np.uint8)
    state = policy.get_state()
    other = A2CPolicy((84, 84, 4), 3, A2CConfig(n_envs=4, n_steps=2), seed=99)
    other.set_state(state)
    for k, v in other.get_state().items():
        np.testing.assert_array_equal(v, state[k], err_msg=k)
    # same weights and the same RNG state: the same sampled actions from here on
    seq_a = [policy.act(obs)[0] for _ in range(5)]
    seq_b = [other.act(obs)[0] for _ in range(5)]
    np.testing.assert_array_equal(np.stack(seq_a), np.stack(seq_b))


def test_mlp_policy_for_vector_observations_acts_and_learns():
    policy = A2CPolicy((4,), 2, A2CConfig(n_envs=4, n_steps=2), seed=0, obs_dtype=np.float32)
    obs = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    actions, values = policy.act(obs[:4])
    assert actions.shape == (4,) and set(actions) <= {0, 1}
    before = _probs(policy, obs)[:, 1]
    for _ in range(60):
        policy.train(obs, np.ones(8, np.int32), np.full(8, 5.0, np.float32), lr=1e-2)
    after = _probs(policy, obs)[:, 1]
    assert (after > before).all() and after.mean() > before.mean() + 0.03


@pytest.mark.parametrize("style", ["tf1", "torch"])
def test_rmsprop_step_matches_a_numpy_loop(style):
    from drlhp.policy.a2c.update import rmsprop_step

    rng = np.random.default_rng(3)
    grads = rng.normal(scale=1e-3, size=(5, 4)).astype(np.float32)
    lr, decay, eps = 7e-4, 0.99, 1e-5
    ms_np = np.ones(4) if style == "tf1" else np.zeros(4)
    var_np = np.zeros(4)
    ms_tf, var_tf = ms_np.astype(np.float32), np.zeros(4, np.float32)
    for g in grads:
        ms_np = decay * ms_np + (1 - decay) * g.astype(np.float64) ** 2
        denom = np.sqrt(ms_np + eps) if style == "tf1" else np.sqrt(ms_np) + eps
        var_np -= lr * g / denom
        ms_tf, step = rmsprop_step(g, ms_tf, lr, decay, eps, style)
        var_tf = var_tf - step.numpy()
    np.testing.assert_allclose(var_tf, var_np, rtol=1e-4)
    # With the mean square starting at 1, TF1's first steps are tiny: lr * g, not lr * sign(g).
    if style == "tf1":
        assert np.abs(var_np).max() < 10 * lr * np.abs(grads).max()

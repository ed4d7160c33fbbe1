"""The reward predictor on float32 (D,) inputs (issue 29): the paper's MLP with its input normalization held as
weights, the trainer setting it from the database, checkpoints of either dtype, envs.predictor_input, and a
learning test on synthetic clips whose features differ in scale as MuJoCo's do."""
import threading

import numpy as np
import pytest

from drlhp.config.reward import RewardConfig
from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment
from drlhp.reward.pref_db import PrefDB

D, T = 15, 50


def synthetic_db(seed: int, n_pairs: int, t: int = T, d: int = D) -> PrefDB:
    """``n_pairs`` oracle-labelled pairs of clips of ``t`` steps of ``d`` features x = offset + scale * z, the
    scales spread over 100x (0.01 to 1) with offsets of about 1, as a MuJoCo observation's are; the true reward
    per step is w . z (every standardized feature counts). Each clip wanders about a point of its own."""
    rng = np.random.default_rng(seed)
    scales, offsets, w = rng.permutation(np.logspace(-2, 0, d)), rng.normal(size=d), rng.normal(size=d)
    db = PrefDB(max_prefs=100_000, seed=seed)

    def clip(k: int) -> Segment:
        z = rng.normal(size=d) + 0.5 * rng.normal(size=(t, d))
        return Segment((offsets + scales * z).astype(np.float32), np.zeros((t, 0, 0), np.uint8),
                       (z @ w).astype(np.float32), "Synthetic", 0, k)

    for i in range(n_pairs):
        a, b = clip(2 * i), clip(2 * i + 1)
        db.add(Preference(a, b, MU_LEFT if a.true_return > b.true_return else MU_RIGHT))
    return db


def _trainer(db: PrefDB, seed: int = 0, **cfg):
    from drlhp.reward.trainer import RewardTrainer

    cfg = RewardConfig(**{"n_members": 3, "dropout": 0.0, "batchnorm": False, "lr": 1e-3, **cfg})
    return RewardTrainer((D,), cfg, db, threading.Lock(), seed=seed, obs_dtype=np.float32)


def test_the_float_network_is_the_papers_mlp_with_its_input_norm_as_weights():
    from drlhp.reward.model import RewardEnsemble

    ens = RewardEnsemble((7,), RewardConfig(n_members=2, dropout=0.5), seed=0, obs_dtype=np.float32)
    model = ens.members[0]
    assert [w.shape for w in model.get_weights()] == [(7,), (7,), (7, 64), (64,), (64, 64), (64,), (64, 1), (1,)]
    assert len(model.trainable_variables) == 6  # the normalization is not trained
    kinds = [type(layer).__name__ for layer in model.layers]
    assert "BatchNormalization" not in kinds and kinds.count("LeakyReLU") == 2 and kinds.count("PairedDropout") == 2
    x = (np.random.default_rng(0).normal(size=(32, 7)) * 5 + 3).astype(np.float32)
    ens.set_input_norm(x.mean(0), np.r_[x.std(0)[:6], 0.0])  # a constant feature: its std is floored
    mean, std = ens.input_norm()
    np.testing.assert_allclose(mean, x.mean(0), rtol=1e-6)
    assert std[-1] == pytest.approx(1e-3)
    fresh = RewardEnsemble((7,), RewardConfig(n_members=2, dropout=0.5), seed=9, obs_dtype=np.float32)
    fresh.load_weights(ens.publish())  # the normalization travels in the published weights
    np.testing.assert_array_equal(fresh.predict(x), ens.predict(x))
    other = RewardEnsemble((7,), RewardConfig(n_members=2, dropout=0.5), seed=9, obs_dtype=np.float32)
    other.set_state(ens.get_state())
    np.testing.assert_array_equal(other.predict(x), ens.predict(x))
    on = RewardEnsemble((7,), RewardConfig(n_members=1, bfloat16="on"), seed=0, obs_dtype=np.float32)
    assert on.precision.bfloat16 is False and "float32 MLP" in on.precision.describe()  # no convolutions to speed up
    with pytest.raises(ValueError, match="no input normalization"):
        RewardEnsemble((7,), RewardConfig(n_members=1), seed=0).set_input_norm(mean, std)
    with pytest.raises(ValueError, match="float32 vectors"):
        RewardEnsemble((4, 4, 2), RewardConfig(n_members=1), seed=0, obs_dtype=np.float32)


def test_a_later_input_norm_set_keeps_each_members_rewards():
    """A trained member's input normalization set again (the database grew) rescales its first layer: the rewards
    the policy is paid stay as they were (within float32 rounding), though the statistics changed; without
    keep_function they move."""
    from drlhp.reward.model import RewardEnsemble

    rng = np.random.default_rng(1)
    x = (rng.normal(size=(256, 7)) * [1, 2, 3, 4, 5, 0.1, 1] + [0, 1, -2, 3, 0, 5, 0]).astype(np.float32)
    ens = RewardEnsemble((7,), RewardConfig(n_members=2, dropout=0), seed=0, obs_dtype=np.float32)
    ens.set_input_norm(x[:64].mean(0), x[:64].std(0))
    before = ens.predict(x)
    ens.set_input_norm(x.mean(0) + 0.5, x.std(0) * 1.7, keep_function=True)
    np.testing.assert_allclose(ens.input_norm()[0], x.mean(0) + 0.5, rtol=1e-6)
    np.testing.assert_allclose(ens.predict(x), before, rtol=1e-3, atol=1e-5)
    ens.set_input_norm(x.mean(0), x.std(0) * 0.5)  # as the first set: the function is not kept
    assert np.abs(ens.predict(x) - before).max() > 1e-3


def test_the_trainer_sets_the_input_norm_first_and_again_at_25_percent_more_rows(tmp_path):
    from drlhp.reward.checkpoint import PredictorCheckpointError
    from drlhp.reward.trainer import RewardTrainer

    db = synthetic_db(1, 40, t=10)
    trainer = _trainer(db)
    trainer.train_step()
    assert trainer.input_norm_sets == 1
    rows = db.obs_rows()
    mean, std = trainer.ensemble.input_norm()
    np.testing.assert_allclose(mean, rows.mean(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(std, np.maximum(rows.std(0), 1e-3), rtol=1e-4)
    source = synthetic_db(2, 15, t=10)  # 30 segments more: 37.5% of the 80 held
    more = sorted(source.train + source.val, key=lambda e: e.order)
    with trainer.lock:  # under the lock, as the preference drain adds: the next batch is drawn meanwhile
        for e in more[:9]:  # 18 segments: 22.5%, not yet
            db.add(Preference(source.segment(e.id1), source.segment(e.id2), e.mu))
    trainer.train_step()
    assert trainer.input_norm_sets == 1
    with trainer.lock:
        for e in more[9:]:
            db.add(Preference(source.segment(e.id1), source.segment(e.id2), e.mu))
    trainer.train_step()
    assert trainer.input_norm_sets == 2 and trainer.evaluate()["reward/input_norm_sets"] == 2
    np.testing.assert_allclose(trainer.ensemble.input_norm()[0], db.obs_rows().mean(0), rtol=1e-4, atol=1e-6)
    # checkpoints: the dtype recorded, the normalization restored with the weights, the other dtype refused
    trainer.save(tmp_path / "ckpt.npz")
    again = _trainer(db, seed=5)
    again.load(tmp_path / "ckpt.npz")
    x = db.obs_rows()[:20]
    np.testing.assert_array_equal(again.ensemble.predict(x), trainer.ensemble.predict(x))
    uint8 = RewardTrainer((D,), RewardConfig(n_members=3), PrefDB(), threading.Lock(), seed=0)
    with pytest.raises(PredictorCheckpointError, match="is of float32 observations, this run's are uint8") as e:
        uint8.load(tmp_path / "ckpt.npz")
    assert "\n" not in str(e.value)
    uint8.save(tmp_path / "u8.npz")
    with pytest.raises(PredictorCheckpointError, match="is of uint8 observations, this run's are float32"):
        _trainer(db).load(tmp_path / "u8.npz")


def test_published_float_weights_say_their_dtype_and_learned_reward_takes_them_with_actions(tmp_path):
    import gymnasium as gym

    from drlhp.learned_reward import LearnedReward, LearnedRewardError, SavedPredictor
    from drlhp.reward.checkpoint import load_predictor_weights, save_predictor_weights

    trainer = _trainer(synthetic_db(1, 10, t=5))
    trainer.train_step()
    save_predictor_weights(tmp_path / "reward_predictor.npz", trainer.publish(), batchnorm=False)
    weights, meta = load_predictor_weights(tmp_path / "reward_predictor.npz")
    assert meta["obs_dtype"] == "float32"
    (tmp_path / "config.json").write_text('{"env": "Hopper-v5", "reward": {}}')
    saved = SavedPredictor(tmp_path)  # issue 39: it scores (observation, action) rows (test_learned_reward_mujoco)
    assert saved.takes_actions and saved.obs_dtype == np.float32 and saved.in_channels == D
    x = synthetic_db(2, 2, t=5).obs_rows()
    np.testing.assert_allclose(saved.raw(x), trainer.ensemble.predict(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(LearnedRewardError, match=f"scores {D} values a step") as e:
        LearnedReward(gym.make("Pendulum-v1"), saved)
    assert "\n" not in str(e.value)


def test_predictor_input_is_float_observation_and_action_on_box_action_envs():
    from envs import observation_shape, predictor_input

    assert predictor_input("Pendulum-v1") == ((3 + 1,), np.float32)
    assert predictor_input("CartPole-v1") == (observation_shape("CartPole-v1"), np.uint8)
    assert predictor_input("MovingDot-v0") == ((84, 84, 4), np.uint8)


def test_the_mlp_learns_a_linear_reward_of_features_of_unlike_scales_and_needs_its_input_norm():
    """400 oracle-labelled pairs of 50-step clips (synthetic_db): with its input normalization the ensemble
    reaches validation accuracy 0.85 within 300 steps (measured: 25 to 75 steps on seeds 0-3, 2026-11-26);
    without it, after as many steps, it is well behind (measured: 0.13 to 0.23 lower on seeds 0-3)."""
    from drlhp.processes.tf_setup import configure_tensorflow

    configure_tensorflow(1, 1, seed=0)
    db = synthetic_db(0, 400)

    def train(norm: bool, max_steps: int, stop_at: float = 2.0) -> tuple[int, float]:
        trainer = _trainer(db)
        if not norm:  # the members keep mean 0, std 1: raw inputs
            trainer._maybe_set_input_norm = lambda: None
        acc = float("nan")
        for step in range(1, max_steps + 1):
            trainer.train_step()
            if step % 25 == 0:
                acc = trainer.evaluate()["reward/val_accuracy"]
                if acc >= stop_at:
                    break
        assert trainer.input_norm_sets == int(norm)
        return step, acc

    steps, acc = train(True, 300, stop_at=0.85)
    assert acc >= 0.85, (steps, acc)
    _, raw_acc = train(False, steps)
    assert raw_acc <= acc - 0.05, (steps, acc, raw_acc)

"""The reward predictor: its loss against a hand computation, the paired treatment of the two
segments, L2 adaptation, normalization, weights across processes, and that it learns."""
import math
from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from drlhp.config.reward import RewardConfig
from drlhp.reward.model import RewardEnsemble, adapt_l2, preference_loss

OBS = (84, 84, 4)


def hand_loss(r1, r2, mu, eps=0.1):
    e1, e2 = math.exp(r1), math.exp(r2)
    p1 = (1 - eps) * e1 / (e1 + e2) + eps / 2
    p2 = (1 - eps) * e2 / (e1 + e2) + eps / 2
    return -(mu[0] * math.log(p1) + mu[1] * math.log(p2))


def test_loss_with_the_10_percent_term_matches_a_hand_computation():
    cases = [(2.0, -1.0, (1.0, 0.0)), (2.0, -1.0, (0.0, 1.0)), (0.3, 0.3, (0.5, 0.5)), (-4.0, 5.0, (0.5, 0.5)),
             (30.0, -30.0, (0.0, 1.0))]
    r1 = tf.constant([c[0] for c in cases])
    r2 = tf.constant([c[1] for c in cases])
    mu = tf.constant([c[2] for c in cases])
    got = preference_loss(r1, r2, mu, 0.1).numpy()
    want = [hand_loss(*c) for c in cases]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # The 10% term bounds the loss of a confident wrong answer: -log(0.05) ~ 3.0, not 60.
    assert got[-1] == pytest.approx(-math.log(0.05), rel=1e-4)


@pytest.fixture(scope="module")
def ensemble():
    return RewardEnsemble(OBS, RewardConfig(n_members=2), seed=0)


def _segments(rng, b, t=5):
    return rng.integers(0, 256, (b, t, *OBS), dtype=np.uint8)


def test_both_segments_share_dropout_masks(ensemble):
    """The same segment on both sides of a pair, in training mode: dropout is on (two calls differ)
    but the two sides get identical rewards, because they share one mask."""
    rng = np.random.default_rng(0)
    s = _segments(rng, 3)
    model = ensemble.members[0]
    r1, r2 = ensemble._pair_sums(model, tf.constant(s), tf.constant(s), training=True)
    # equal up to float rounding: the two sides sit at different places in one batch, and oneDNN's
    # reduction order there depends on the CPU (a 1-ulp difference seen on an AVX2-only AMD EPYC)
    np.testing.assert_allclose(r1.numpy(), r2.numpy(), rtol=1e-5, atol=1e-7)
    r1_again, _ = ensemble._pair_sums(model, tf.constant(s), tf.constant(s), training=True)
    assert not np.allclose(r1.numpy(), r1_again.numpy()), "dropout should be active in training mode"
    q1, q2 = ensemble._pair_sums(model, tf.constant(s), tf.constant(s), training=False)
    np.testing.assert_allclose(q1.numpy(), q2.numpy(), rtol=1e-5, atol=1e-7)


def test_both_segments_share_batch_norm_statistics():
    """Training mode without dropout: swapping the segments swaps the sums exactly, and segment 1's
    reward depends on segment 2 (one set of batch statistics over both), as one call on the pair. In
    float32: bfloat16 (auto's choice on some CPUs) rounds the two orders differently, beyond rtol 1e-4."""
    ens = RewardEnsemble(OBS, RewardConfig(n_members=1, dropout=0.0, bfloat16="off"), seed=1)
    rng = np.random.default_rng(1)
    a, b, c = _segments(rng, 2), _segments(rng, 2), _segments(rng, 2) // 4
    model = ens.members[0]
    ab = [x.numpy() for x in ens._pair_sums(model, tf.constant(a), tf.constant(b), training=True)]
    ba = [x.numpy() for x in ens._pair_sums(model, tf.constant(b), tf.constant(a), training=True)]
    np.testing.assert_allclose(ab[0], ba[1], rtol=1e-4)
    np.testing.assert_allclose(ab[1], ba[0], rtol=1e-4)
    ac = [x.numpy() for x in ens._pair_sums(model, tf.constant(a), tf.constant(c), training=True)]
    assert not np.allclose(ab[0], ac[0]), "segment 1 should be normalized with statistics over both segments"


def test_adapt_l2_keeps_the_validation_ratio_in_band():
    l2 = np.array([1e-3, 1e-3, 1e-3], np.float32)
    out = adapt_l2(l2, train_loss=np.array([1.0, 1.0, 1.0]), val_loss=np.array([2.0, 1.3, 1.0]))
    np.testing.assert_allclose(out, [1.1e-3, 1e-3, 1e-3 / 1.1], rtol=1e-5)


def test_weights_travel_and_rewards_are_normalized(ensemble):
    rng = np.random.default_rng(2)
    frames = rng.integers(0, 256, (64, *OBS), dtype=np.uint8)
    ensemble.update_normalization(frames)
    weights = ensemble.publish()
    other = RewardEnsemble(OBS, RewardConfig(n_members=2), seed=99)
    assert not np.allclose(other.predict(frames), ensemble.predict(frames))
    other.load_weights(weights)
    np.testing.assert_allclose(other.predict(frames), ensemble.predict(frames), rtol=1e-5, atol=1e-6)
    assert other.version == weights.version >= 1
    raw = other.predict(frames)
    z = (raw - other.norm_mean[:, None]) / other.norm_std[:, None]
    np.testing.assert_allclose(z.mean(axis=1), 0, atol=1e-4)
    np.testing.assert_allclose(z.std(axis=1), 1, rtol=1e-3)
    r = other.reward(frames)
    np.testing.assert_allclose(r, (0.05 * z).mean(axis=0), rtol=1e-4, atol=1e-6)
    assert r.std() <= 0.05 + 1e-6


def brighter_left_pairs(rng, b: int):
    """``b`` pairs of 3-step clips, the one with the brighter left half preferred: s1, s2, mu."""
    s1 = rng.integers(0, 60, (b, 3, *OBS), dtype=np.uint8)
    s2 = rng.integers(0, 60, (b, 3, *OBS), dtype=np.uint8)
    left = rng.random(b) < 0.5
    s1[left, :, :, :42] += 150
    s2[~left, :, :, :42] += 150
    return s1, s2, np.stack([left, ~left], axis=1).astype(np.float32)


def test_the_ensemble_learns_a_preference():
    """Segments with a brighter left half are preferred: a few steps of training reach accuracy 1."""
    cfg = RewardConfig(n_members=2, lr=1e-3, batch_size=8)
    ens = RewardEnsemble(OBS, cfg, seed=3)
    rng = np.random.default_rng(3)
    pairs = lambda b: brighter_left_pairs(rng, b)  # noqa: E731
    vs1, vs2, vmu = pairs(32)
    _, acc_before = ens.evaluate(vs1, vs2, vmu)
    for _ in range(30):
        s1, s2, mu = pairs(cfg.batch_size)
        ens.train_step(np.stack([s1, s1]), np.stack([s2, s2]), np.stack([mu, mu]), np.zeros(2, np.float32))
    loss, acc = ens.evaluate(vs1, vs2, vmu)
    assert acc.min() == 1.0, (acc_before, acc)
    assert loss.max() < hand_loss(0.0, 0.0, (1.0, 0.0))  # better than indifference


def test_vector_observations_use_an_mlp():
    ens = RewardEnsemble((6,), replace(RewardConfig(), n_members=1), seed=0)
    assert ens.predict(np.zeros((4, 6), np.uint8)).shape == (1, 4)
    assert not any("conv" in layer.name for layer in ens.members[0].layers)


def test_preference_probs_are_each_members_sigmoid_of_the_sums_without_overflow(recwarn):
    """--query_selection variance scores candidate pairs by each member's P[s1 > s2] = sigmoid(sum r(s1) - sum
    r(s2)); over long clips (a Hopper's 188 steps) the raw sums can differ by hundreds, where exp overflowed."""
    ens = RewardEnsemble((6,), replace(RewardConfig(), n_members=2), seed=0)
    s1, s2 = np.zeros((3, 188, 6), np.float32), np.ones((3, 188, 6), np.float32)
    per_step = np.array([[0.01, 1.0, 5.0], [-0.01, -1.0, -5.0]])  # (member, pair): r(s1) - r(s2) per step
    ens.predict = lambda x: np.stack([np.concatenate([np.repeat(m, 188), np.zeros(3 * 188)]) for m in per_step])
    probs = ens.preference_probs(s1, s2)
    d = per_step * 188
    assert probs.shape == (2, 3) and np.all(np.isfinite(probs))
    np.testing.assert_allclose(probs, 1 / (1 + np.exp(-np.clip(d, -700, 700))), rtol=1e-6, atol=1e-12)
    assert probs[0, 2] == 1.0 and probs[1, 2] < 1e-12 and d[0, 2] == 940
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_pretraining_stopped_midway_resumes_with_the_steps_left(tmp_path):
    """A run stopped while pretraining (Pong's 200 epochs take an hour here) finishes the pretraining
    when resumed, instead of starting the policy on a half-trained predictor."""
    import threading

    from drlhp.processes.messages import Preference, Segment
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    rng = np.random.default_rng(0)
    db = PrefDB(max_prefs=100, seed=0)

    def seg(i):
        obs = rng.integers(0, 255, (3, 6), dtype=np.uint8)
        return Segment(obs, np.zeros((3, 2, 2), np.uint8), np.full(3, float(i % 3), np.float32), "test", 0, i)

    for i in range(40):
        db.add(Preference(seg(2 * i), seg(2 * i + 1), (1.0, 0.0)))
    cfg = RewardConfig(n_members=1, batch_size=4, eval_interval=5)
    first = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    calls = iter(range(10_000))
    first.pretrain(2, log=lambda s: None, should_stop=lambda: next(calls) >= 3)  # stopped after 3 steps
    planned = math.ceil(2 * db.n_train / cfg.batch_size)
    assert first.steps == 3 and first.pretrain_target == planned and first.pretraining_unfinished
    first.save(tmp_path / "p.npz")

    again = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    again.load(tmp_path / "p.npz")
    assert again.steps == 3 and again.pretraining_unfinished
    lines = []
    again.pretrain(2, log=lines.append)
    assert again.steps == planned and not again.pretraining_unfinished
    assert "resumed" in lines[0] and f"{planned - 3} steps left" in lines[0]
    again.save(tmp_path / "p.npz")
    done = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    done.load(tmp_path / "p.npz")
    assert not done.pretraining_unfinished  # a finished pretraining is not repeated on resume


def test_bootstrap_counts_follow_the_training_entries():
    """Each training entry keeps its Poisson counts while it lives; new entries get draws, evicted ones
    leave, and a removal from the middle (the review tool) is followed too."""
    import threading

    from drlhp.processes.messages import Preference, Segment
    from drlhp.reward.pref_db import PrefDB
    from drlhp.reward.trainer import RewardTrainer

    rng = np.random.default_rng(0)

    def seg(i):
        return Segment(rng.integers(0, 255, (3, 6), dtype=np.uint8), np.zeros((3, 2, 2), np.uint8),
                       np.zeros(3, np.float32), "test", 0, i)

    db = PrefDB(max_prefs=30, val_fraction=0.0, seed=0)
    trainer = RewardTrainer((6,), RewardConfig(n_members=3, batch_size=8), db, threading.Lock(), seed=0)
    for i in range(20):
        db.add(Preference(seg(2 * i), seg(2 * i + 1), (1.0, 0.0)))
    trainer._sync_bootstrap(db.train)
    before = dict(zip(trainer._boot_orders.tolist(), trainer._boot_counts.tolist()))
    assert list(before) == list(range(20))
    for i in range(20, 40):  # 10 evicted at the head, 20 added
        db.add(Preference(seg(2 * i), seg(2 * i + 1), (1.0, 0.0)))
    db.remove(25)
    trainer._sync_bootstrap(db.train)
    orders = trainer._boot_orders.tolist()
    assert orders == [e.order for e in db.train] and 25 not in orders and orders[0] == 10
    for o, c in zip(orders, trainer._boot_counts.tolist()):
        if o in before:
            assert before[o] == c
    idx = trainer._member_indices()
    assert idx.shape == (3, 8) and idx.min() >= 0 and idx.max() < db.n_train
    for m in range(3):  # only entries in the member's own sample are drawn
        assert (trainer._boot_counts[idx[m], m] > 0).all()


def test_normalization_moves_by_its_momentum():
    """The first statistics replace the defaults; later ones move mean and variance by the momentum,
    so one publication cannot jump the policy's reward offset."""
    ens = RewardEnsemble((6,), RewardConfig(n_members=2, dropout=0.0, batchnorm=False), seed=0)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, (200, 6), dtype=np.uint8)
    b = rng.integers(150, 255, (200, 6), dtype=np.uint8)
    ens.update_normalization(a, momentum=0.1)
    raw_a, raw_b = ens.predict(a), ens.predict(b)
    np.testing.assert_allclose(ens.norm_mean, raw_a.mean(axis=1), rtol=1e-5)
    ens.update_normalization(b, momentum=0.1)
    np.testing.assert_allclose(ens.norm_mean, 0.9 * raw_a.mean(axis=1) + 0.1 * raw_b.mean(axis=1), rtol=1e-4)
    np.testing.assert_allclose(np.square(ens.norm_std), 0.9 * raw_a.var(axis=1) + 0.1 * raw_b.var(axis=1),
                               rtol=1e-3)
    ens.update_normalization(b, momentum=1.0)
    np.testing.assert_allclose(ens.norm_mean, raw_b.mean(axis=1), rtol=1e-5)


def test_clip_bounds_each_members_normalized_reward():
    """With clip c, no frame is paid more than c standard deviations (times norm_std) from the mean, however
    far the raw output of a frame outside the normalization set lies; inside the set nothing changes."""
    cfg = RewardConfig(n_members=2, dropout=0.0, batchnorm=False)
    plain = RewardEnsemble((6,), cfg, seed=0)
    clipped = RewardEnsemble((6,), replace(cfg, clip=2.0), seed=0)
    rng = np.random.default_rng(0)
    usual = rng.integers(100, 110, (300, 6), dtype=np.uint8)  # a narrow set: a small std of the raw output
    far = np.concatenate([rng.integers(0, 5, (20, 6)), rng.integers(250, 256, (20, 6))]).astype(np.uint8)
    for ens in (plain, clipped):
        ens.update_normalization(usual)
    assert np.abs(plain.reward(far)).max() > 2.0 * cfg.norm_std  # unclipped: far frames are paid more
    assert np.abs(clipped.reward(far)).max() <= 2.0 * cfg.norm_std + 1e-6
    z = (plain.predict(usual) - plain.norm_mean[:, None]) / plain.norm_std[:, None]
    inside = (np.abs(z) < 2.0).all(axis=0)  # frames no member clips
    assert inside.mean() > 0.5
    np.testing.assert_allclose(clipped.reward(usual)[inside], plain.reward(usual)[inside], rtol=1e-5)


def _vector_db(n_prefs: int, seed: int = 0, t: int = 3):
    """A PrefDB of ``n_prefs`` pairs of (t, 6) uint8 clips, the larger sum of feature 0 preferred (ties
    none): a vector-observation predictor (an MLP) learns it in a few hundred steps."""
    from drlhp.processes.messages import Preference, Segment
    from drlhp.reward.pref_db import PrefDB

    rng = np.random.default_rng(seed)
    db = PrefDB(max_prefs=10 * n_prefs, seed=seed)

    def seg(i):
        obs = rng.integers(0, 255, (t, 6), dtype=np.uint8)
        return Segment(obs, np.zeros((t, 2, 2), np.uint8), obs[:, 0].astype(np.float32), "test", 0, i)

    for i in range(n_prefs):
        a, b = seg(2 * i), seg(2 * i + 1)
        ra, rb = a.true_rewards.sum(), b.true_rewards.sum()
        db.add(Preference(a, b, (1.0, 0.0) if ra > rb else (0.0, 1.0) if rb > ra else (0.5, 0.5)))
    return db


def test_evaluation_runs_each_member_on_its_own_training_pairs_only():
    """The validation pairs go through every member; each member's training pairs (from its own bootstrap
    sample, for L2) through that member alone, not through all of them (M times the work); and a member
    alone computes what it computes among all."""
    import threading

    from drlhp.reward.trainer import RewardTrainer

    db = _vector_db(60)
    trainer = RewardTrainer((6,), RewardConfig(n_members=3, batch_size=8), db, threading.Lock(), seed=0)
    ens, calls = trainer.ensemble, []
    real = ens.evaluate_pairs

    def spy(s1, s2, mu, batch_size=None, member=None):
        out = real(s1, s2, mu, batch_size, member)
        calls.append((len(mu), member, out[0].shape[0]))
        return out

    ens.evaluate_pairs = spy
    metrics = trainer.evaluate(max_pairs=48)
    val_calls = [c for c in calls if c[1] is None]
    assert val_calls == [(min(48, db.n_val), None, 3)]  # the validation pairs: all members, once
    own = [c for c in calls if c[1] is not None]
    assert [c[1] for c in own] == [0, 1, 2] and all(c[2] == 1 and 1 <= c[0] <= 16 for c in own)
    assert sum(c[0] * c[2] for c in calls) == 3 * val_calls[0][0] + sum(c[0] for c in own)
    assert {f"reward/train_loss_{m}" for m in range(3)} <= set(metrics)
    s1, s2, mu = db.batch("train", np.arange(10))
    loss_all, correct_all = real(s1, s2, mu)
    for m in range(3):
        loss_m, correct_m = real(s1, s2, mu, member=m)
        np.testing.assert_allclose(loss_m[0], loss_all[m], rtol=1e-5, atol=1e-6)
        assert (correct_m[0] == correct_all[m]).all()
    # chunks by frames: a chunk size changes nothing
    np.testing.assert_allclose(real(s1, s2, mu, batch_size=3)[0], loss_all, rtol=1e-5, atol=1e-6)


def test_the_validation_pairs_stay_the_same_while_the_validation_set_does():
    """Successive evaluations on an unchanged validation set (all of pretraining) measure the same pairs, so
    the accuracy curve and the early stop follow the predictor, not the draw; a changed set is drawn anew."""
    import threading

    from drlhp.processes.messages import Preference
    from drlhp.reward.trainer import RewardTrainer

    db = _vector_db(80)
    trainer = RewardTrainer((6,), RewardConfig(n_members=1, batch_size=8), db, threading.Lock(), seed=0)
    first = trainer._val_subset(10).copy()
    assert len(first) == 10 == len(set(first.tolist())) and first.max() < db.n_val
    trainer.train_step()
    trainer.evaluate(max_pairs=10)
    assert (trainer._val_subset(10) == first).all()
    extra = _vector_db(40, seed=1)  # more labels arrive: the validation set changes
    n_val = db.n_val
    for e in extra.val:
        db.add(Preference(extra.segment(e.id1), extra.segment(e.id2), e.mu))
    assert db.n_val > n_val
    again = trainer._val_subset(10)
    assert len(again) == 10 and again.max() < db.n_val


def _scripted(trainer, accuracies):
    """Make ``trainer.evaluate`` report the given validation accuracies, one per evaluation."""
    it = iter(accuracies)

    def evaluate(max_pairs=256):
        trainer.last_eval = {"reward/val_accuracy": next(it)}
        return trainer.last_eval

    trainer.evaluate = evaluate


def test_pretraining_stops_once_the_validation_accuracy_stops_rising(tmp_path):
    """--reward_pretrain_patience P: stop after P evaluations in a row without a new best that beats the old by
    --reward_pretrain_min_gain; evaluations without an accuracy (all ties) do not count; the epochs stay the
    cap; the stop is final (a resume does not pretrain again) and the rule's state survives a checkpoint."""
    import threading

    from drlhp.reward.trainer import RewardTrainer

    db = _vector_db(60)
    cfg = RewardConfig(n_members=1, batch_size=4, eval_interval=2, pretrain_patience=3, pretrain_min_gain=0.01)
    trainer = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    # at step:         2    4    6      8    10     12   14    16     18
    _scripted(trainer, [0.5, 0.6, 0.605, nan, 0.609, 0.7, 0.70, 0.705, 0.709, 0.9])
    lines, seen = [], []
    trainer.pretrain(50, log=lines.append, on_eval=lambda step, m: seen.append((step, m)))
    # 0.6 at step 4 is the best; 0.605 and 0.609 are below 0.6 + 0.01, NaN is skipped: then 0.7 at step 12
    # is a new best, and 0.70, 0.705, 0.709 (3 evaluations without 0.71) stop it at step 18
    assert trainer.steps == 18 and trainer.pretrain_target == 18 and not trainer.pretraining_unfinished
    assert (trainer.pretrain_best, trainer.pretrain_best_step) == (0.7, 12)
    assert "stops once the best validation accuracy has not risen by 0.01 in 3 evaluations" in lines[0]
    assert "pretraining stopped at step 18" in lines[-1] and "0.700 at step 12" in lines[-1]
    assert [s for s, _ in seen] == list(range(2, 19, 2))  # the accuracy against steps, every evaluation
    assert seen[-1][1]["reward/pretrain_best_val_accuracy"] == 0.7
    trainer.save(tmp_path / "p.npz")
    again = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    again.load(tmp_path / "p.npz")
    assert not again.pretraining_unfinished
    assert (again.pretrain_best, again.pretrain_best_step, again.pretrain_since_best) == (0.7, 12, 3)

    # patience 0 (the default): the epochs' steps, whatever the accuracy does
    plain = RewardTrainer((6,), replace(cfg, pretrain_patience=0), db, threading.Lock(), seed=0)
    _scripted(plain, [0.5] * 100)
    plain.pretrain(2, log=lambda s: None)
    assert plain.steps == math.ceil(2 * db.n_train / cfg.batch_size)


nan = float("nan")


def test_early_stopped_pretraining_still_teaches():
    """The rule on a real predictor: an MLP learning which clip has the larger sum of a feature stops well
    before its cap of 100 epochs, and only once it predicts the validation labels."""
    import threading

    from drlhp.reward.trainer import RewardTrainer

    db = _vector_db(200)
    cfg = RewardConfig(n_members=1, batch_size=16, lr=1e-3, dropout=0.0, batchnorm=False, eval_interval=10,
                       pretrain_patience=5, pretrain_min_gain=0.005)
    trainer = RewardTrainer((6,), cfg, db, threading.Lock(), seed=0)
    trainer.pretrain(100, log=lambda s: None)
    cap = math.ceil(100 * db.n_train / cfg.batch_size)
    assert trainer.steps < cap / 4, (trainer.steps, cap)
    assert trainer.pretrain_best >= 0.85 and trainer.last_eval["reward/val_accuracy"] >= 0.8, trainer.last_eval


def test_dropout_follows_the_first_n_convolutions():
    """--reward_dropout_layers N: dropout after the first N of the 4 convolutions (paper 4, the original
    reproduction 3), the convolutions themselves unchanged."""
    from drlhp.reward.networks import PairedDropout, reward_network

    def dropouts(n):
        model = reward_network((84, 84, 4), seed=0, dropout=0.5, batchnorm=False, dropout_layers=n)
        return [type(layer).__name__ for layer in model.layers
                if isinstance(layer, PairedDropout) or type(layer).__name__ == "Conv2D"]

    assert dropouts(4) == ["Conv2D", "PairedDropout"] * 4
    assert dropouts(3) == ["Conv2D", "PairedDropout"] * 3 + ["Conv2D"]
    assert dropouts(0) == ["Conv2D"] * 4


def test_a_bfloat16_predictor_computes_as_float32_does_and_learns():
    """--reward_bfloat16: the same weights give rewards within bfloat16's precision of float32's (8 bits of
    mantissa: well under 5% of the spread), in float32, with float32 weights; and it learns the preference
    of test_the_ensemble_learns_a_preference as float32 does."""
    cfg = RewardConfig(n_members=1, lr=1e-3, batch_size=8, batchnorm=False, dropout=0.0)
    f32 = RewardEnsemble(OBS, replace(cfg, bfloat16="off"), seed=3)
    b16 = RewardEnsemble(OBS, replace(cfg, bfloat16="on"), seed=3)
    assert (f32.precision.bfloat16, b16.precision.bfloat16) == (False, True)
    b16.load_weights(f32.publish())
    assert all(v.dtype == "float32" for v in b16.members[0].trainable_variables)
    rng = np.random.default_rng(3)
    obs = rng.integers(0, 256, (32, *OBS), dtype=np.uint8)
    r32, r16 = f32.predict(obs), b16.predict(obs)
    assert r16.dtype == np.float32 and r16.shape == r32.shape
    assert np.abs(r16 - r32).max() < 0.05 * (r32.max() - r32.min()) + 1e-6
    assert not np.array_equal(r16, r32)  # computed in bfloat16 indeed
    pairs = lambda b: brighter_left_pairs(rng, b)  # noqa: E731
    vs1, vs2, vmu = pairs(32)
    for _ in range(30):
        s1, s2, mu = pairs(cfg.batch_size)
        losses, _ = b16.train_step(s1[None], s2[None], mu[None], np.zeros(1, np.float32))
        assert losses.dtype == np.float32 and np.isfinite(losses).all()
    loss, acc = b16.evaluate(vs1, vs2, vmu)
    assert acc.min() == 1.0 and loss.max() < hand_loss(0.0, 0.0, (1.0, 0.0))

"""The reward trainer's batch prefetch (issue 58, drlhp.reward.prefetch): each step's batch is assembled in a
background thread while the previous step's TensorFlow work runs.

    order    with a fixed database and seed, the batches trained on (by train_step, or by pretrain with its
             evaluations) are exactly those the bootstrap samples draw synchronously, in the documented order
             of self.rng's draws (batch k + 1 before the evaluation after step k)
    arrival  a preference added between steps reaches a later batch; the batch held was copied out before
             (the pair it holds may be evicted meanwhile); a database emptied leaves NaN, as before
    errors   an exception in the prefetch thread is raised by the next train_step (or close), once
    close    close joins the thread, waiting for the lock another thread holds; load drops a held batch
"""
from __future__ import annotations

import copy
import threading
import time

import numpy as np
import pytest

from drlhp.config import RewardConfig
from drlhp.processes.messages import Preference, Segment
from drlhp.reward.pref_db import PrefDB

CFG = RewardConfig(n_members=2, batch_size=4, eval_interval=2, dropout=0.0)


def _db(n_prefs: int, seed: int = 0, max_prefs: int = 1000, val_fraction: float = 0.3, mu=(1.0, 0.0)) -> PrefDB:
    db = PrefDB(max_prefs=max_prefs, val_fraction=val_fraction, seed=seed)
    rng = np.random.default_rng(seed)
    for i in range(n_prefs):
        db.add(Preference(_seg(rng, 2 * i), _seg(rng, 2 * i + 1), mu))
    return db


def _seg(rng, step: int) -> Segment:
    return Segment(rng.integers(0, 255, (3, 6), dtype=np.uint8), np.zeros((3, 2, 2), np.uint8),
                   np.zeros(3, np.float32), "test", 0, step)


def _trainer(db: PrefDB, cfg: RewardConfig = CFG, seed: int = 0):
    from drlhp.reward.trainer import RewardTrainer

    return RewardTrainer((6,), cfg, db, threading.Lock(), seed=seed)


def _record(trainer) -> list:
    """Spy on the trainer: each TensorFlow step's batch (a copy) and whether the next one was then being
    prefetched, as ("step", batch, pending); each evaluation as ("eval", None, None)."""
    events = []
    real_step, real_eval = trainer.ensemble.train_step, trainer.evaluate

    def step(s1, s2, mu, l2):
        events.append(("step", (s1.copy(), s2.copy(), mu.copy()), trainer._prefetch.pending))
        return real_step(s1, s2, mu, l2)

    def evaluate(*a, **k):
        events.append(("eval", None, None))
        return real_eval(*a, **k)

    trainer.ensemble.train_step, trainer.evaluate = step, evaluate
    return events


def _reference(db: PrefDB, events: list, cfg: RewardConfig = CFG):
    """The batches a synchronous trainer of the same seed draws (``_sync_bootstrap`` then ``_member_indices``,
    gathered) in the documented order: batch 1, then at each step the next batch, at each evaluation its draws.
    Returns them and that trainer (its RNG as it ends)."""
    ref = _trainer(db, cfg)

    def draw():
        ref._sync_bootstrap(db.train)
        return db.batches("train", ref._member_indices())

    batches = []
    for kind, _, _ in events:
        if kind == "step":
            if not batches:
                batches.append(draw())
            batches.append(draw())  # the one prefetched while this step computes
        else:
            ref.evaluate()
    return batches, ref


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _assert_trained_on_the_reference(trainer, db, events):
    steps = [batch for kind, batch, _ in events if kind == "step"]
    expected, ref = _reference(db, events)
    assert len(expected) == len(steps) + 1  # the last one held, never trained on
    assert all(_same(got, want) for got, want in zip(steps, expected))
    assert not all(_same(steps[0], s) for s in steps[1:])  # the draws do differ from step to step
    assert all(pending for kind, _, pending in events if kind == "step")  # the next batch was under way
    trainer._prefetch.wait()
    assert trainer.rng.bit_generator.state == ref.rng.bit_generator.state
    assert (trainer._boot_counts == ref._boot_counts).all()


def test_train_steps_and_evaluations_draw_the_batches_a_synchronous_trainer_draws_in_order():
    db = _db(30)
    trainer = _trainer(db)
    events = _record(trainer)
    for k in range(1, 8):
        trainer.train_step()
        if k % 3 == 0:
            trainer.evaluate()
    assert [kind for kind, _, _ in events].count("eval") == 2 and trainer.steps == 7
    _assert_trained_on_the_reference(trainer, db, events)
    trainer.close()


def test_pretraining_draws_the_batches_a_synchronous_trainer_draws_in_order():
    db = _db(30)
    trainer = _trainer(db)
    events = _record(trainer)
    trainer.pretrain(1, log=lambda s: None)  # ceil(n_train / 4) steps, evaluated every 2 and after the last
    assert trainer.steps == -(-db.n_train // CFG.batch_size) and [k for k, _, _ in events].count("eval") >= 3
    _assert_trained_on_the_reference(trainer, db, events)
    trainer.close()


def test_a_preference_added_between_steps_reaches_a_later_batch_and_the_held_one_survives_eviction():
    """max_prefs 1: the new preference evicts the old one, so every later batch is the new pair alone; the
    batch prefetched before it came (the old pair, copied out of the database) is trained on first."""
    db = _db(1, max_prefs=1, val_fraction=0.0, mu=(1.0, 0.0))
    trainer = _trainer(db)
    events = _record(trainer)
    trainer.train_step()
    trainer._prefetch.wait()  # batch 2 drawn: the new preference comes after it
    rng = np.random.default_rng(9)
    with trainer.lock:
        db.add(Preference(_seg(rng, 100), _seg(rng, 101), (0.0, 1.0)))
    assert db.n_train == 1 and db.train[0].mu == (0.0, 1.0)
    trainer.train_step()
    trainer.train_step()
    mus = [batch[2] for kind, batch, _ in events if kind == "step"]
    assert (mus[0] == [1, 0]).all() and (mus[1] == [1, 0]).all()  # batch 2 was drawn before it came
    assert (mus[2] == [0, 1]).all()
    assert trainer._boot_orders.tolist() == [db.train[0].order]
    trainer.close()


def test_a_database_emptied_between_steps_trains_the_held_batch_then_returns_nan():
    db = _db(1, max_prefs=5, val_fraction=0.0)
    trainer = _trainer(db)
    trainer.train_step()
    with trainer.lock:
        db.remove(db.train[0].order)
    losses, _ = trainer.train_step()  # the batch held, drawn before the removal
    assert np.isfinite(losses).all() and trainer.steps == 2
    losses, accs = trainer.train_step()  # the prefetch found nothing; nor does a draw here
    assert np.isnan(losses).all() and np.isnan(accs).all() and trainer.steps == 2
    rng = np.random.default_rng(3)
    with trainer.lock:
        db.add(Preference(_seg(rng, 0), _seg(rng, 1), (0.5, 0.5)))
    losses, _ = trainer.train_step()
    assert np.isfinite(losses).all() and trainer.steps == 3
    trainer.close()


def test_an_error_in_the_prefetch_thread_is_raised_by_the_next_step_once():
    db = _db(20)
    trainer = _trainer(db)
    real, calls = db.batches, []

    def failing(split, indices):
        calls.append(threading.current_thread().name)
        if len(calls) == 2:  # the first prefetch
            raise RuntimeError("gather failed")
        return real(split, indices)

    db.batches = failing
    trainer.train_step()
    trainer.evaluate()  # waits for the prefetch; the error stays for the step that wanted the batch
    with pytest.raises(RuntimeError, match="gather failed"):
        trainer.train_step()
    assert trainer.steps == 1 and calls[1] == "batch-prefetch"
    trainer.train_step()  # raised once: this step draws its own batch and goes on
    assert trainer.steps == 2
    trainer.close()
    calls.clear()
    trainer.train_step()
    with pytest.raises(RuntimeError, match="gather failed"):
        trainer.close()  # a failed prefetch of a step never taken is not swallowed either
    trainer.close()  # nothing left: a second close is quiet


def test_close_joins_the_prefetch_thread_after_the_lock_is_released():
    """The prefetch waits for the lock another thread holds (the preference drain adds under it); close waits for
    the prefetch, and returns once the lock is free and the draw done."""
    db = _db(20)
    trainer = _trainer(db)
    trainer.train_step()
    trainer._prefetch.wait()
    held, released = threading.Event(), threading.Event()

    def hold():
        with trainer.lock:
            held.set()
            time.sleep(0.3)
            released.set()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    trainer.train_step()  # on the batch held; the next one's draw waits for the lock
    assert trainer._prefetch.pending and not released.is_set()
    trainer.close()
    assert released.is_set() and not trainer._prefetch.pending
    assert not [t for t in threading.enumerate() if t.name == "batch-prefetch"]
    holder.join()


def test_load_drops_the_held_batch_and_the_next_step_draws_afresh(tmp_path):
    db = _db(30)
    trainer = _trainer(db)
    events = _record(trainer)
    trainer.train_step()
    trainer.save(tmp_path / "p.npz")
    trainer.train_step()
    trainer._prefetch.wait()
    stale = trainer._prefetch._batch
    trainer.load(tmp_path / "p.npz")
    assert not trainer._prefetch.pending and trainer.steps == 1
    state = copy.deepcopy(trainer.rng.bit_generator.state)
    boot = trainer._boot_orders.copy(), trainer._boot_counts.copy()
    trainer.train_step()
    trainer.close()
    trainer.rng.bit_generator.state, (trainer._boot_orders, trainer._boot_counts) = state, boot
    fresh = trainer._draw_batch()  # drawn synchronously from the RNG as it stood after load
    got = events[-1][1]
    assert _same(got, fresh) and not _same(got, stale)

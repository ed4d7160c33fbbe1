"""Segments of a Box-action env (issue 29): float32 (T, D) observations and empty (T, 0, 0) frames, through
the message check, the compact wire form, and the preference database in memory and on disk."""
import pickle

import numpy as np
import pytest

from drlhp.processes.messages import MU_LEFT, MU_RIGHT, Preference, Segment
from drlhp.reward.pref_db import PrefDB
from drlhp.reward.pref_db_files import PrefDBError

T, D = 6, 5


def float_segment(step: int, t: int = T, d: int = D) -> Segment:
    rng = np.random.default_rng(step)
    obs = (rng.normal(size=(t, d)) * np.logspace(-2, 2, d)).astype(np.float32)
    return Segment(obs, np.zeros((t, 0, 0), np.uint8), rng.normal(size=t).astype(np.float32), "Hopper-v5",
                   step % 2, step).check()


def uint8_segment(step: int) -> Segment:
    obs = np.random.default_rng(step).integers(0, 256, (T, D), dtype=np.uint8)
    return Segment(obs, np.zeros((T, 0, 0), np.uint8), np.ones(T, np.float32), "CartPole-v1", 0, step).check()


def test_segment_check_accepts_float_vectors_and_empty_frames_only():
    float_segment(0)
    bad_obs = [np.zeros((T, D), np.float64), np.zeros((T, 2, 2), np.float32), np.zeros((T,), np.float32),
               np.zeros((T + 1, D), np.float32), np.zeros((T, D), np.int32)]
    for obs in bad_obs:
        with pytest.raises(ValueError, match="Segment.obs must be") as e:
            Segment(obs, np.zeros((T, 0, 0), np.uint8), np.zeros(T, np.float32), "X", 0, 0).check()
        assert "\n" not in str(e.value)
    for frames in (np.zeros((T, 0, 3), np.uint8), np.zeros((T, 4, 0), np.uint8), np.zeros((T, 0, 0), np.float32),
                   np.zeros((T + 1, 0, 0), np.uint8)):
        with pytest.raises(ValueError, match="Segment.frames"):
            Segment(np.zeros((T, D), np.float32), frames, np.zeros(T, np.float32), "X", 0, 0).check()


def test_segment_ids_are_stable_and_preferences_want_one_dtype():
    a = float_segment(1)
    assert a.id == float_segment(1).id and a.id != float_segment(2).id
    Preference(a, float_segment(2), MU_LEFT).check()
    with pytest.raises(ValueError, match="differ in shape or dtype"):
        Preference(a, uint8_segment(3), MU_LEFT).check()


def test_compact_pickling_round_trips_a_float_segment_exactly(monkeypatch):
    from multiprocessing.reduction import ForkingPickler

    from drlhp.processes.segment_wire import compact_nbytes_sent, register_compact_pickling

    # registration is process-wide: undone after this test (other tests measure pickling without it)
    monkeypatch.setattr(ForkingPickler, "_extra_reducers", dict(ForkingPickler._extra_reducers))
    register_compact_pickling()
    original = float_segment(7)
    before = compact_nbytes_sent()
    wire = ForkingPickler.dumps(original)
    assert compact_nbytes_sent() - before == original.obs.nbytes + original.true_rewards.nbytes  # the compact path
    back = pickle.loads(wire)
    assert isinstance(back, Segment) and back.id == original.id
    for name in ("obs", "frames", "true_rewards"):
        a, b = getattr(original, name), getattr(back, name)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def _float_db(n: int, **kw) -> PrefDB:
    db = PrefDB(seed=3, **kw)
    for i in range(n):
        assert db.add(Preference(float_segment(2 * i), float_segment(2 * i + 1), MU_LEFT if i % 2 else MU_RIGHT))
    return db


def test_float_segments_add_batch_and_refuse_the_other_dtype():
    db = _float_db(12)
    assert db.obs_dtype == np.float32 and db.n_obs_rows == 24 * T
    seg = float_segment(4)
    np.testing.assert_array_equal(db.segment_obs(seg.id), seg.obs)
    back = db.segment(seg.id)
    assert back.frames.shape == (T, 0, 0) and back.obs.dtype == np.float32 and back.id == seg.id
    o1, o2, mu = db.batches("train", np.zeros((3, 4), np.int64))
    assert o1.shape == (3, 4, T, D) and o1.dtype == np.float32 and o2.dtype == np.float32 and mu.shape == (3, 4, 2)
    rows = db.obs_rows()
    assert rows.shape == (24 * T, D) and rows.dtype == np.float32
    np.testing.assert_allclose(np.sort(rows[:, 0]), np.sort(np.concatenate(
        [float_segment(s).obs[:, 0] for s in range(24)])))
    assert db.nbytes >= 24 * T * D * 4
    with pytest.raises(ValueError, match="holds float32 observations, got uint8") as e:
        db.add(Preference(uint8_segment(100), uint8_segment(101), MU_LEFT))
    assert "\n" not in str(e.value)
    u = PrefDB()
    u.add(Preference(uint8_segment(1), uint8_segment(2), MU_LEFT))
    with pytest.raises(ValueError, match="holds uint8 observations, got float32"):
        u.add(Preference(float_segment(1), float_segment(2), MU_LEFT))


def test_float_database_saves_appends_and_loads_without_pickle(tmp_path):
    path = tmp_path / "prefs.npz"
    db = _float_db(10, max_prefs=50)
    db.save(path)
    db.add(Preference(float_segment(500), float_segment(501), MU_LEFT))  # an appending save: a second chunk
    db.remove(db.train[0].order)
    db.save(path)
    for f in [path, *sorted((tmp_path / "prefs_chunks").glob("*.npz"))]:
        with np.load(f, allow_pickle=False) as z:  # raises if any array needed pickle
            [z[k] for k in z.files]
    loaded = PrefDB.load(path)
    assert loaded.obs_dtype == np.float32 and len(loaded) == len(db)
    for split in ("train", "val"):
        assert loaded.entries(split) == db.entries(split)
    for e in db.train + db.val:
        for sid in (e.id1, e.id2):
            a, b = db.segment(sid), loaded.segment(sid)
            assert b.obs.dtype == np.float32 and np.array_equal(a.obs, b.obs) and b.frames.shape == (T, 0, 0)
            assert np.array_equal(a.true_rewards, b.true_rewards) and b.id == sid
    o1, _, _ = loaded.batch("train", np.arange(loaded.n_train))
    np.testing.assert_array_equal(o1, db.batch("train", np.arange(db.n_train))[0])


def test_a_segment_meta_without_a_dtype_means_uint8_and_a_bad_dtype_is_refused(tmp_path):
    from drlhp.records import npz_json

    path = tmp_path / "prefs.npz"
    db = PrefDB(seed=0)
    db.add(Preference(uint8_segment(1), uint8_segment(2), MU_LEFT))
    db.save(path)
    chunk = next((tmp_path / "prefs_chunks").glob("*.npz"))

    def rewrite(edit):
        arrays, meta = npz_json.read(chunk, "chunk")
        for m in meta["segments"]:
            edit(m)
        npz_json.write(chunk, {k: v for k, v in arrays.items() if k != "meta"}, meta)

    rewrite(lambda m: m.pop("obs_dtype"))  # as written before float segments
    old = PrefDB.load(path)
    assert old.obs_dtype == np.uint8 and old.segment(uint8_segment(1).id).obs.dtype == np.uint8
    rewrite(lambda m: m.update(obs_dtype="float64"))
    with pytest.raises(PrefDBError, match="float64") as e:
        PrefDB.load(path)
    assert "\n" not in str(e.value)

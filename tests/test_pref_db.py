"""PrefDB: bound, deduplication, train/val split, save/load round trip, appending saves, compaction,
format 1 files, corrupt files, atomic save, frame-stack storage, a MuJoCo clip's recorded states."""
import json
import shutil
import zlib

import numpy as np
import pytest

from drlhp.processes.messages import MU_EQUAL, MU_LEFT, MU_RIGHT, Preference, Segment
from drlhp.reward.pref_db import PrefDB
from drlhp.reward.pref_db_files import PrefDBDamaged, PrefDBError, chunks_dir

T = 5


def make_segment(step: int, seed: int | None = None) -> Segment:
    rng = np.random.default_rng(step if seed is None else seed)
    obs = rng.integers(0, 256, (T, 8, 8, 4), dtype=np.uint8)
    return Segment(obs, obs[..., -1].copy(), rng.normal(size=T).astype(np.float32), "Pong", step % 3, step)


def make_pref(i: int, mu=MU_LEFT) -> Preference:
    """Pref i compares two fresh segments of steps 2i and 2i + 1."""
    return Preference(make_segment(2 * i), make_segment(2 * i + 1), mu)


def assert_same_db(a: PrefDB, b: PrefDB) -> None:
    for split in ("train", "val"):
        assert a.entries(split) == b.entries(split)
    assert a.n_segments == b.n_segments and a.nbytes == b.nbytes
    for e in a.train + a.val:
        for sid in (e.id1, e.id2):
            sa, sb = a.segment(sid), b.segment(sid)
            assert sa.id == sid and sb.id == sid
            np.testing.assert_array_equal(sa.obs, sb.obs)
            np.testing.assert_array_equal(sa.frames, sb.frames)
            np.testing.assert_array_equal(sa.true_rewards, sb.true_rewards)
            assert (sa.env_id, sa.worker, sa.step) == (sb.env_id, sb.worker, sb.step)
            assert (sa.states is None) == (sb.states is None)
            if sa.states is not None:
                np.testing.assert_array_equal(sa.states, sb.states)
            assert (sa.falls is None) == (sb.falls is None)
            if sa.falls is not None:
                np.testing.assert_array_equal(sa.falls, sb.falls)


def test_bound_keeps_newest_and_frees_segments():
    db = PrefDB(max_prefs=10)
    shared = make_segment(1000)
    db.add(Preference(shared, make_segment(999), MU_RIGHT))  # oldest: will be dropped
    for i in range(24):
        assert db.add(make_pref(i))
        assert len(db) <= 10
    assert len(db) == 10 and db.n_train + db.n_val == 10
    kept = sorted(db.segment(e.id1).step for e in db.train + db.val)
    assert kept == [2 * i for i in range(14, 24)]
    assert db.n_segments == 20
    assert shared.id not in {e.id1 for e in db.train + db.val}
    with pytest.raises(KeyError):
        db.segment_obs(shared.id)
    # a segment still used by a newer preference survives the eviction of an older one
    db2 = PrefDB(max_prefs=2)
    db2.add(Preference(shared, make_segment(1), MU_LEFT))
    db2.add(Preference(shared, make_segment(2), MU_LEFT))
    db2.add(Preference(make_segment(3), make_segment(4), MU_LEFT))
    assert len(db2) == 2 and db2.n_segments == 4
    np.testing.assert_array_equal(db2.segment_obs(shared.id), shared.obs)


def test_oldest_is_dropped_across_both_splits():
    db = PrefDB(max_prefs=7, val_fraction=0.5, seed=3)
    for i in range(40):
        db.add(make_pref(i))
    assert db.n_train > 0 and db.n_val > 0
    assert sorted(e.order for e in db.train + db.val) == list(range(33, 40))


def test_segments_stored_once_and_duplicates_rejected():
    db = PrefDB(max_prefs=100)
    a, b = make_segment(1), make_segment(2)
    others = [make_segment(10 + k) for k in range(5)]
    for o in others:
        assert db.add(Preference(a, o, MU_LEFT))
    assert db.n_segments == 6
    assert db.add(Preference(a, b, MU_LEFT))
    assert not db.add(Preference(a, b, MU_LEFT))
    assert not db.add(Preference(b, a, MU_RIGHT))  # same pair, same judgement, swapped order
    # a copy with equal content is the same segment (content hash, not object identity)
    a_copy = Segment(a.obs.copy(), a.frames.copy(), a.true_rewards.copy(), "other", 9, 9)
    assert not db.add(Preference(b, a_copy, MU_RIGHT))
    assert db.add(Preference(a, b, MU_EQUAL))  # a different judgement of the same pair is new data
    assert db.add(Preference(b, a, MU_LEFT))
    assert len(db) == 8 and db.n_segments == 7
    # random obs (a stack that does not slide) are held whole, frames compressed: each segment once
    assert 7 * a.obs.nbytes < db.nbytes < 7 * (a.obs.nbytes + a.frames.nbytes) + 7 * 200


def test_split_fraction_and_determinism():
    db = PrefDB(max_prefs=5000)
    pool = [make_segment(k) for k in range(50)]
    pairs = [(i, j) for i in range(50) for j in range(i + 1, 50)][:1000]
    for i, j in pairs:
        assert db.add(Preference(pool[i], pool[j], MU_LEFT))
    assert len(db) == 1000 and db.n_segments == 50
    assert 0.33 <= db.n_val / len(db) <= 0.41
    again = PrefDB(max_prefs=5000)
    other = PrefDB(max_prefs=5000, seed=1)
    for i, j in pairs:
        again.add(Preference(pool[i], pool[j], MU_LEFT))
        other.add(Preference(pool[i], pool[j], MU_LEFT))
    assert again.train == db.train and again.val == db.val
    assert [e.order for e in other.val] != [e.order for e in db.val]


def test_batch_and_true_returns():
    db = PrefDB(max_prefs=50, val_fraction=0.0)
    prefs = [make_pref(i, mu) for i, mu in enumerate([MU_LEFT, MU_RIGHT, MU_EQUAL])]
    for p in prefs:
        db.add(p)
    assert db.n_val == 0 and db.n_train == 3
    obs1, obs2, mu = db.batch("train", np.array([2, 0]))
    assert obs1.shape == (2, T, 8, 8, 4) and obs1.dtype == np.uint8 and mu.dtype == np.float32
    np.testing.assert_array_equal(obs1[0], prefs[2].segment_1.obs)
    np.testing.assert_array_equal(obs2[1], prefs[0].segment_2.obs)
    np.testing.assert_array_equal(mu, [MU_EQUAL, MU_LEFT])
    ret = db.true_returns("train")
    assert ret.shape == (3, 2)
    np.testing.assert_allclose(ret[1], [prefs[1].segment_1.true_return, prefs[1].segment_2.true_return],
                               rtol=1e-6)
    assert db.true_returns("val").shape == (0, 2)


def test_segment_ids_and_rewards():
    db = PrefDB(max_prefs=10)
    a, b, c = make_segment(1), make_segment(2), make_segment(3)
    db.add(Preference(a, b, MU_LEFT))
    db.add(Preference(a, c, MU_RIGHT))
    assert db.segment_ids() == [a.id, b.id, c.id]
    got = db.segment_rewards(b.id)
    np.testing.assert_array_equal(got, b.true_rewards)
    got[:] = 99  # a copy: the database keeps its own
    np.testing.assert_array_equal(db.segment_rewards(b.id), b.true_rewards)


def test_save_load_round_trip(tmp_path):
    db = PrefDB(max_prefs=20)
    pool = [make_segment(k) for k in range(12)]
    mus = [MU_LEFT, MU_RIGHT, MU_EQUAL]
    pairs = [(i, j) for i in range(12) for j in range(i + 1, 12)][:30]
    for k, (i, j) in enumerate(pairs):  # shared segments and evictions: counter > len
        assert db.add(Preference(pool[i], pool[j], mus[k % 3]))
    path = tmp_path / "prefs" / "prefs.npz"
    db.save(path)
    with np.load(path, allow_pickle=False) as data:
        assert set(data.files) == {"meta"}
        meta = json.loads(str(data["meta"]))
    assert meta["format"] == "drlhp-prefdb" and meta["format_version"] == 2 and meta["chunks"] == ["000000.npz"]
    with np.load(chunks_dir(path) / "000000.npz", allow_pickle=False) as data:
        assert set(data.files) == {"blob", "true_rewards", "meta"}
        assert data["blob"].dtype == np.uint8 and data["true_rewards"].dtype == np.float32
        chunk = json.loads(str(data["meta"]))
    assert len(chunk["segments"]) == db.n_segments and len(chunk["ops"]) == len(db)

    saved_counter = db.counter
    assert saved_counter > len(db) == 20
    loaded = PrefDB.load(path)
    assert (loaded.max_prefs, loaded.val_fraction, loaded.counter) == (20, db.val_fraction, db.counter)
    assert_same_db(db, loaded)
    for split in ("train", "val"):
        idx = np.arange(len(db.entries(split)))[::-1]
        for x, y in zip(db.batch(split, idx), loaded.batch(split, idx)):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(db.true_returns(split), loaded.true_returns(split))
    # both continue identically: same split draws, same evictions
    for i in range(15):
        p = make_pref(100 + i, mus[i % 3])
        assert db.add(p) == loaded.add(p)
    assert_same_db(db, loaded)
    # a smaller bound on load keeps the newest
    small = PrefDB.load(path, max_prefs=4)
    assert small.max_prefs == 4 and len(small) == 4
    assert sorted(e.order for e in small.train + small.val) == list(range(saved_counter - 4, saved_counter))


def _good_file(tmp_path):
    db = PrefDB(max_prefs=10)
    for i in range(4):
        db.add(make_pref(i))
    path = tmp_path / "good.npz"
    db.save(path)
    return db, path


def _copy(good, bad):
    bad.write_bytes(good.read_bytes())
    shutil.copytree(chunks_dir(good), chunks_dir(bad))


def _rewrite(src, dst, edit, chunk=False):
    """Copy the database at src to dst, with ``edit(arrays, meta)`` applied to its manifest or its chunk."""
    _copy(src, dst)
    target = chunks_dir(dst) / "000000.npz" if chunk else dst
    with np.load(target, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    edit(arrays, meta)
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(target, **arrays)


def _flip_blob(arrays, meta):
    seg = meta["segments"][1]
    blob = arrays["blob"].copy()
    blob[seg["obs_offset"] + seg["obs_nbytes"] // 2] ^= 0xFF
    arrays["blob"] = blob


def _flip_reward(arrays, meta):
    arrays["true_rewards"] = arrays["true_rewards"] + np.float32(1)


CORRUPTIONS = {
    "random_bytes": lambda good, bad: bad.write_bytes(np.random.default_rng(0).bytes(3000)),
    "truncated": lambda good, bad: bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2]),
    "empty": lambda good, bad: bad.write_bytes(b""),
    "foreign_npz": lambda good, bad: np.savez(bad, x=np.arange(5)),
    "foreign_format": lambda good, bad: _rewrite(good, bad, lambda a, m: m.update(format="other")),
    "newer_version": lambda good, bad: _rewrite(good, bad, lambda a, m: m.update(format_version=3)),
    "bad_json": lambda good, bad: np.savez(bad, meta=np.array("{not json")),
    "missing_chunk": lambda good, bad: bad.write_bytes(good.read_bytes()),
    "truncated_chunk": lambda good, bad: (_copy(good, bad), (chunks_dir(bad) / "000000.npz").write_bytes(
        (chunks_dir(good) / "000000.npz").read_bytes()[:500])),
    "flipped_blob_byte": lambda good, bad: _rewrite(good, bad, _flip_blob, chunk=True),
    "changed_rewards": lambda good, bad: _rewrite(good, bad, _flip_reward, chunk=True),
    "missing_segment": lambda good, bad: _rewrite(good, bad, lambda a, m: m["segments"].pop(0), chunk=True),
    "unknown_operation": lambda good, bad: _rewrite(good, bad, lambda a, m: m["ops"].append(["drop"]), chunk=True),
    "missing_file": lambda good, bad: None,
}


@pytest.mark.parametrize("kind", sorted(CORRUPTIONS))
def test_corrupt_file_raises_one_line_error(tmp_path, kind):
    _, good = _good_file(tmp_path)
    bad = tmp_path / f"{kind}.npz"
    CORRUPTIONS[kind](good, bad)
    before = bad.read_bytes() if bad.exists() else None
    with pytest.raises(PrefDBError) as info:
        PrefDB.load(bad)
    msg = str(info.value)
    assert "\n" not in msg and str(bad) in msg, msg
    assert (bad.read_bytes() if bad.exists() else None) == before  # loading never writes
    assert PrefDB.load(good).n_segments == 8


def test_failed_save_keeps_previous_file(tmp_path, monkeypatch):
    db, path = _good_file(tmp_path)
    good_bytes = path.read_bytes()
    db.add(make_pref(50))

    def broken_savez(f, **arrays):
        f.write(b"PK\x03\x04 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        db.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == good_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.npz", "good_chunks"]  # no temp file left
    assert sorted(p.name for p in chunks_dir(path).iterdir()) == ["000000.npz"]
    loaded = PrefDB.load(path)
    assert len(loaded) == 4 and len(db) == 5


def test_relabel_and_remove_keep_keys_refs_and_order(tmp_path):
    db = PrefDB(max_prefs=10, seed=0)
    shared = make_segment(500)
    db.add(make_pref(0))
    db.add(Preference(shared, make_segment(501), MU_RIGHT))
    db.add(Preference(shared, make_segment(502), MU_LEFT))
    db.add(Preference(shared, make_segment(501), MU_EQUAL))  # the same pair as order 1, another answer
    assert db.relabel(0, MU_EQUAL)
    assert not db.relabel(1, MU_EQUAL)  # order 3 already holds that pair as equal: nothing changes
    assert dict((e.order, e.mu) for e in db.train + db.val) == {0: MU_EQUAL, 1: MU_RIGHT, 2: MU_LEFT, 3: MU_EQUAL}
    assert not db.add(make_pref(0, MU_EQUAL))  # the relabelled key is the one deduplicated now
    assert db.add(make_pref(0, MU_LEFT))  # the old one is free again
    n_segments = db.n_segments
    db.remove(2)
    assert db.n_segments == n_segments - 1  # segment 502 was used by order 2 only; 500 is still used
    db.remove(1)
    db.remove(3)
    assert shared.id not in {i for e in db.train + db.val for i in (e.id1, e.id2)}
    assert db.n_segments == 2  # pref 0's two segments, used by orders 0 and 4
    with pytest.raises(KeyError):
        db.remove(2)
    db.save(tmp_path / "p.npz")
    assert_same_db(db, PrefDB.load(tmp_path / "p.npz"))


def test_saves_append_and_load_replays_every_change(tmp_path):
    """Each save writes one chunk of what changed (adds, evictions, relabels, removals) and the manifest;
    loading replays them into the same database as the one in memory."""
    path = tmp_path / "prefs.npz"
    db = PrefDB(max_prefs=12, val_fraction=0.3, seed=1)
    pool = [make_segment(k) for k in range(30)]
    for k in range(10):
        db.add(Preference(pool[k], pool[k + 1], MU_LEFT))
    db.save(path)
    for k in range(10, 25):  # evictions of the oldest, shared segments
        db.add(Preference(pool[k], pool[(k * 7) % 30], MU_RIGHT if k % 2 else MU_EQUAL))
    db.save(path)
    newest = max(e.order for e in db.train + db.val)
    db.relabel(newest, MU_LEFT)
    db.remove(min(e.order for e in db.train + db.val))
    db.save(path)
    db.save(path)  # nothing new: no chunk
    assert sorted(p.name for p in chunks_dir(path).iterdir()) == ["000000.npz", "000001.npz", "000002.npz"]
    with np.load(chunks_dir(path) / "000002.npz", allow_pickle=False) as data:
        assert [op[0] for op in json.loads(str(data["meta"]))["ops"]] == ["relabel", "remove"]
        assert len(data["blob"]) == 0  # no new segment in it
    loaded = PrefDB.load(path)
    assert_same_db(db, loaded)
    assert loaded.counter == db.counter
    for i in range(5):  # the loaded copy goes on appending to the same files
        p = make_pref(300 + i)
        assert db.add(p) and loaded.add(p)
    loaded.save(path)
    assert_same_db(db, PrefDB.load(path))


def test_save_compacts_when_the_log_outgrows_the_database(tmp_path, monkeypatch):
    import drlhp.reward.pref_db_files as pref_db_files  # save() reads its bound there

    monkeypatch.setattr(pref_db_files, "COMPACT_SLACK", 0)
    path = tmp_path / "prefs.npz"
    db = PrefDB(max_prefs=4, seed=0)
    for i in range(12):  # 12 adds and 8 evictions: the log holds 20 operations for 4 entries
        db.add(make_pref(i))
        if i % 2:
            db.save(path)
    names = sorted(p.name for p in chunks_dir(path).iterdir())
    assert len(names) < 6, names  # compacted at least once: old chunks deleted
    with np.load(path, allow_pickle=False) as data:
        assert json.loads(str(data["meta"]))["chunks"] == names
    assert_same_db(db, PrefDB.load(path))


def _write_format_1(db: PrefDB, path) -> None:
    """The format of drlhp before appending saves: one .npz with every segment and both splits."""
    parts, rewards, segs, offset, r_offset = [], [], [], 0, 0
    for sid in db.segment_ids():
        seg = db.segment(sid)
        obs_z, frames_z = zlib.compress(seg.obs.tobytes(), 1), zlib.compress(seg.frames.tobytes(), 1)
        segs.append({"id": sid, "obs_shape": list(seg.obs.shape), "frames_shape": list(seg.frames.shape),
                     "obs_offset": offset, "obs_nbytes": len(obs_z), "frames_offset": offset + len(obs_z),
                     "frames_nbytes": len(frames_z), "rewards_offset": r_offset, "length": seg.length,
                     "env_id": seg.env_id, "worker": seg.worker, "step": seg.step})
        parts += [obs_z, frames_z]
        rewards.append(seg.true_rewards)
        offset += len(obs_z) + len(frames_z)
        r_offset += seg.length
    meta = {"format": "drlhp-prefdb", "format_version": 1, "max_prefs": db.max_prefs,
            "val_fraction": db.val_fraction, "counter": db.counter, "rng_state": db.rng.bit_generator.state,
            "segments": segs, **{sp: [[e.id1, e.id2, e.mu[0], e.mu[1], e.order] for e in db.entries(sp)]
                                 for sp in ("train", "val")}}
    np.savez(path, blob=np.frombuffer(b"".join(parts), np.uint8), true_rewards=np.concatenate(rewards),
             meta=np.array(json.dumps(meta)))


def test_format_1_files_load_and_are_rewritten_whole(tmp_path):
    db = PrefDB(max_prefs=20, seed=2)
    for i in range(8):
        db.add(make_pref(i, [MU_LEFT, MU_RIGHT, MU_EQUAL][i % 3]))
    path = tmp_path / "prefs.npz"
    _write_format_1(db, path)
    loaded = PrefDB.load(path)
    assert_same_db(db, loaded)
    loaded.add(make_pref(50))
    loaded.save(path)  # over the old file: the new format, with every segment in its first chunk
    db.add(make_pref(50))
    assert_same_db(db, PrefDB.load(path))


def test_sliding_frame_stacks_are_stored_as_frames():
    """A clip whose 4-frame stack slides by one frame per step takes T + 3 frames, not 4T; a clip that
    crosses a reset (the stack does not slide) is kept whole; both come back exactly."""
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (T + 3, 8, 8), dtype=np.uint8)
    sliding = np.stack([np.moveaxis(frames[t:t + 4], 0, -1) for t in range(T)])
    a = Segment(sliding, sliding[..., -1].copy(), np.zeros(T, np.float32), "Pong", 0, 0)
    b = make_segment(1)  # random: does not slide
    db = PrefDB(max_prefs=10)
    db.add(Preference(a, b, MU_LEFT))
    assert db.nbytes - sum(len(s.frames_z) for s in db._segments.values()) == ((T + 3) + 4 * T) * 64
    np.testing.assert_array_equal(db.segment_obs(a.id), sliding)
    np.testing.assert_array_equal(db.segment_obs(b.id), b.obs)
    obs1, obs2, _ = db.batches("train" if db.n_train else "val", np.zeros((2, 3), np.int64))
    assert obs1.shape == (2, 3, T, 8, 8, 4)
    np.testing.assert_array_equal(obs1[1, 2], sliding)
    np.testing.assert_array_equal(obs2[0, 0], b.obs)


def test_a_first_save_into_a_folder_with_another_databases_chunks_overwrites_none(tmp_path):
    """A run that loaded --load_prefs_dir and saves into its own prefs/, which already holds chunks of
    its first sitting: the new chunk gets a new number, so a crash before the manifest loses nothing."""
    path = tmp_path / "prefs.npz"
    first = PrefDB(max_prefs=10, seed=0)
    for i in range(3):
        first.add(make_pref(i))
    first.save(path)
    other = PrefDB(max_prefs=10, seed=1)
    other.add(make_pref(20))
    before = (chunks_dir(path) / "000000.npz").read_bytes()
    other.save(path)
    assert (chunks_dir(path) / "000000.npz").exists() is False  # compacted away only after the manifest
    with np.load(path, allow_pickle=False) as data:
        assert json.loads(str(data["meta"]))["chunks"] == ["000001.npz"]
    assert before  # the first sitting's chunk was never rewritten in place
    assert_same_db(other, PrefDB.load(path))


def _three_chunks(path):
    """A database saved three times: chunk 000000 holds preferences 0-3, 000001 preferences 4-6, and 000002
    preferences 7-8, a relabel of preference 5 and a pair whose first segment was first saved in 000001."""
    db = PrefDB(max_prefs=100, val_fraction=0.3, seed=2)
    for i in range(4):
        db.add(make_pref(i))
    db.save(path)
    for i in range(4, 7):
        db.add(make_pref(i))
    db.save(path)
    for i in range(7, 9):
        db.add(make_pref(i))
    db.relabel(5, MU_RIGHT)
    db.add(Preference(make_segment(2 * 4), make_segment(1000), MU_EQUAL))  # segment of pref 4: in 000001
    db.save(path)
    assert sorted(p.name for p in chunks_dir(path).iterdir()) == ["000000.npz", "000001.npz", "000002.npz"]
    return db


def test_a_cut_middle_chunk_costs_only_its_own_preferences(tmp_path):
    path = tmp_path / "prefs.npz"
    db = _three_chunks(path)
    assert PrefDB.check(path) == len(db) == 10
    middle = chunks_dir(path) / "000001.npz"
    middle.write_bytes(middle.read_bytes()[: middle.stat().st_size // 2])  # cut short, as a full disk leaves it

    # found without decoding anything, and named: the chunk, not the manifest
    with pytest.raises(PrefDBDamaged) as info:
        PrefDB.check(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"preference database chunk {middle} is damaged: "), msg
    assert info.value.lost == 4 and info.value.kept == 6 and "4 preferences of" in msg, msg
    with pytest.raises(PrefDBDamaged, match="000001.npz is damaged"):
        PrefDB.load(path)

    # skip it: every label of the other chunks is there, with its split, order and mu
    loaded = PrefDB.load(path, skip_damaged=True)
    assert [d.path for d in loaded.damaged] == [middle] and loaded.lost == 4
    kept = {e.order: e for e in db.train + db.val if e.order not in (4, 5, 6, 9)}
    assert {e.order: e for e in loaded.train + loaded.val} == kept
    for e in kept.values():
        np.testing.assert_array_equal(loaded.segment_obs(e.id1), db.segment_obs(e.id1))
    assert middle.read_bytes()  # loading never writes

    # the next save there writes the database whole, and moves the damaged chunk aside
    loaded.add(make_pref(50))
    loaded.save(path)
    assert not middle.exists() and middle.with_name("000001.npz.damaged").exists()
    assert PrefDB.check(path) == 7
    again = PrefDB.load(path)
    assert again.damaged == [] and {e.order for e in again.train + again.val} == {*kept, loaded.counter - 1}


def test_a_missing_chunk_of_an_old_manifest_costs_an_unknown_number(tmp_path):
    path = tmp_path / "prefs.npz"
    _three_chunks(path)
    with np.load(path, allow_pickle=False) as data:  # a manifest written before it counted its preferences
        meta = json.loads(str(data["meta"]))
    del meta["n_prefs"]
    np.savez(path, meta=np.array(json.dumps(meta)))
    (chunks_dir(path) / "000002.npz").unlink()
    with pytest.raises(PrefDBDamaged, match="000002.npz is damaged: missing; an unknown number of preferences"):
        PrefDB.check(path)
    assert len(PrefDB.load(path, skip_damaged=True)) == 7


def mujoco_segment(step: int, states: bool = True) -> Segment:
    """A Box-action env's segment: (T, D) float32 observations, no frames, and (T, 14) float64 recorded states."""
    rng = np.random.default_rng(1000 + step)
    return Segment(rng.normal(size=(T, 6)).astype(np.float32), np.zeros((T, 0, 0), np.uint8),
                   rng.normal(size=T).astype(np.float32), "Hopper-v5", 0, step,
                   rng.normal(size=(T, 14)) if states else None)


def test_a_mujoco_clips_recorded_states_are_kept_through_appending_saves_and_bounded(tmp_path):
    """The states a clip recorded come back bit for bit after a save and a load, appended saves included; a
    segment that recorded none comes back with None; evicted segments' states go with them; a file without them
    (its meta has no states_offset: a database from before) loads with None."""
    db = PrefDB(max_prefs=3)
    path = tmp_path / "prefs.npz"
    added = []
    for i in range(5):
        pref = Preference(mujoco_segment(2 * i), mujoco_segment(2 * i + 1, states=i != 4), MU_LEFT)
        assert db.add(pref)
        added.append(pref)
        db.save(path)  # the first writes whole, the rest append
        loaded = PrefDB.load(path)
        assert_same_db(db, loaded)
    assert len(list(chunks_dir(path).glob("*.npz"))) > 1 and len(db) == 3  # appended chunks
    for pref in added[2:]:
        for seg in (pref.segment_1, pref.segment_2):
            back = loaded.segment(seg.id)
            if seg.states is None:
                assert back.states is None and loaded.segment_states(seg.id) is None
            else:
                assert back.states.dtype == np.float64 and np.array_equal(back.states, seg.states)
    assert added[0].segment_1.id not in loaded.segment_ids()  # evicted, with its states
    with_states = db.nbytes
    bare = PrefDB(max_prefs=3)
    for pref in added[2:]:
        bare.add(Preference(*(Segment(s.obs, s.frames, s.true_rewards, s.env_id, s.worker, s.step)
                              for s in (pref.segment_1, pref.segment_2)), pref.mu))
    assert with_states > bare.nbytes  # the states are held, and counted
    # a database written before states were kept: no states_offset in its chunk's meta
    bare.save(tmp_path / "old.npz")
    with np.load(chunks_dir(tmp_path / "old.npz") / "000000.npz", allow_pickle=False) as data:
        assert not any("states_offset" in m for m in json.loads(str(data["meta"]))["segments"])
    old = PrefDB.load(tmp_path / "old.npz")
    assert all(old.segment(sid).states is None for sid in old.segment_ids())


def test_a_clips_fall_flags_are_kept_with_its_states_and_older_files_load_without_them(tmp_path):
    """Segment.falls (the steps where the robot fell: review marks them) come back as they were added, through
    appending saves; a clip without flags, or without states, comes back with None; a file from before the flags were
    kept (no "falls" in its meta) loads with None; flags that are no steps of the clip are damage, one line."""
    from drlhp.records import npz_json

    def with_falls(step: int, at) -> Segment:
        seg = mujoco_segment(step)
        falls = None if at is None else np.isin(np.arange(T), at)
        return Segment(seg.obs, seg.frames, seg.true_rewards, seg.env_id, seg.worker, seg.step, seg.states,
                       falls).check()

    db = PrefDB()
    path = tmp_path / "prefs.npz"
    added = [Preference(with_falls(0, [1]), with_falls(1, []), MU_LEFT),
             Preference(with_falls(2, None), mujoco_segment(3, states=False), MU_RIGHT),
             Preference(with_falls(4, [0, T - 1]), with_falls(5, [2, 3]), MU_LEFT)]
    for pref in added:
        db.add(pref)
        db.save(path)  # appended chunks
    loaded = PrefDB.load(path)
    assert_same_db(db, loaded)
    for pref in added:
        for seg in (pref.segment_1, pref.segment_2):
            back = loaded.segment(seg.id)
            if seg.falls is None:
                assert back.falls is None
            else:
                assert back.falls.dtype == np.bool_ and np.array_equal(back.falls, seg.falls)
    # a database from before the flags were kept: the same chunks without "falls"
    for chunk in chunks_dir(path).glob("*.npz"):
        arrays, meta = npz_json.read(chunk, "chunk")
        assert chunk.name != "000000.npz" or any("falls" in m for m in meta["segments"])
        for m in meta["segments"]:
            m.pop("falls", None)
        npz_json.write(chunk, arrays, meta)
    old = PrefDB.load(path)
    assert all(old.segment(sid).falls is None for sid in old.segment_ids())
    assert np.array_equal(old.segment(added[0].segment_1.id).states, added[0].segment_1.states)
    # damage: a fall step outside the clip
    first = chunks_dir(path) / "000000.npz"
    arrays, meta = npz_json.read(first, "chunk")
    meta["segments"][0]["falls"] = [T]
    npz_json.write(first, arrays, meta)
    with pytest.raises(PrefDBError, match="fall steps"):
        PrefDB.load(path)

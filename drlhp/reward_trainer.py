"""Training the reward predictor on the preference database, and the reward-predictor process.

    process:  drain thread: preference_queue -> (with lock) PrefDB.add; save every prefs_save_interval
              main loop:    wait for n_initial_prefs -> pretrain n_initial_epochs -> publish
                            then train continuously: every publish_interval steps publish the weights
                            (with fresh normalization stats); every eval_interval steps validate and
                            adapt L2; every ckpt_interval_s save a checkpoint
              on stop:      drain the remaining preferences (until the sentinel), save DB + checkpoint

Files: <run_dir>/prefs/prefs.npz (drlhp.pref_db) and <run_dir>/reward_predictor/reward_predictor.npz
(weights, normalization, Adam state, L2 coefficients, counters; JSON meta; no pickle; atomic).
"""
from __future__ import annotations

import json
import math
import queue as queue_lib
import threading
import time
from pathlib import Path

import numpy as np

from drlhp.atomic import write_npz
from drlhp.config import RewardConfig, RunConfig
from drlhp.messages import RewardWeights
from drlhp.pref_db import PrefDB

PREFS_FILE = Path("prefs") / "prefs.npz"
PREDICTOR_FILE = Path("reward_predictor") / "reward_predictor.npz"


def predictor_to_load(cfg, run_dir) -> str | Path | None:
    """The predictor a run starts from: --load_reward_predictor_ckpt_dir, else this run directory's
    own (a resumed run), else None (a new predictor, pretrained on the initial preferences)."""
    own = Path(run_dir) / PREDICTOR_FILE
    return cfg.load_reward_predictor_ckpt_dir or (own if own.exists() else None)
PREDICTOR_FORMAT_VERSION = 1


class PredictorCheckpointError(Exception):
    """A reward predictor checkpoint that is missing, corrupt or does not fit."""


def find_file(path: str | Path, relative: Path) -> Path:
    """``path`` itself if a file, else path/<name>, else path/<relative> (a run directory)."""
    path = Path(path)
    for candidate in (path, path / relative.name, path / relative):
        if candidate.is_file():
            return candidate
    return path / relative


def save_predictor(path: Path, state: dict[str, np.ndarray], meta: dict) -> None:
    meta = {**meta, "format": "drlhp-reward-predictor", "format_version": PREDICTOR_FORMAT_VERSION}
    write_npz(path, {**state, "meta": np.array(json.dumps(meta))})


def load_predictor(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    from drlhp.checkpoint import npz_problem

    ckpt = find_file(path, PREDICTOR_FILE)
    problem = npz_problem(ckpt, "reward predictor checkpoint")
    if problem:
        raise PredictorCheckpointError(f"cannot read reward predictor checkpoint {ckpt}: {problem}")
    try:
        with np.load(ckpt, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("meta")))
    except Exception as e:
        raise PredictorCheckpointError(f"cannot read reward predictor checkpoint {ckpt}: "
                                       f"{' '.join(str(e).split())}") from None
    if meta.get("format") != "drlhp-reward-predictor" or meta.get("format_version") != PREDICTOR_FORMAT_VERSION:
        raise PredictorCheckpointError(f"{ckpt} is not a drlhp reward predictor checkpoint of format "
                                       f"{PREDICTOR_FORMAT_VERSION}")
    meta["path"] = str(ckpt)
    return arrays, meta


def saved_reward_config(run_dir) -> RewardConfig | None:
    """The RewardConfig a run recorded in its config.json (fields it lacks take their defaults; fields
    this version lacks are left out); None where there is no readable one."""
    import json

    try:
        saved = json.loads((Path(run_dir) / "config.json").read_text())["reward"]
        return RewardConfig(**{k: v for k, v in saved.items() if k in RewardConfig.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        return None


def predictor_batchnorm(meta: dict) -> bool | None:
    """Whether a saved predictor's network has batch normalization: from its checkpoint (newer ones
    say), else from its run's config.json (<run>/reward_predictor/reward_predictor.npz); None: unknown."""
    if "batchnorm" in meta:
        return bool(meta["batchnorm"])
    cfg = saved_reward_config(Path(meta["path"]).parent.parent)
    return None if cfg is None else cfg.batchnorm


def load_predictor_weights(path) -> tuple[RewardWeights, dict]:
    """A checkpoint's weights and normalization as the policy uses them (no TensorFlow needed)."""
    state, meta = load_predictor(path)
    members = []
    for m in range(int(meta.get("n_members", 0))):
        keys = sorted((k for k in state if k.startswith(f"m{m}_w")), key=lambda k: int(k.split("_w")[1]))
        members.append(tuple(state[k] for k in keys))
    if not members:
        raise PredictorCheckpointError(f"reward predictor checkpoint {meta['path']} holds no members")
    return RewardWeights(max(1, int(meta.get("version", 1))), tuple(members), state["norm_mean"],
                         state["norm_std"]).check(), meta


def _nanmean(x: np.ndarray) -> float:
    """The mean of the values that are not NaN; NaN, without numpy's warning, where none is."""
    x = np.asarray(x, np.float64)
    return float(x[~np.isnan(x)].mean()) if (~np.isnan(x)).any() else float("nan")


FIRST_NORM_FACTOR = 10  # the first normalization: from this many times norm_segments


class RewardTrainer:
    """The ensemble, its L2 coefficients and bootstrap weights, trained on a PrefDB held under a lock."""

    def __init__(self, obs_shape: tuple, cfg: RewardConfig, db: PrefDB, lock: threading.Lock, seed: int):
        from drlhp.reward_model import RewardEnsemble

        self.cfg, self.db, self.lock = cfg, db, lock
        self.ensemble = RewardEnsemble(obs_shape, cfg, seed)
        self.l2 = np.full(cfg.n_predictors, cfg.l2_init, np.float32)
        self.rng = np.random.default_rng(seed + 7)
        # bootstrap: per training entry (by order, ascending), a Poisson(1) count per member
        self._boot_orders = np.zeros(0, np.int64)
        self._boot_counts = np.zeros((0, cfg.n_predictors), np.int64)
        self.steps = 0
        self.pretrain_target = 0  # the step at which pretraining ends (0: not started); kept in checkpoints
        self.last_eval: dict[str, float] = {}

    # --- checkpoints ---------------------------------------------------------------------------
    def load(self, path) -> dict:
        state, meta = load_predictor(path)
        try:
            self.ensemble.set_state(state)
        except (KeyError, ValueError) as e:
            raise PredictorCheckpointError(f"reward predictor checkpoint {meta['path']} does not fit this "
                                           f"ensemble: {e}") from None
        self.l2 = np.asarray(state.get("l2", self.l2), np.float32)
        self.steps = int(meta.get("steps", 0))
        self.pretrain_target = int(meta.get("pretrain_target", 0))
        self.ensemble.version = int(meta.get("version", 0))
        self.ensemble._norm_set = self.ensemble.version > 0  # saved before any publication: defaults only
        return meta

    def save(self, path: Path) -> None:
        save_predictor(path, {**self.ensemble.get_state(), "l2": self.l2},
                       {"steps": self.steps, "version": self.ensemble.version, "n_members": self.cfg.n_predictors,
                        "pretrain_target": self.pretrain_target, "batchnorm": self.cfg.batchnorm})

    @property
    def pretraining_unfinished(self) -> bool:
        """Pretraining was started and stopped before its last step (a run interrupted while pretraining)."""
        return self.steps < self.pretrain_target

    # --- training ------------------------------------------------------------------------------
    def _sync_bootstrap(self, entries) -> None:
        """One Poisson(1) count per member for each training entry, kept aligned with ``entries`` (in
        insertion order): new entries get fresh draws, evicted ones leave. O(changes), not O(database)."""
        n, orders, counts = len(entries), self._boot_orders, self._boot_counts
        if len(orders) == n and (n == 0 or (orders[0] == entries[0].order and orders[-1] == entries[-1].order)):
            return
        if n and len(orders):  # evicted at the head
            k = int(np.searchsorted(orders, entries[0].order))
            orders, counts = orders[k:], counts[k:]
        last = orders[-1] if len(orders) else -1
        new = []
        for e in reversed(entries):  # added at the tail
            if e.order <= last:
                break
            new.append(e.order)
        orders = np.concatenate([orders, np.array(new[::-1], np.int64)])
        counts = np.concatenate([counts, self.rng.poisson(1.0, (len(new), self.cfg.n_predictors))])
        if len(orders) != n or (n and orders[0] != entries[0].order):  # removed from the middle (review tool)
            kept = dict(zip(orders.tolist(), counts))
            orders = np.array([e.order for e in entries], np.int64)
            counts = np.array([kept.get(o, self.rng.poisson(1.0, self.cfg.n_predictors)) for o in orders.tolist()],
                              np.int64).reshape(n, self.cfg.n_predictors)
        self._boot_orders, self._boot_counts = orders, counts

    def _member_indices(self, size: int | None = None) -> np.ndarray:
        """(members, size) training indices (default: batch_size), each member's drawn from its own
        bootstrap sample (uniformly, if its sample is empty)."""
        size = size or self.cfg.batch_size
        out = np.empty((self.cfg.n_predictors, size), np.int64)
        n = len(self._boot_orders)
        for m in range(self.cfg.n_predictors):
            cum = np.cumsum(self._boot_counts[:, m])
            if cum[-1] > 0:
                out[m] = np.searchsorted(cum, self.rng.random(size) * cum[-1], side="right")
            else:
                out[m] = self.rng.integers(0, n, size)
        return out

    def train_step(self) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            entries = self.db.entries("train")
            if not entries:  # evicted since the caller looked (a tiny --max_prefs): nothing to train on
                return np.full(self.cfg.n_predictors, np.nan), np.full(self.cfg.n_predictors, np.nan)
            self._sync_bootstrap(entries)
            s1, s2, mu = self.db.batches("train", self._member_indices())  # (members, B, T, ...)
        losses, accs = self.ensemble.train_step(s1, s2, mu, self.l2)
        self.steps += 1
        return losses, accs

    def evaluate(self, max_pairs: int = 256) -> dict[str, float]:
        """Validation and training loss/accuracy per member (inference mode), then adapt L2.

        L2 follows each member's own overfitting: its training loss is measured on pairs drawn from its
        own bootstrap sample, and both losses on strict labels only (a tie's loss cannot fall below
        ln 2, which would hide the gap between training and validation)."""
        from drlhp.reward_model import adapt_l2

        m_count = self.cfg.n_predictors
        with self.lock:
            n_val, n_train = self.db.n_val, self.db.n_train
            if n_val == 0 or n_train == 0:
                return {}
            self._sync_bootstrap(self.db.entries("train"))
            val = self.db.batch("val", self.rng.permutation(n_val)[:max_pairs])
            per_member = max(16, max_pairs // m_count)
            own = []
            for idx in self._member_indices(2 * per_member):  # each member's own sample, strict labels
                strict = [i for i in idx.tolist() if self.db.train[i].mu[0] != self.db.train[i].mu[1]]
                own.append(np.array(strict[:per_member] or idx[:1].tolist(), np.int64))
            train = self.db.batch("train", np.concatenate(own))
        val_loss_pairs, val_correct = self.ensemble.evaluate_pairs(*val)
        train_loss_pairs, train_correct = self.ensemble.evaluate_pairs(*train)
        val_strict = val[2][:, 0] != val[2][:, 1]
        bounds = np.cumsum([0] + [len(o) for o in own])
        train_loss = np.array([train_loss_pairs[m, bounds[m]:bounds[m + 1]].mean() for m in range(m_count)])
        train_acc = np.array([train_correct[m, bounds[m]:bounds[m + 1]].mean() for m in range(m_count)])
        val_loss = val_loss_pairs.mean(axis=1)
        val_loss_strict = val_loss_pairs[:, val_strict].mean(axis=1) if val_strict.any() else val_loss
        val_acc = val_correct[:, val_strict].mean(axis=1) if val_strict.any() else np.full(m_count, np.nan)
        self.l2 = adapt_l2(self.l2, train_loss, val_loss_strict)
        out = {}
        for m in range(m_count):
            out.update({f"reward/train_loss_{m}": train_loss[m], f"reward/val_loss_{m}": val_loss[m],
                        f"reward/val_loss_strict_{m}": val_loss_strict[m],
                        f"reward/train_accuracy_{m}": train_acc[m], f"reward/val_accuracy_{m}": val_acc[m],
                        f"reward/l2_{m}": self.l2[m], f"reward/norm_mean_{m}": self.ensemble.norm_mean[m],
                        f"reward/norm_std_{m}": self.ensemble.norm_std[m]})
        out.update({"reward/train_loss": float(train_loss.mean()), "reward/val_loss": float(val_loss.mean()),
                    "reward/val_loss_strict": float(val_loss_strict.mean()),
                    "reward/train_accuracy": _nanmean(train_acc),
                    "reward/val_accuracy": _nanmean(val_acc)})  # NaN with no strict label (all ties: CartPole)
        self.last_eval = out
        return out

    def publish(self):
        """Normalization statistics moved towards those of the newest segments' frames (by
        norm_momentum), then the weights. The first publication sets them from 10x as many segments:
        20 clips of 25 correlated steps measured a Pong predictor's spread 6x too small (docs/results.md,
        2026-11-23 E2), and later ones, moving by norm_momentum, would take long to correct it."""
        n = self.cfg.norm_segments * (1 if self.ensemble.norm_set else FIRST_NORM_FACTOR)
        with self.lock:
            ids = self.db.newest_segment_ids(n)
            obs = np.concatenate([self.db.segment_obs(i) for i in ids]) if ids else None
        if obs is not None:
            self.ensemble.update_normalization(obs, self.cfg.norm_momentum)
        return self.ensemble.publish()

    def pretrain(self, n_epochs: int, log=print, should_stop=lambda: False, on_eval=None) -> None:
        """``on_eval(step, metrics)``, if given, receives each evaluation (e.g. MetricsLogger.log). After a
        checkpoint of an interrupted pretraining, goes on with the steps that were left."""
        resumed = self.pretraining_unfinished
        if not resumed:
            self.pretrain_target = self.steps + math.ceil(n_epochs * self.db.n_train / self.cfg.batch_size)
        n_steps = self.pretrain_target - self.steps
        log(f"[reward] pretraining on {len(self.db)} preferences: "
            + (f"resumed, {n_steps} steps left" if resumed else f"{n_epochs} epochs = {n_steps} steps")
            + f" of {self.cfg.batch_size} pairs x {self.cfg.n_predictors} members")
        t0 = last = time.perf_counter()
        for i in range(n_steps):
            if should_stop():
                return
            losses, _ = self.train_step()
            if (i + 1) % self.cfg.eval_interval == 0 or i + 1 == n_steps:
                self.evaluate()
                if on_eval is not None:
                    on_eval(self.steps, self.last_eval)
            if time.perf_counter() - last > 10 or i + 1 == n_steps:
                last = time.perf_counter()
                ev = self.last_eval
                log(f"[reward] pretrain step {i + 1}/{n_steps} | train loss {losses.mean():.3f} | "
                    f"val accuracy {ev.get('reward/val_accuracy', float('nan')):.2f} | "
                    f"{(i + 1) / (last - t0):.1f} steps/s")


def run_reward_predictor(cfg: RunConfig, obs_shape: tuple, preference_queue, weights_channels: list,
                         stop_event, gathering_done, run_dir: str, collect_only: bool, log=print,
                         predictor_version=None, db_size=None, pair_updates=None) -> dict:
    """The reward-predictor process (see the module docstring). ``collect_only``: gather_initial_prefs
    mode: store preferences until n_initial_prefs, save the database, return. ``predictor_version``,
    ``db_size``: shared integers (multiprocessing.Value) kept up to date for the labelling window;
    ``pair_updates``: one the policy reads (--reward_updates_per_step): pairs trained on per member since
    pretraining ended."""
    from drlhp.launcher import parent_gone
    from drlhp.metrics import MetricsLogger, memory_mb
    from drlhp.tf_setup import configure_tensorflow

    configure_tensorflow(cfg.reward.tf_intra_threads, 1, seed=cfg.seed, onednn=cfg.reward.onednn)
    run_dir = Path(run_dir)
    prefs_path, ckpt_path = run_dir / PREFS_FILE, run_dir / PREDICTOR_FILE
    p = cfg.prefs
    if cfg.load_prefs_dir or prefs_path.exists():
        # a resumed run's own database (it holds what --load_prefs_dir gave it, and every label since)
        source = prefs_path if prefs_path.exists() else find_file(cfg.load_prefs_dir, PREFS_FILE)
        db = PrefDB.load(source, max_prefs=p.max_prefs)
        log(f"[reward] loaded {len(db)} preferences")
    else:
        db = PrefDB(max_prefs=p.max_prefs, seed=cfg.seed)
    lock = threading.Lock()
    received = [0]

    def show_db_size():
        if db_size is not None:
            db_size.value = len(db)

    show_db_size()
    drain_done = threading.Event()
    drain_error: list[BaseException] = []

    def save_db():
        with lock:
            db.save(prefs_path)

    def drain_preferences():
        """Receive preferences until the sentinel (or, once stopping, 10 s of silence; 2 s once the
        parent is gone, to exit within its PARENT_GONE_EXIT_S)."""
        quiet_since = None
        try:
            while True:
                try:
                    pref = preference_queue.get(timeout=0.5)
                except queue_lib.Empty:
                    if stop_event.is_set():
                        quiet_since = quiet_since or time.monotonic()
                        if time.monotonic() - quiet_since > (2 if parent_gone() else 10):
                            return
                    continue
                if pref is None:
                    return
                quiet_since = None
                with lock:
                    db.add(pref)
                    show_db_size()
                received[0] += 1
                if received[0] % p.prefs_save_interval == 0:
                    save_db()
        except BaseException as e:  # reaches the main loop, which re-raises it
            drain_error.append(e)
        finally:
            drain_done.set()

    thread = threading.Thread(target=drain_preferences, name="preference-drain", daemon=True)
    thread.start()
    logger = MetricsLogger(run_dir, tb_subdir="tb/reward", csv_name="progress_reward.csv")

    def check_drain():
        if drain_error:
            raise drain_error[0]

    def n_prefs() -> int:
        with lock:
            return len(db)

    def wait_for_initial_prefs() -> bool:
        last = 0.0
        while n_prefs() < p.n_initial_prefs:
            check_drain()
            if stop_event.is_set() or drain_done.is_set():
                return False
            if time.monotonic() - last > max(cfg.log_interval, 2):
                last = time.monotonic()
                log(f"[reward] initial preferences: {n_prefs()}/{p.n_initial_prefs}", flush=True)
            time.sleep(0.1)
        return True

    trainer = None if collect_only else RewardTrainer(obs_shape, cfg.reward, db, lock, seed=cfg.seed)
    online = [0]  # training steps beside the policy (after pretraining), this sitting

    def publish():
        weights = trainer.publish()
        for ch in weights_channels:
            ch.publish(weights)
        if predictor_version is not None:
            predictor_version.value = weights.version

    def work():
        if collect_only:
            wait_for_initial_prefs()
            return
        loaded = predictor_to_load(cfg, run_dir)
        if loaded:
            meta = trainer.load(loaded)
            log(f"[reward] loaded predictor {meta['path']} (step {trainer.steps})", flush=True)
        elif not wait_for_initial_prefs():
            return
        # pretrain a new predictor, or finish this run's pretraining if it was stopped midway
        if not loaded or (not cfg.load_reward_predictor_ckpt_dir and trainer.pretraining_unfinished):
            gathering_done.set()  # the policy stops its random play while we pretrain
            trainer.pretrain(cfg.reward.n_initial_epochs, log=lambda s: log(s, flush=True),
                             should_stop=stop_event.is_set, on_eval=logger.log)
            trainer.save(ckpt_path)
        gathering_done.set()
        publish()
        last_ckpt = last_log = time.monotonic()
        while not stop_event.is_set():
            check_drain()
            if trainer.db.n_train == 0:
                time.sleep(0.1)
                continue
            t0 = time.perf_counter()
            losses, accs = trainer.train_step()
            step_s = time.perf_counter() - t0
            online[0] += 1
            if pair_updates is not None:
                pair_updates.value += cfg.reward.batch_size
            if trainer.steps % cfg.reward.publish_interval == 0:
                publish()
            if trainer.steps % cfg.reward.eval_interval == 0:
                trainer.evaluate()
            now = time.monotonic()
            if now - last_ckpt > cfg.reward.ckpt_interval_s:
                trainer.save(ckpt_path)
                last_ckpt = now
            if cfg.reward.train_fraction < 1.0:  # paced: all of this step's work counts, not only training
                stop_event.wait((time.perf_counter() - t0) * (1.0 / cfg.reward.train_fraction - 1.0))
            if now - last_log > cfg.log_interval:
                last_log = now
                with lock:
                    db_figures = {"prefs/db_size": len(db), "prefs/db_train": db.n_train, "prefs/db_val": db.n_val,
                                  "prefs/db_segments": db.n_segments, "prefs/db_mb": db.nbytes / 2**20}
                logger.log(trainer.steps, {
                    **trainer.last_eval, **db_figures,
                    "reward/batch_loss": float(losses.mean()), "reward/batch_accuracy": float(accs.mean()),
                    "reward/published_version": trainer.ensemble.version, "reward/train_steps": trainer.steps,
                    "reward/train_step_ms": 1e3 * step_s, "prefs/received": received[0],
                    "reward/online_steps": online[0],
                    "system/memory_mb_reward": memory_mb()})

    figures = {}
    try:
        work()
    finally:
        # until the preference interface's sentinel: no preference is lost (shorter once the parent is gone)
        thread.join(timeout=4 if parent_gone() else 15)
        save_db()
        if trainer is not None and trainer.steps > 0:  # nothing trained (stopped while gathering): no
            trainer.evaluate()                           # checkpoint, or a resume would skip pretraining
            trainer.save(ckpt_path)
            logger.log(trainer.steps, trainer.last_eval)
            figures = {"predictor_val_accuracy": trainer.last_eval.get("reward/val_accuracy"),
                       "predictor_train_steps": trainer.steps, "predictor_online_steps": online[0],
                       "predictor_online_pair_updates": online[0] * cfg.reward.batch_size}
        logger.close()
    return {"n_preferences": len(db), **figures}

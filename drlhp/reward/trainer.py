"""Training the reward predictor on the preference database, and the reward-predictor process.

    process:  drain thread: preference_queue -> (with lock) PrefDB.add; save every prefs_save_interval
              main loop:    wait for n_initial_prefs -> pretrain n_initial_epochs -> publish
                            then train continuously: every publish_interval steps publish the weights
                            (with fresh normalization stats); every eval_interval steps validate and
                            adapt L2; every ckpt_interval_s save a checkpoint
              on stop:      drain the remaining preferences (until the sentinel), save DB + checkpoint

Files: <run_dir>/prefs/prefs.npz (drlhp.reward.pref_db) and <run_dir>/reward_predictor/reward_predictor.npz
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

from drlhp.config import RewardConfig, RunConfig
from drlhp.reward.pref_db import PrefDB
from drlhp.runtime import npz_json
from drlhp.runtime.messages import RewardWeights
from drlhp.runtime.run_paths import RunPaths

PREFS_FILE = RunPaths.PREFS  # relative to a run directory (find_file)
PREDICTOR_FILE = RunPaths.PREDICTOR


def predictor_to_load(cfg, run_dir) -> str | Path | None:
    """The predictor a run starts from: this run directory's own (a resumed run: it went on from what
    --load_reward_predictor_ckpt_dir gave it), else --load_reward_predictor_ckpt_dir, else None (a new
    predictor, pretrained on the initial preferences). As the preference database: the run's own first."""
    own = RunPaths(run_dir).predictor
    return own if own.exists() else cfg.load_reward_predictor_ckpt_dir


def prefs_to_load(cfg, run_dir) -> Path | None:
    """The preference database a run starts from, as predictor_to_load chooses the predictor: this run
    directory's own (it holds what --load_prefs_dir gave it, and every label since), else the one
    --load_prefs_dir names, else None (a new database)."""
    own = RunPaths(run_dir).prefs
    if own.exists():
        return own
    return find_file(cfg.load_prefs_dir, PREFS_FILE) if cfg.load_prefs_dir else None
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
    npz_json.write(path, state, meta)


def load_predictor(path: str | Path) -> tuple[dict[str, np.ndarray], dict]:
    ckpt = find_file(path, PREDICTOR_FILE)
    arrays, meta = npz_json.read_or_raise(ckpt, "reward predictor checkpoint", PredictorCheckpointError)
    if meta.get("format") != "drlhp-reward-predictor" or meta.get("format_version") != PREDICTOR_FORMAT_VERSION:
        raise PredictorCheckpointError(f"{ckpt} is not a drlhp reward predictor checkpoint of format "
                                       f"{PREDICTOR_FORMAT_VERSION}")
    meta["path"] = str(ckpt)
    return arrays, meta


def saved_reward_config(run_dir) -> RewardConfig | None:
    """The RewardConfig a run recorded in its config.json (fields it lacks take their defaults; fields
    this version lacks are left out); None where there is no readable one."""
    try:
        saved = json.loads(RunPaths(run_dir).config.read_text())["reward"]
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


def save_predictor_weights(path: Path, weights: RewardWeights, batchnorm: bool) -> None:
    """Published weights (what the policy is trained on) as a predictor checkpoint that
    ``load_predictor_weights`` reads back: weights and normalization, no optimizer state."""
    state = {f"m{m}_w{i}": np.asarray(w) for m, member in enumerate(weights.weights) for i, w in enumerate(member)}
    state.update(norm_mean=np.asarray(weights.norm_mean), norm_std=np.asarray(weights.norm_std))
    save_predictor(path, state, {"n_members": len(weights.weights), "version": weights.version,
                                 "batchnorm": batchnorm, "weights_only": True})


def _nanmean(x: np.ndarray) -> float:
    """The mean of the values that are not NaN; NaN, without numpy's warning, where none is."""
    x = np.asarray(x, np.float64)
    return float(x[~np.isnan(x)].mean()) if (~np.isnan(x)).any() else float("nan")


def pretrain_rule(best: float, since: int, acc: float, min_gain: float) -> tuple[float, int, bool]:
    """One evaluation of pretraining's early stop: (the best validation accuracy, evaluations since it, whether
    ``acc`` is a new best). A new best beats the old by ``min_gain``; a NaN accuracy (no strict label)
    changes nothing; pretraining stops once ``since`` reaches --reward_pretrain_patience."""
    if math.isnan(acc):
        return best, since, False
    if math.isnan(best) or acc >= best + min_gain:
        return acc, 0, True
    return best, since + 1, False


FIRST_NORM_FACTOR = 10  # the first normalization: from this many times norm_segments


class RewardTrainer:
    """The ensemble, its L2 coefficients and bootstrap weights, trained on a PrefDB held under a lock."""

    def __init__(self, obs_shape: tuple, cfg: RewardConfig, db: PrefDB, lock: threading.Lock, seed: int):
        from drlhp.reward.model import RewardEnsemble

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
        self._val_rng = np.random.default_rng(seed + 11)  # the validation subset's draws (_val_subset)
        self._val_key: tuple | None = None
        self._val_indices = np.zeros(0, np.int64)
        # pretraining's early stop: the best validation accuracy, its step, evaluations since (checkpointed)
        self.pretrain_best, self.pretrain_best_step, self.pretrain_since_best = float("nan"), 0, 0

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
        best = meta.get("pretrain_best")
        self.pretrain_best = float("nan") if best is None else float(best)
        self.pretrain_best_step = int(meta.get("pretrain_best_step", self.steps))
        self.pretrain_since_best = int(meta.get("pretrain_since_best", 0))
        self.ensemble.version = int(meta.get("version", 0))
        self.ensemble.norm.is_set = self.ensemble.version > 0  # saved before any publication: defaults only
        return meta

    def save(self, path: Path) -> None:
        save_predictor(path, {**self.ensemble.get_state(), "l2": self.l2},
                       {"steps": self.steps, "version": self.ensemble.version, "n_members": self.cfg.n_predictors,
                        "pretrain_target": self.pretrain_target, "batchnorm": self.cfg.batchnorm,
                        "pretrain_best": None if math.isnan(self.pretrain_best) else self.pretrain_best,
                        "pretrain_best_step": self.pretrain_best_step, "pretrain_since_best": self.pretrain_since_best})

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

    def _val_subset(self, max_pairs: int) -> np.ndarray:
        """The validation pairs evaluated: up to ``max_pairs`` drawn once and kept while the validation set
        is unchanged (all of pretraining), so that successive evaluations measure the predictor, not which
        pairs were drawn; drawn anew when it changes. Caller holds the lock."""
        val = self.db.entries("val")
        key = (len(val), val[0].order, val[-1].order) if val else None
        if key != self._val_key:
            self._val_key = key
            self._val_indices = np.sort(self._val_rng.permutation(len(val))[:max_pairs])
        return self._val_indices

    def evaluate(self, max_pairs: int = 256) -> dict[str, float]:
        """Validation and training loss/accuracy per member (inference mode), then adapt L2.

        L2 follows each member's own overfitting: its training loss is measured on pairs drawn from its
        own bootstrap sample, and both losses on strict labels only (a tie's loss cannot fall below
        ln 2, which would hide the gap between training and validation). Every member on the same
        validation pairs (``_val_subset``), each member alone on its own training pairs."""
        from drlhp.reward.model import adapt_l2

        m_count = self.cfg.n_predictors
        with self.lock:
            n_val, n_train = self.db.n_val, self.db.n_train
            if n_val == 0 or n_train == 0:
                return {}
            self._sync_bootstrap(self.db.entries("train"))
            val = self.db.batch("val", self._val_subset(max_pairs))
            per_member = max(16, max_pairs // m_count)
            own = []
            for idx in self._member_indices(2 * per_member):  # each member's own sample, strict labels
                strict = [i for i in idx.tolist() if self.db.train[i].mu[0] != self.db.train[i].mu[1]]
                own.append(self.db.batch("train", np.array(strict[:per_member] or idx[:1].tolist(), np.int64)))
        val_loss_pairs, val_correct = self.ensemble.evaluate_pairs(*val)
        train_loss, train_acc = np.zeros(m_count), np.zeros(m_count)
        for m, pairs in enumerate(own):
            loss_pairs, correct = self.ensemble.evaluate_pairs(*pairs, member=m)
            train_loss[m], train_acc[m] = loss_pairs.mean(), correct.mean()
        val_strict = val[2][:, 0] != val[2][:, 1]
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
        """At most ``n_epochs`` passes over the training preferences (the cap), evaluated every eval_interval
        steps; with --reward_pretrain_patience P, it stops as soon as the best validation accuracy has not
        risen by --reward_pretrain_min_gain in P evaluations (``_no_longer_teaches``). ``on_eval(step,
        metrics)``, if given, receives each evaluation (e.g. MetricsLogger.log: the accuracy against steps).
        After a checkpoint of an interrupted pretraining, goes on with the steps that were left."""
        cfg = self.cfg
        resumed = self.pretraining_unfinished
        if not resumed:
            self.pretrain_target = self.steps + math.ceil(n_epochs * self.db.n_train / cfg.batch_size)
            self.pretrain_best, self.pretrain_best_step, self.pretrain_since_best = float("nan"), self.steps, 0
        n_steps = self.pretrain_target - self.steps
        rule = ""
        if cfg.pretrain_patience:
            rule = (f"; stops once the best validation accuracy has not risen by {cfg.pretrain_min_gain:g} in "
                    f"{cfg.pretrain_patience} evaluations (every {cfg.eval_interval} steps)")
        log(f"[reward] pretraining on {len(self.db)} preferences: "
            + (f"resumed, {n_steps} steps left" if resumed else f"{n_epochs} epochs = {n_steps} steps")
            + f" of {cfg.batch_size} pairs x {cfg.n_predictors} members" + rule)
        t0 = last = time.perf_counter()
        for i in range(n_steps):
            if should_stop():
                return
            losses, _ = self.train_step()
            stop = False
            if (i + 1) % cfg.eval_interval == 0 or i + 1 == n_steps:
                self.evaluate()
                stop = self._no_longer_teaches()
                if on_eval is not None:
                    on_eval(self.steps, {**self.last_eval, "reward/pretrain_best_val_accuracy": self.pretrain_best})
            if time.perf_counter() - last > 10 or i + 1 == n_steps or stop:
                last = time.perf_counter()
                ev = self.last_eval
                log(f"[reward] pretrain step {i + 1}/{n_steps} | train loss {losses.mean():.3f} | "
                    f"val accuracy {ev.get('reward/val_accuracy', float('nan')):.2f} | "
                    f"{(i + 1) / (last - t0):.1f} steps/s")
            if stop:
                log(f"[reward] pretraining stopped at step {self.steps} of {self.pretrain_target}: best validation "
                    f"accuracy {self.pretrain_best:.3f} at step {self.pretrain_best_step}, not bettered by "
                    f"{cfg.pretrain_min_gain:g} in {self.pretrain_since_best} evaluations since")
                self.pretrain_target = self.steps  # done: a resume does not go on with it
                return

    def _no_longer_teaches(self) -> bool:
        """After an evaluation: update the best validation accuracy (a new best must beat the old one by
        pretrain_min_gain) and say whether pretraining should stop (pretrain_patience evaluations without
        one). An evaluation without a validation accuracy (no strict label: all ties) neither counts nor
        resets the count."""
        acc = self.last_eval.get("reward/val_accuracy", float("nan"))
        self.pretrain_best, self.pretrain_since_best, new_best = pretrain_rule(
            self.pretrain_best, self.pretrain_since_best, acc, self.cfg.pretrain_min_gain)
        if new_best:
            self.pretrain_best_step = self.steps
        return 0 < self.cfg.pretrain_patience <= self.pretrain_since_best


def run_reward_predictor(cfg: RunConfig, obs_shape: tuple, preference_queue, weights_channels: list,
                         stop_event, gathering_done, run_dir: str, collect_only: bool, log=print,
                         predictor_version=None, db_size=None, pair_updates=None) -> dict:
    """The reward-predictor process (see the module docstring and RewardPredictorProcess)."""
    return RewardPredictorProcess(cfg, obs_shape, preference_queue, weights_channels, stop_event, gathering_done,
                                  run_dir, collect_only, log=log, predictor_version=predictor_version,
                                  db_size=db_size, pair_updates=pair_updates).run()


class RewardPredictorProcess:
    """The reward-predictor process's main loop: ``run`` = ``start``, then ``step`` until the stop event,
    then ``close``; returns its figures for the summary.

    ``collect_only``: gather_initial_prefs mode: store preferences until n_initial_prefs, save the
    database, return. ``predictor_version``, ``db_size``: shared integers (multiprocessing.Value) kept
    up to date for the labelling window; ``pair_updates``: one the policy reads
    (--reward_updates_per_step): pairs trained on per member since pretraining ended.

    A thread (``_drain_preferences``) moves preferences from ``preference_queue`` into the database,
    under ``lock``, while this one trains; an error there reaches the main loop (``_check_drain``).
    """

    def __init__(self, cfg: RunConfig, obs_shape: tuple, preference_queue, weights_channels: list,
                 stop_event, gathering_done, run_dir: str, collect_only: bool, log=print,
                 predictor_version=None, db_size=None, pair_updates=None):
        self.cfg, self.obs_shape, self.collect_only, self.log = cfg, obs_shape, collect_only, log
        self.preference_queue, self.weights_channels = preference_queue, weights_channels
        self.stop_event, self.gathering_done = stop_event, gathering_done
        self.predictor_version, self.db_size, self.pair_updates = predictor_version, db_size, pair_updates
        self.run_dir = Path(run_dir)
        self.prefs_path, self.ckpt_path = RunPaths(run_dir).prefs, RunPaths(run_dir).predictor
        self.lock = threading.Lock()
        self.received = 0  # preferences received, this sitting
        self.online = 0  # training steps beside the policy (after pretraining), this sitting
        self.drain_done = threading.Event()
        self.drain_error: BaseException | None = None
        self.db: PrefDB | None = None
        self.trainer: RewardTrainer | None = None
        self.logger = None
        self.thread: threading.Thread | None = None
        self.last_ckpt = self.last_log = 0.0
        self.kernels: str | None = None  # the TensorFlow kernel library, as start() found it

    def run(self) -> dict:
        self.start()
        try:
            if self.collect_only:
                self._wait_for_initial_prefs()
            elif self._load_or_pretrain():
                while not self.stop_event.is_set():
                    self.step()
        finally:
            figures = self.close()
        return figures

    # ---- start ----------------------------------------------------------------------------------
    def start(self) -> None:
        """TensorFlow configured, the database loaded (or a new one), the drain thread started."""
        from drlhp.runtime.metrics import MetricsLogger
        from drlhp.runtime.tf_setup import configure_tensorflow, kernels_in_use

        cfg, p = self.cfg, self.cfg.prefs
        configure_tensorflow(cfg.reward.tf_intra_threads, 1, seed=cfg.seed, onednn=cfg.reward.onednn)
        self.kernels = kernels_in_use()
        if not self.collect_only:
            self.log(f"[reward] TensorFlow kernels: {self.kernels}", flush=True)
        source = prefs_to_load(cfg, self.run_dir)
        if source is not None:
            self.db = PrefDB.load(source, max_prefs=p.max_prefs)
            self.log(f"[reward] loaded {len(self.db)} preferences")
        else:
            self.db = PrefDB(max_prefs=p.max_prefs, seed=cfg.seed)
        self._show_db_size()
        self.thread = threading.Thread(target=self._drain_preferences, name="preference-drain", daemon=True)
        self.thread.start()
        self.logger = MetricsLogger(self.run_dir, tb_subdir=RunPaths.TB / "reward", csv_name="progress_reward.csv")
        if not self.collect_only:
            self.trainer = RewardTrainer(self.obs_shape, cfg.reward, self.db, self.lock, seed=cfg.seed)

    def _load_or_pretrain(self) -> bool:
        """Load the predictor to start from, or wait for the initial preferences and pretrain (also
        finishes this run's pretraining if it was stopped midway); then publish. False: stopped first."""
        cfg, trainer = self.cfg, self.trainer
        loaded = predictor_to_load(cfg, self.run_dir)
        if loaded:
            meta = trainer.load(loaded)
            self.log(f"[reward] loaded predictor {meta['path']} (step {trainer.steps})", flush=True)
        elif not self._wait_for_initial_prefs():
            return False
        if not loaded or (not cfg.load_reward_predictor_ckpt_dir and trainer.pretraining_unfinished):
            self.gathering_done.set()  # the policy stops its random play while we pretrain
            trainer.pretrain(cfg.reward.n_initial_epochs, log=lambda s: self.log(s, flush=True),
                             should_stop=self.stop_event.is_set, on_eval=self.logger.log)
            trainer.save(self.ckpt_path)
        self.gathering_done.set()
        self._publish()
        self.last_ckpt = self.last_log = time.monotonic()
        return True

    def _wait_for_initial_prefs(self) -> bool:
        p, last = self.cfg.prefs, 0.0
        while self._n_prefs() < p.n_initial_prefs:
            self._check_drain()
            if self.stop_event.is_set() or self.drain_done.is_set():
                return False
            if time.monotonic() - last > max(self.cfg.log_interval, 2):
                last = time.monotonic()
                self.log(f"[reward] initial preferences: {self._n_prefs()}/{p.n_initial_prefs}", flush=True)
            time.sleep(0.1)
        return True

    # ---- step -----------------------------------------------------------------------------------
    def step(self) -> None:
        """One training step beside the policy, with what falls due after it: publish, evaluate,
        checkpoint, pacing (--reward_train_fraction) and the metrics line."""
        cfg, trainer = self.cfg, self.trainer
        self._check_drain()
        if trainer.db.n_train == 0:
            time.sleep(0.1)
            return
        t0 = time.perf_counter()
        losses, accs = trainer.train_step()
        step_s = time.perf_counter() - t0
        self.online += 1
        if self.pair_updates is not None:
            self.pair_updates.value += cfg.reward.batch_size
        if trainer.steps % cfg.reward.publish_interval == 0:
            self._publish()
        if trainer.steps % cfg.reward.eval_interval == 0:
            trainer.evaluate()
        now = time.monotonic()
        if now - self.last_ckpt > cfg.reward.ckpt_interval_s:
            trainer.save(self.ckpt_path)
            self.last_ckpt = now
        if cfg.reward.train_fraction < 1.0:  # paced: all of this step's work counts, not only training
            self.stop_event.wait((time.perf_counter() - t0) * (1.0 / cfg.reward.train_fraction - 1.0))
        if now - self.last_log > cfg.log_interval:
            self.last_log = now
            self._log_metrics(losses, accs, step_s)

    def _publish(self) -> None:
        weights = self.trainer.publish()
        for ch in self.weights_channels:
            ch.publish(weights)
        if self.predictor_version is not None:
            self.predictor_version.value = weights.version

    def _log_metrics(self, losses: np.ndarray, accs: np.ndarray, step_s: float) -> None:
        from drlhp.runtime.metrics import memory_mb

        db, trainer = self.db, self.trainer
        with self.lock:
            db_figures = {"prefs/db_size": len(db), "prefs/db_train": db.n_train, "prefs/db_val": db.n_val,
                          "prefs/db_segments": db.n_segments, "prefs/db_mb": db.nbytes / 2**20}
        self.logger.log(trainer.steps, {
            **trainer.last_eval, **db_figures,
            "reward/batch_loss": float(losses.mean()), "reward/batch_accuracy": float(accs.mean()),
            "reward/published_version": trainer.ensemble.version, "reward/train_steps": trainer.steps,
            "reward/train_step_ms": 1e3 * step_s, "prefs/received": self.received,
            "reward/online_steps": self.online,
            "system/memory_mb_reward": memory_mb()})

    # ---- close ----------------------------------------------------------------------------------
    def close(self) -> dict:
        """Wait for the preference interface's sentinel (no preference is lost; shorter once the parent
        is gone), save the database and the predictor; the figures for the summary."""
        from drlhp.runtime.launcher import parent_gone

        self.thread.join(timeout=4 if parent_gone() else 15)
        self._save_db()
        figures = {}
        trainer = self.trainer
        if trainer is not None and trainer.steps > 0:  # nothing trained (stopped while gathering): no
            trainer.evaluate()                           # checkpoint, or a resume would skip pretraining
            trainer.save(self.ckpt_path)
            self.logger.log(trainer.steps, trainer.last_eval)
            figures = {"predictor_val_accuracy": trainer.last_eval.get("reward/val_accuracy"),
                       "predictor_train_steps": trainer.steps, "predictor_online_steps": self.online,
                       "predictor_online_pair_updates": self.online * self.cfg.reward.batch_size,
                       "predictor_pretrain_steps": trainer.pretrain_target,
                       "predictor_kernels": self.kernels}
        self.logger.close()
        return {"n_preferences": len(self.db), **figures}

    # ---- the preference drain (its own thread) --------------------------------------------------
    def _drain_preferences(self) -> None:
        """Receive preferences until the sentinel (or, once stopping, 10 s of silence; 2 s once the
        parent is gone, to exit within its PARENT_GONE_EXIT_S)."""
        from drlhp.runtime.launcher import parent_gone

        quiet_since = None
        try:
            while True:
                try:
                    pref = self.preference_queue.get(timeout=0.5)
                except queue_lib.Empty:
                    if self.stop_event.is_set():
                        quiet_since = quiet_since or time.monotonic()
                        if time.monotonic() - quiet_since > (2 if parent_gone() else 10):
                            return
                    continue
                if pref is None:
                    return
                quiet_since = None
                with self.lock:
                    self.db.add(pref)
                    self._show_db_size()
                self.received += 1
                if self.received % self.cfg.prefs.prefs_save_interval == 0:
                    self._save_db()
        except BaseException as e:  # reaches the main loop, which re-raises it
            self.drain_error = e
        finally:
            self.drain_done.set()

    def _check_drain(self) -> None:
        if self.drain_error is not None:
            raise self.drain_error

    def _n_prefs(self) -> int:
        with self.lock:
            return len(self.db)

    def _show_db_size(self) -> None:
        if self.db_size is not None:
            self.db_size.value = len(self.db)

    def _save_db(self) -> None:
        with self.lock:
            self.db.save(self.prefs_path)

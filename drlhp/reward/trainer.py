"""Training the reward predictor on the preference database: the ensemble, its L2 coefficients and
bootstrap samples, pretraining (with its early stop), evaluation and publication of weights.

The process around it: drlhp.reward.process; its checkpoints' format: drlhp.reward.checkpoint.
"""
from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np

from drlhp.config.reward import RewardConfig
from drlhp.reward.checkpoint import PredictorCheckpointError, load_predictor, save_predictor
from drlhp.reward.pref_db import PrefDB


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
INPUT_NORM_GROWTH = 0.25  # float inputs: their normalization is set again once this share of rows is new


class RewardTrainer:
    """The ensemble, its L2 coefficients and bootstrap weights, trained on a PrefDB held under a lock.

    Float32 inputs (a Box-action env's observation and action, ``obs_dtype``): the members' input
    normalization is set from every row the database holds (each stored step) before the first training
    step of each sitting, and again whenever the rows stored since the last set reach INPUT_NORM_GROWTH (25%)
    of the rows held then (the database grown by 25%, or, once at its bound, a quarter of it replaced); a later
    set rescales each member's first layer so that its rewards stay as they were (keep_function);
    ``input_norm_sets`` counts the sets (metric reward/input_norm_sets)."""

    def __init__(self, obs_shape: tuple, cfg: RewardConfig, db: PrefDB, lock: threading.Lock, seed: int,
                 obs_dtype=np.uint8):
        from drlhp.reward.model import RewardEnsemble

        self.cfg, self.db, self.lock = cfg, db, lock
        self.ensemble = RewardEnsemble(obs_shape, cfg, seed, obs_dtype)
        self.input_norm_sets = 0
        self._norm_at: tuple[int, int] | None = None  # (rows stored ever, rows held) at the last set
        self.l2 = np.full(cfg.n_members, cfg.l2_init, np.float32)
        self.rng = np.random.default_rng(seed + 7)
        # bootstrap: per training entry (by order, ascending), a Poisson(1) count per member
        self._boot_orders = np.zeros(0, np.int64)
        self._boot_counts = np.zeros((0, cfg.n_members), np.int64)
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
        saved = meta.get("obs_dtype", "uint8")  # absent: saved before float inputs existed
        if saved != self.ensemble.obs_dtype.name:
            raise PredictorCheckpointError(f"reward predictor checkpoint {meta['path']} is of {saved} observations, "
                                           f"this run's are {self.ensemble.obs_dtype.name}")
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
                       {"steps": self.steps, "version": self.ensemble.version, "n_members": self.cfg.n_members,
                        "obs_dtype": self.ensemble.obs_dtype.name,
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
        counts = np.concatenate([counts, self.rng.poisson(1.0, (len(new), self.cfg.n_members))])
        if len(orders) != n or (n and orders[0] != entries[0].order):  # removed from the middle (review tool)
            kept = dict(zip(orders.tolist(), counts))
            orders = np.array([e.order for e in entries], np.int64)
            counts = np.array([kept.get(o, self.rng.poisson(1.0, self.cfg.n_members)) for o in orders.tolist()],
                              np.int64).reshape(n, self.cfg.n_members)
        self._boot_orders, self._boot_counts = orders, counts

    def _member_indices(self, size: int | None = None) -> np.ndarray:
        """(members, size) training indices (default: batch_size), each member's drawn from its own
        bootstrap sample (uniformly, if its sample is empty)."""
        size = size or self.cfg.batch_size
        out = np.empty((self.cfg.n_members, size), np.int64)
        n = len(self._boot_orders)
        for m in range(self.cfg.n_members):
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
                return np.full(self.cfg.n_members, np.nan), np.full(self.cfg.n_members, np.nan)
            self._sync_bootstrap(entries)
            self._maybe_set_input_norm()
            s1, s2, mu = self.db.batches("train", self._member_indices())  # (members, B, T, ...)
        losses, accs = self.ensemble.train_step(s1, s2, mu, self.l2)
        self.steps += 1
        return losses, accs

    def _maybe_set_input_norm(self) -> None:
        """Float inputs: set the members' input normalization from the database's rows when due (the class
        docstring). Caller holds the lock."""
        if not self.ensemble.has_input_norm:
            return
        stored, held = self.db.n_obs_rows_stored, self.db.n_obs_rows
        if self._norm_at is not None and stored - self._norm_at[0] < INPUT_NORM_GROWTH * self._norm_at[1]:
            return
        rows = self.db.obs_rows()
        self.ensemble.set_input_norm(rows.mean(axis=0, dtype=np.float64), rows.std(axis=0, dtype=np.float64),
                                     keep_function=self.steps > 0)  # a trained member keeps its rewards
        self._norm_at = (stored, held)
        self.input_norm_sets += 1

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

        m_count = self.cfg.n_members
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
        if self.ensemble.has_input_norm:
            out["reward/input_norm_sets"] = self.input_norm_sets
        self.last_eval = out
        return out

    def publish(self):
        """Normalization statistics moved towards those of the newest segments' frames (by
        norm_momentum), then the weights. The first publication sets them from 10x as many segments:
        20 clips of 25 correlated steps measured a Pong predictor's spread 6x too small (docs/results/pong.md,
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
            + f" of {cfg.batch_size} pairs x {cfg.n_members} members" + rule)
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

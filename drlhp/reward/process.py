"""The reward-predictor process: it receives preferences and trains the predictor on them (drlhp.reward.trainer).

    drain thread: preference_queue -> (with lock) PrefDB.add; save every prefs_save_interval
    main loop:    wait for n_initial_prefs -> pretrain n_initial_epochs -> publish
                  then train continuously: every publish_interval steps publish the weights
                  (with fresh normalization stats); every eval_interval steps validate and
                  adapt L2; every ckpt_interval_s save a checkpoint
    on stop:      drain the remaining preferences (until the sentinel), save DB + checkpoint

Files: <run_dir>/prefs/prefs.npz (drlhp.reward.pref_db) and <run_dir>/reward_predictor/reward_predictor.npz
(drlhp.reward.checkpoint).
"""
from __future__ import annotations

import queue as queue_lib
import threading
import time
from pathlib import Path

import numpy as np

from drlhp.config import RunConfig
from drlhp.processes.lifeline import parent_gone
from drlhp.processes.ports import PredictorPorts
from drlhp.records.run_paths import RunPaths
from drlhp.reward.checkpoint import predictor_to_load, prefs_to_load
from drlhp.reward.fresh_labels import FreshLabels
from drlhp.reward.pref_db import PrefDB
from drlhp.reward.trainer import RewardTrainer


def run_reward_predictor(cfg: RunConfig, ports: PredictorPorts, run_dir: str, log=print, *,
                         predictor_input: tuple) -> dict:
    """The reward-predictor process (see the module docstring and RewardPredictorProcess). ``predictor_input``:
    (obs_shape, obs_dtype) of the predictor's per-step input (envs.predictor_input, worked out by drlhp.run.roles)."""
    return RewardPredictorProcess(cfg, ports, run_dir, predictor_input, log=log).run()


class RewardPredictorProcess:
    """The reward-predictor process's main loop: ``run`` = ``start``, then ``step`` until the stop event,
    then ``close``; returns its figures for the summary.

    ``ports`` (drlhp.processes.ports.PredictorPorts): preferences in (``preference_queue``), weights out
    (``weights_to_policy``, and ``weights_to_prefs`` with --query_selection variance), ``random_play_over``
    set when pretraining starts; ``predictor_version``, ``db_size``: shared integers kept up to date for
    the labelling window; ``pair_updates``: one the policy reads (--reward_updates_per_step): pairs
    trained on per member since pretraining ended. In gather_initial_prefs mode (``collect_only``) it
    stores preferences until n_initial_prefs, saves the database and returns.

    A thread (``_drain_preferences``) moves preferences from ``preference_queue`` into the database,
    under ``lock``, while this one trains; an error there reaches the main loop (``_check_drain``).
    """

    def __init__(self, cfg: RunConfig, ports: PredictorPorts, run_dir: str, predictor_input: tuple, log=print):
        self.cfg, self.log = cfg, log
        self.obs_shape, self.obs_dtype = tuple(predictor_input[0]), np.dtype(predictor_input[1])  # uint8 or float32
        self.collect_only = cfg.gathers
        self.ports = ports
        self.run_dir = Path(run_dir)
        self.prefs_path, self.ckpt_path = RunPaths(run_dir).prefs, RunPaths(run_dir).predictor
        self.lock = threading.Lock()
        self.received = 0  # preferences received, this sitting
        self.online = 0  # training steps beside the policy (after pretraining), this sitting
        self.fresh = FreshLabels()  # its agreement with each label that arrives once it trains beside the policy
        self.scoring = False  # set once the first weights are published: from then on new labels are scored
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
                while not self.ports.stop_event.is_set():
                    self.step()
        finally:
            figures = self.close()
        return figures

    # ---- start ----------------------------------------------------------------------------------
    def start(self) -> None:
        """TensorFlow configured, the database loaded (or a new one), the drain thread started."""
        from drlhp.processes.tf_setup import configure_tensorflow, kernels_in_use
        from drlhp.records.metrics import MetricsLogger

        cfg, p = self.cfg, self.cfg.prefs
        configure_tensorflow(cfg.reward.tf_threads, 1, seed=cfg.seed, onednn=cfg.reward.onednn)
        self.kernels = kernels_in_use()
        if not self.collect_only:
            self.log(f"[reward] TensorFlow kernels: {self.kernels}", flush=True)
        source = prefs_to_load(cfg, self.run_dir)
        if source is not None:
            self.db = PrefDB.load(source, max_prefs=p.max_prefs)
            if self.db.obs_dtype not in (None, self.obs_dtype):
                raise ValueError(f"the preference database {source} holds {self.db.obs_dtype} observations, "
                                 f"this env's predictor takes {self.obs_dtype}")
            self.log(f"[reward] loaded {len(self.db)} preferences")
        else:
            self.db = PrefDB(max_prefs=p.max_prefs, seed=cfg.seed)
        self._show_db_size()
        self.thread = threading.Thread(target=self._drain_preferences, name="preference-drain", daemon=True)
        self.thread.start()
        self.logger = MetricsLogger(self.run_dir, tb_subdir=RunPaths.TB / "reward", csv_name=RunPaths.PROGRESS_REWARD)
        if not self.collect_only:
            self.trainer = RewardTrainer(self.obs_shape, cfg.reward, self.db, self.lock, seed=cfg.seed,
                                         obs_dtype=self.obs_dtype)

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
            self.ports.random_play_over.set()  # the policy stops its random play while we pretrain
            trainer.pretrain(cfg.reward.n_initial_epochs, log=lambda s: self.log(s, flush=True),
                             should_stop=self.ports.stop_event.is_set, on_eval=self.logger.log)
            trainer.save(self.ckpt_path)
        self.ports.random_play_over.set()
        self._publish()
        self.scoring = True
        self.last_ckpt = self.last_log = time.monotonic()
        return True

    def _wait_for_initial_prefs(self) -> bool:
        p, last = self.cfg.prefs, 0.0
        while self._n_prefs() < p.n_initial_prefs:
            self._check_drain()
            if self.ports.stop_event.is_set() or self.drain_done.is_set():
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
        if self.ports.pair_updates is not None:
            self.ports.pair_updates.value += cfg.reward.batch_size
        if trainer.steps % cfg.reward.publish_interval == 0:
            self._publish()
        if trainer.steps % cfg.reward.eval_interval == 0:
            trainer.evaluate()
        now = time.monotonic()
        if now - self.last_ckpt > cfg.reward.ckpt_interval_s:
            trainer.save(self.ckpt_path)
            self.last_ckpt = now
        if cfg.reward.train_fraction < 1.0:  # paced: all of this step's work counts, not only training
            self.ports.stop_event.wait((time.perf_counter() - t0) * (1.0 / cfg.reward.train_fraction - 1.0))
        if now - self.last_log > cfg.log_interval:
            self.last_log = now
            self._log_metrics(losses, accs, step_s)

    def _publish(self) -> None:
        weights = self.trainer.publish()
        for channel in (self.ports.weights_to_policy, self.ports.weights_to_prefs):
            if channel is not None:
                channel.publish(weights)
        if self.ports.predictor_version is not None:
            self.ports.predictor_version.value = weights.version

    def _log_metrics(self, losses: np.ndarray, accs: np.ndarray, step_s: float) -> None:
        from drlhp.records.metrics import memory_mb

        db, trainer = self.db, self.trainer
        with self.lock:
            db_figures = {"prefs/db_size": len(db), "prefs/db_train": db.n_train, "prefs/db_val": db.n_val,
                          "prefs/db_segments": db.n_segments, "prefs/db_mb": db.nbytes / 2**20}
        self.logger.log(trainer.steps, {
            **trainer.last_eval, **db_figures,
            "reward/batch_loss": float(losses.mean()), "reward/batch_accuracy": float(accs.mean()),
            "reward/published_version": trainer.ensemble.version, "reward/train_steps": trainer.steps,
            "reward/train_step_ms": 1e3 * step_s, "prefs/received": self.received,
            "reward/online_steps": self.online, **self.fresh.metrics(),
            "system/memory_mb_reward": memory_mb()})

    # ---- close ----------------------------------------------------------------------------------
    def close(self) -> dict:
        """Wait for the preference interface's sentinel (no preference is lost; shorter once the parent
        is gone), save the database and the predictor; the figures for the summary."""
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
                       "predictor_kernels": self.kernels,
                       "predictor_precision": trainer.ensemble.precision.describe(), **self.fresh.summary()}
        self.logger.close()
        return {"n_preferences": len(self.db), **figures}

    # ---- the preference drain (its own thread) --------------------------------------------------
    def _drain_preferences(self) -> None:
        """Receive preferences until the sentinel (or, once stopping, 10 s of silence; 2 s once the
        parent is gone, to exit within its PARENT_GONE_EXIT_S)."""
        quiet_since = None
        try:
            while True:
                try:
                    pref = self.ports.preference_queue.get(timeout=0.5)
                except queue_lib.Empty:
                    if self.ports.stop_event.is_set():
                        quiet_since = quiet_since or time.monotonic()
                        if time.monotonic() - quiet_since > (2 if parent_gone() else 10):
                            return
                    continue
                if pref is None:
                    return
                quiet_since = None
                if self.scoring:  # before the database holds it: no training step has seen it
                    self.fresh.score(self.trainer.ensemble, pref)
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
        if self.ports.db_size is not None:
            self.ports.db_size.value = len(self.db)

    def _save_db(self) -> None:
        with self.lock:
            self.db.save(self.prefs_path)

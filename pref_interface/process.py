"""The preference-interface process.

    loop until stop:
        segments <- segment_queue (all waiting; into the pool of recent segments)
        while labels given < schedule.allowed(frames the policy has played):
            pair <- pool.select(random | variance)
            mu <- labeller.label(pair)            (None: "can't tell", discarded)
            preference_queue <- Preference(pair, mu)   (blocking: never dropped)
    at exit: a None sentinel on preference_queue ("no more preferences")
"""
from __future__ import annotations

import time

from drlhp.config import RunConfig
from drlhp.messages import Preference
from drlhp.queues import drain, put_blocking
from pref_interface.pool import SegmentPool
from pref_interface.schedule import LabelSchedule


def make_labeller(cfg: RunConfig):
    if cfg.prefs.synthetic_prefs:
        from pref_interface.oracle import SyntheticOracle

        return SyntheticOracle()
    raise RuntimeError("the human labelling GUI is not built yet; pass --synthetic_prefs")


class _VarianceScorer:
    """The ensemble's P[s1 > s2] per member, from the newest published weights."""

    def __init__(self, cfg: RunConfig, weights_channel):
        self.cfg, self.channel, self.ensemble = cfg, weights_channel, None

    def probs_fn(self, obs_shape: tuple):
        """preference_probs of the newest weights, or None before the first publication."""
        weights = self.channel.poll()
        if weights is not None:
            if self.ensemble is None:
                from drlhp.reward_model import RewardEnsemble
                from drlhp.tf_setup import configure_tensorflow

                configure_tensorflow(1, 1, seed=self.cfg.seed)
                self.ensemble = RewardEnsemble(obs_shape, self.cfg.reward, seed=self.cfg.seed)
            self.ensemble.load_weights(weights)
        return None if self.ensemble is None else self.ensemble.preference_probs


def run_pref_interface(cfg: RunConfig, frames_per_step: int, segment_queue, preference_queue, weights_channel,
                       stop_event, run_dir: str, log=print) -> dict:
    from drlhp.metrics import MetricsLogger, memory_mb

    p = cfg.prefs
    labeller = make_labeller(cfg)
    pool = SegmentPool(p.segment_pool_size, seed=cfg.seed + 1)
    n_initial = 0 if (cfg.load_prefs_dir or cfg.load_reward_predictor_ckpt_dir) else p.n_initial_prefs
    n_labels = p.n_labels if cfg.mode == "train_policy_with_preferences" else 0
    schedule = LabelSchedule(p.label_schedule, n_initial, n_labels, cfg.total_timesteps * frames_per_step)
    scorer = _VarianceScorer(cfg, weights_channel) if p.query_selection == "variance" else None
    logger = MetricsLogger(run_dir, tb_subdir="tb/prefs", csv_name="progress_prefs.csv")
    given = discarded = received = 0
    policy_step = 0
    t_start = last_log = time.perf_counter()
    given_at_last_log = 0
    try:
        while not stop_event.is_set():
            for seg in drain(segment_queue, max_items=256):
                pool.add(seg)
                received += 1
                policy_step = max(policy_step, seg.step)
            asked_one = False
            if given < schedule.allowed(policy_step * frames_per_step):
                probs_fn = scorer.probs_fn(pool.obs_shape) if scorer is not None and len(pool) else None
                pair = pool.select(p.query_selection, p.variance_candidates, probs_fn)
                if pair is not None:
                    asked_one = True
                    pool.mark_asked(*pair)
                    mu = labeller.label(*pair)
                    if mu is None:
                        discarded += 1
                    elif put_blocking(preference_queue, Preference(pair[0], pair[1], mu).check(), stop_event):
                        given += 1
            if not asked_one:
                time.sleep(0.02)
            now = time.perf_counter()
            if now - last_log >= cfg.log_interval:
                logger.log(policy_step, {
                    "prefs/labels_given": given, "prefs/labels_discarded": discarded,
                    "prefs/labels_per_minute": 60.0 * (given - given_at_last_log) / (now - last_log),
                    "prefs/labels_allowed": schedule.allowed(policy_step * frames_per_step),
                    "prefs/pairs_asked": pool.n_asked, "prefs/segments_received": received,
                    "system/segment_pool_size": len(pool), "system/segment_queue_size": _qsize(segment_queue),
                    "system/preference_queue_size": _qsize(preference_queue),
                    "system/memory_mb_prefs": memory_mb(),
                })
                last_log, given_at_last_log = now, given
    finally:
        if not put_blocking(preference_queue, None, stop_event, poll_s=2.0):  # "no more preferences"
            preference_queue.cancel_join_thread()  # the predictor is gone: do not hang on exit
        logger.close()
    return {"labels_given": given, "pairs_asked": pool.n_asked,
            "labels_per_minute": round(60.0 * given / max(1e-9, time.perf_counter() - t_start), 1)}


def _qsize(q) -> float | None:
    try:
        return float(q.qsize())  # approximate; not available on every platform
    except NotImplementedError:
        return None

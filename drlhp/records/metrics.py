"""One metrics logger per process: TensorBoard events (via easy-tf-log) and ``progress.csv``; and a
run's HParams record.

Scalar names are namespaced by role: ``policy/``, ``reward/``, ``prefs/``, ``system/``. The policy also
logs the usual Stable-Baselines3 names (``rollout/ep_rew_mean``, ``rollout/ep_len_mean``,
``rollout/success_rate``, ``train/entropy_loss``, ``time/fps``; ``drlhp.policy.loop``), so runs can
be compared with SB3's in one TensorBoard.

``write_hparams``: at the end of a policy's training, the run's config (flattened, ``a2c.lr``) and its
final figures (``HPARAM_METRICS``) go to TensorBoard's HParams tab, through
``tensorboard.plugins.hparams.api`` and a ``tf.summary`` writer, in the process that trains the policy
(it has TensorFlow already; the parent process of the three-process modes never imports it).

easy-tf-log 1.12 imports ``tensorflow.python._pywrap_events_writer``, which current TensorFlow
moved to ``tensorflow.python.client._pywrap_events_writer``; ``import_easy_tf_log`` aliases the
old name before importing it. Import easy_tf_log only through this function.
"""
from __future__ import annotations

import csv
import math
import os
import sys
from pathlib import Path

import psutil

from drlhp.records.run_paths import RunPaths


def import_easy_tf_log():
    """Import easy_tf_log on current TensorFlow (see the module docstring)."""
    old_name = "tensorflow.python._pywrap_events_writer"
    if old_name not in sys.modules:
        from tensorflow.python.client import _pywrap_events_writer

        sys.modules[old_name] = _pywrap_events_writer
    import easy_tf_log

    return easy_tf_log


class MetricsLogger:
    def __init__(self, run_dir: str | os.PathLike, tb_subdir: str | os.PathLike = RunPaths.TB,
                 csv_name: str | os.PathLike = RunPaths.PROGRESS):
        self.run_dir = Path(run_dir)
        self._tb = import_easy_tf_log().Logger(log_dir=str(self.run_dir / tb_subdir))
        self.csv_path = self.run_dir / csv_name
        self._columns: list[str] = []
        if self.csv_path.exists():
            with open(self.csv_path, newline="") as f:
                self._columns = next(csv.reader(f), [])

    def log(self, step: int, scalars: dict[str, float]) -> None:
        """Write every scalar at this step (agent steps) to TensorBoard and one row to progress.csv."""
        for key, value in scalars.items():
            if value is not None and math.isfinite(float(value)):
                self._tb.logkv(key, float(value), step=int(step))
        row = {"step": int(step), **{k: ("" if v is None else float(v)) for k, v in scalars.items()}}
        new_columns = [k for k in row if k not in self._columns]
        if new_columns:
            self._rewrite_with(self._columns + new_columns)
        with open(self.csv_path, "a", newline="") as f:
            csv.DictWriter(f, fieldnames=self._columns).writerow(row)

    def _rewrite_with(self, columns: list[str]) -> None:
        rows = []
        if self.csv_path.exists():
            with open(self.csv_path, newline="") as f:
                rows = list(csv.DictReader(f))
        tmp = self.csv_path.with_suffix(".csv.tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=columns)
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, self.csv_path)
        self._columns = columns

    def close(self) -> None:
        self._tb.close()


def memory_mb() -> float:
    """Resident memory of this process, in MiB."""
    return psutil.Process().memory_info().rss / 2**20


# The final figures of a run in TensorBoard's HParams tab: (tag, summary.json key, what it is).
HPARAM_METRICS = (
    ("hparams/true_return_last100", "true_return_last100", "true return, mean of the last 100 episodes"),
    ("hparams/success_rate_last100", "success_rate_last100", "success rate of the last 100 episodes"),
    ("hparams/timesteps", "timesteps", "agent steps trained"),
)


def _hparam_value(v):
    """A config value as the HParams plugin takes it: bool, int, float or str (None and lists as text)."""
    if isinstance(v, (bool, int, float, str)):
        return v
    return "None" if v is None else str(v)


def write_hparams(log_dir: str | os.PathLike, config: dict, summary: dict, trial_id: str | None = None) -> None:
    """The run's ``config`` (nested dicts flattened: ``a2c.lr``) as hyper-parameters and the figures of
    ``summary`` named in HPARAM_METRICS (those it has) as their metrics, into TensorBoard events in
    ``log_dir`` (the policy's ``tb/``, beside its curves). Imports TensorFlow: call it only in a process
    that has it."""
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp

    from drlhp.records.run_record import flatten

    hparams = {k: _hparam_value(v) for k, v in sorted(flatten(config).items())}
    step = int(summary.get("timesteps") or 0)
    writer = tf.summary.create_file_writer(str(log_dir))
    try:
        with writer.as_default():
            hp.hparams_config(hparams=[hp.HParam(k) for k in hparams],
                              metrics=[hp.Metric(tag, display_name=key, description=text)
                                       for tag, key, text in HPARAM_METRICS])
            hp.hparams(hparams, trial_id=trial_id)
            for tag, key, _ in HPARAM_METRICS:
                value = summary.get(key)
                if value is not None and math.isfinite(float(value)):
                    tf.summary.scalar(tag, float(value), step=step)
        writer.flush()
    finally:
        writer.close()

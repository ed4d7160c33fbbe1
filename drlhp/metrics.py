"""One metrics logger per process: TensorBoard events (via easy-tf-log) and ``progress.csv``.

Scalar names are namespaced by role: ``policy/``, ``reward/``, ``prefs/``, ``system/``.
"""
from __future__ import annotations

import csv
import math
import os
from pathlib import Path

import psutil

from drlhp.tf_setup import import_easy_tf_log


class MetricsLogger:
    def __init__(self, run_dir: str | os.PathLike, tb_subdir: str = "tb", csv_name: str = "progress.csv"):
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

"""TensorFlow's own lines off a benchmark's terminal, as run.py keeps them off a run's: every script in bench/
that imports TensorFlow in its own process imports this module first (``import quiet  # noqa: F401``; a
script's own folder is on sys.path), before TensorFlow.

Importing drlhp sets drlhp's default TF_CPP_MIN_LOG_LEVEL (2: no info or warning from TensorFlow's own logging;
drlhp/__init__.py). That does not reach absl's lines (the oneDNN notice, ``WARNING: All log messages before
absl::InitializeLog() ...``: drlhp.processes.tf_setup says why), so this module also points fd 2 at a pipe that a
thread copies to the real stderr through drlhp.processes.output_tee.TfLogFilter, the filter of run.py's output tee:
TensorFlow's and absl's lines are dropped, anything else (a traceback, a fatal line) passes. Child processes
that inherit fd 2 go through it too. DRLHP_TF_LOGS=1 shows everything (no filter). At exit fd 2 is restored
and what is left in the pipe is written out (OutputTee.close).
"""
from __future__ import annotations

import atexit
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import drlhp  # noqa: E402,F401  (sets TF_CPP_MIN_LOG_LEVEL's default before any TensorFlow import)
from drlhp.processes.output_tee import OutputTee  # noqa: E402
from drlhp.processes.tf_setup import tf_logs_shown  # noqa: E402


def filter_stderr() -> None:
    """Fd 2 through TfLogFilter until exit (run.py's OutputTee with no run directory: no logs, stderr only; once
    per process; nothing with DRLHP_TF_LOGS=1)."""
    if tf_logs_shown() or getattr(filter_stderr, "done", False):
        return
    filter_stderr.done = True
    atexit.register(OutputTee(None).close)


filter_stderr()

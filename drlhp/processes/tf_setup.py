"""TensorFlow set-up in one place: quiet logs, thread pools per process, seeds, the CPU kernel library
(oneDNN or Eigen: drlhp.processes.cpu.choose_kernels). The easy-tf-log import fix: drlhp.records.metrics.

Quiet logs. TensorFlow's C++ side writes its own lines to stderr in absl's format
(``I0000 00:00:1795681165.27 8161 port.cc:153] oneDNN custom operations are on ...``), and until
something calls ``absl::InitializeLog()`` (nothing in TensorFlow's Python package does) absl writes
every one of them, whatever TF_CPP_MIN_LOG_LEVEL says (measured: 2 and 3 alike), after ``WARNING: All
log messages before absl::InitializeLog() is called are written to STDERR``. Each process prints that
pair twice (at import and again seconds later), and the reward predictor's training step adds
``E0000 ... meta_optimizer.cc:967] remapper failed: INVALID_ARGUMENT ...`` where grappler's remapper
cannot fuse the convolution's gradient: harmless (grappler keeps the graph as it was before a failed
pass, meta_optimizer.cc's RunOptimizer), so the remapper stays on for the fusions that succeed.
No setting reaches absl from Python, so a run's output tee (drlhp.processes.output_tee) leaves these
lines out of what reaches the terminal (``is_tf_log_line``), whichever process wrote them (a Ray
worker's reach the parent with a "(... pid=N) " prefix, which the pattern allows; not tested here);
<run_dir>/stderr.log keeps them. A fatal line (``F0000``) and anything else, tracebacks included,
always shows. DRLHP_TF_LOGS=1 shows them (``tf_logs_shown``); TF_CPP_MIN_LOG_LEVEL (drlhp's default
2: no info or warning from TensorFlow's own logging) is the user's where set.
"""
from __future__ import annotations

import os
import random
import re
import sys

from drlhp.processes.cpu import KernelChoice, choose_kernels, default_kernels

TF_LOGS_ENV = "DRLHP_TF_LOGS"  # "1": TensorFlow's and absl's own lines reach the terminal too
_TF_LOG_LINE = re.compile(
    rb"(?:(?:\x1b\[[0-9;]*m)*\([^()\n]*pid=\d+[^()\n]*\)(?:\x1b\[[0-9;]*m)* )?"  # a Ray worker's prefix
    rb"(?:[IWE]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [^\s\]]+:\d+\] "  # absl: severity, mmdd, time, thread, file:line
    rb"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags"
    rb"|(?:INFO|WARNING):absl:)")  # absl's Python logging


def tf_logs_shown() -> bool:
    """Whether TensorFlow's and absl's own lines should reach the terminal (DRLHP_TF_LOGS=1)."""
    return os.environ.get(TF_LOGS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def is_tf_log_line(line: bytes) -> bool:
    """Whether ``line`` (bytes, without its newline) is one TensorFlow or absl wrote of itself, not drlhp: an
    info, warning or error line in absl's format (a fatal one is not: it says why the process aborts), absl's
    warning before InitializeLog, or absl's Python logging below ERROR."""
    return _TF_LOG_LINE.match(line) is not None


_configured = False
_kernels: KernelChoice | None = None  # what configure_tensorflow chose in this process


def configure_tensorflow(intra_op_threads: int, inter_op_threads: int, seed: int | None = None,
                         onednn: bool | str | None = None):
    """Set this process's TF thread pools (before any TF op runs) and seed Python, numpy and TF.
    ``onednn``: the CPU kernel library: "auto" (by the CPU's flags: drlhp.processes.cpu.choose_kernels),
    "on" / True (oneDNN), "off" / False (Eigen); None leaves TensorFlow's default. It takes effect only
    before TensorFlow is first imported in this process (it reads TF_ENABLE_ONEDNN_OPTS then):
    ``kernels_in_use`` says what the process really runs."""
    global _configured, _kernels
    if "tensorflow" not in sys.modules:
        _kernels = default_kernels() if onednn is None else choose_kernels(onednn)
        if _kernels.onednn is not None:
            os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if _kernels.onednn else "0"
    import numpy as np
    import tensorflow as tf

    if not _configured:
        try:
            tf.config.threading.set_intra_op_parallelism_threads(intra_op_threads)
            tf.config.threading.set_inter_op_parallelism_threads(inter_op_threads)
        except RuntimeError:  # TF already initialized in this process (e.g. a second run in tests)
            pass
        _configured = True
    if seed is not None:
        random.seed(seed)
        np.random.seed(seed)
        tf.random.set_seed(seed)
    return tf


def kernels_in_use() -> str:
    """This process's TensorFlow kernel library as TensorFlow reports it ("oneDNN" or "Eigen"), with why
    (what configure_tensorflow chose; "TensorFlow was imported first" if that came too late)."""
    from tensorflow.python.util import _pywrap_util_port

    library = "oneDNN" if _pywrap_util_port.IsMklEnabled() else "Eigen"
    if _kernels is None:
        return f"{library} (TensorFlow was imported before configure_tensorflow)"
    return f"{library} ({_kernels.reason})"

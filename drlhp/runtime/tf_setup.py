"""TensorFlow set-up in one place: quiet logs, thread pools per process, seeds, the CPU kernel library
(oneDNN or Eigen: drlhp.runtime.cpu.choose_kernels) and the easy-tf-log import fix.

easy-tf-log 1.12 imports ``tensorflow.python._pywrap_events_writer``, which current TensorFlow
moved to ``tensorflow.python.client._pywrap_events_writer``; ``import_easy_tf_log`` aliases the
old name before importing it. Import easy_tf_log only through this function.
"""
from __future__ import annotations

import os
import random
import sys

from drlhp.runtime.cpu import KernelChoice, choose_kernels, default_kernels

_configured = False
_kernels: KernelChoice | None = None  # what configure_tensorflow chose in this process


def configure_tensorflow(intra_op_threads: int, inter_op_threads: int, seed: int | None = None,
                         onednn: bool | str | None = None):
    """Set this process's TF thread pools (before any TF op runs) and seed Python, numpy and TF.
    ``onednn``: the CPU kernel library: "auto" (by the CPU's flags: drlhp.runtime.cpu.choose_kernels),
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


def import_easy_tf_log():
    """Import easy_tf_log on current TensorFlow (see the module docstring)."""
    old_name = "tensorflow.python._pywrap_events_writer"
    if old_name not in sys.modules:
        from tensorflow.python.client import _pywrap_events_writer

        sys.modules[old_name] = _pywrap_events_writer
    import easy_tf_log

    return easy_tf_log

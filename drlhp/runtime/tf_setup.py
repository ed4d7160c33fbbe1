"""TensorFlow set-up in one place: quiet logs, thread pools per process, seeds, and the
easy-tf-log import fix.

easy-tf-log 1.12 imports ``tensorflow.python._pywrap_events_writer``, which current TensorFlow
moved to ``tensorflow.python.client._pywrap_events_writer``; ``import_easy_tf_log`` aliases the
old name before importing it. Import easy_tf_log only through this function.
"""
from __future__ import annotations

import os
import random
import sys

_configured = False


def configure_tensorflow(intra_op_threads: int, inter_op_threads: int, seed: int | None = None,
                         onednn: bool | None = None):
    """Set this process's TF thread pools (before any TF op runs) and seed Python, numpy and TF.
    ``onednn``: use oneDNN's CPU kernels (True) or Eigen's (False); None leaves TensorFlow's default.
    Only before TensorFlow is first imported in this process (it reads TF_ENABLE_ONEDNN_OPTS then)."""
    global _configured
    if onednn is not None and "tensorflow" not in sys.modules:
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1" if onednn else "0"
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


def import_easy_tf_log():
    """Import easy_tf_log on current TensorFlow (see the module docstring)."""
    old_name = "tensorflow.python._pywrap_events_writer"
    if old_name not in sys.modules:
        from tensorflow.python.client import _pywrap_events_writer

        sys.modules[old_name] = _pywrap_events_writer
    import easy_tf_log

    return easy_tf_log

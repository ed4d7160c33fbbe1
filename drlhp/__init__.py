"""drlhp: Deep Reinforcement Learning from Human Preferences (Christiano et al., 2017).

``drlhp.LearnedReward(env, predictor_dir)``: a gymnasium wrapper paying an env's steps with a predictor a run
trained (drlhp/learned_reward.py; ``LearnedRewardVector`` for a vector env); loaded on first use, so
``import drlhp`` stays light (no TensorFlow).
"""
import os

# Before any TensorFlow import anywhere in drlhp: fewer C++ log lines (absl's own, printed before InitializeLog,
# ignore this; run.py's output tee keeps them off the terminal: drlhp.processes.output_tee), Keras on TensorFlow.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

_LAZY = {"LearnedReward": "drlhp.learned_reward", "LearnedRewardVector": "drlhp.learned_reward",
         "SavedPredictor": "drlhp.learned_reward"}


def __getattr__(name: str):
    """The names of _LAZY, imported from their module on first use (PEP 562)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'drlhp' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])

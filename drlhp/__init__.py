"""drlhp: Deep Reinforcement Learning from Human Preferences (Christiano et al., 2017)."""
import os

# Before any TensorFlow import anywhere in drlhp: no C++ info banners, Keras on TensorFlow.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
